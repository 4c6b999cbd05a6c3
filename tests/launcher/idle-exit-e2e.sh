#!/usr/bin/env bash
# System test: --idle-exit holds when the coordinator goes away. A launcher
# with nothing to do whose coordinator is killed under a held claim leaves
# (exit 0) at its idle time, not after the client's 120 s retry budget,
# without a burst of claims or of warnings; one that cannot reach the
# coordinator at start retries for --register-retry seconds and fails with a
# clear error. Both waits below are far under 120 s, so the old behaviour
# fails them.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-idle-exit
coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 500
echo '{"workflow":"idle","version":"1","steps":[{"id":"a","run":{"argv":["true"]}}]}' >"$WORK/defs.json"
launch() {
  SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
    --spool "$WORK/spool" --idle-exit 3 --wait-ms 1000 "$@"
}

launch --events "$WORK/events.jsonl" >"$WORK/launcher.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")
wait_for "the launcher to register" 20 grep -q "registered" "$WORK/launcher.log"
coordinator_stop
gone() { ! kill -0 "$launcher" 2>/dev/null; }
wait_for "the idle launcher to exit with its coordinator gone" 60 gone
rc=0
wait "$launcher" || rc=$?
((rc == 0)) || fail "the idle launcher exited $rc, not 0"
grep -q "idle for 3 s" "$WORK/launcher.log" || fail "the launcher did not say why it left"
# The coordinator stopped under a held claim: no burst of claims (one line
# per condition in the events file) and one warning per distinct failure.
claim_lines=$(grep -c '"event":"claim' "$WORK/events.jsonl" || true)
((claim_lines <= 6)) || fail "$claim_lines claim lines in the events file for one outage: $(head -c 600 "$WORK/events.jsonl")"
warnings=$(grep -c '\[warning\]' "$WORK/launcher.log" || true)
((warnings <= 3)) || fail "$warnings warnings for one outage: $(grep '\[warning\]' "$WORK/launcher.log" | head -n 5)"
note "coordinator stopped under a held claim: $claim_lines claim line(s), $warnings warning(s)"

# SCIMESH_URL still names the stopped coordinator's port: nothing listens there.
# Registration retries for --register-retry seconds, all of them, then exits 1.
started=$SECONDS
launch --register-retry 2 >"$WORK/unreachable.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")
wait_for "the launcher without a coordinator to give up" 60 gone
rc=0
wait "$launcher" || rc=$?
((rc != 0)) || fail "with no coordinator at start the launcher exited 0"
grep -q "register: cannot reach the coordinator at http://127.0.0.1:" "$WORK/unreachable.log" || fail "no clear error: $(tail -n 2 "$WORK/unreachable.log")"
((SECONDS - started >= 2)) || fail "registration gave up before its 2 s: $(tail -n 2 "$WORK/unreachable.log")"
note "launcher idle exit without a coordinator: OK"
