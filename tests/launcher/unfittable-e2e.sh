#!/usr/bin/env bash
# System test: a step that can never fit the allocation is not silent. A
# 2-node step registered by a 1-node (local) launcher: the launcher warns at
# registration, `scimesh-coordinator run show` (text and --json) says why the
# step stays queued, and the idle-exit line lists it. (The same path as a
# 3-node step in a 2-node SLURM allocation: only the node count differs.)
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-unfittable
coordinator_start
cat >"$WORK/defs.json" <<'JSON'
{"workflow":"unfit","version":"1","steps":[
  {"id":"big","resources":{"nodes":2},"walltime_s":60,"run":{"argv":["true"]}}]}
JSON
SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --topology "synthetic:core:2 pu:1" --idle-exit 4 --wait-ms 500 >"$WORK/launcher.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")
wait_for "the launcher to register" 20 grep -q "registered" "$WORK/launcher.log"
want="needs 2 nodes, largest offer 1"
grep -qF "cannot fit this allocation: step big (unfit@1): $want" "$WORK/launcher.log" ||
  fail "no warning at registration: $(grep -v '^$' "$WORK/launcher.log" | tail -n 3)"

run=$(run_start unfit '{}')
show() { SCIMESH_TOKEN_FILE=$EXEC_TOKEN_FILE "$SCIMESH_COORDINATOR_BIN" run show "$run" "$@"; }
marked() { show >"$WORK/show.txt" 2>&1 && grep -qF "no worker can fit: $want" "$WORK/show.txt"; }
wait_for "run show to say why the step stays queued" 20 marked
grep -q "step big  queued" "$WORK/show.txt" || fail "the step is not queued: $(<"$WORK/show.txt")"
reason=$(show --json | jq -r '.steps[] | select(.step_id == "big") | .unfittable.reason')
[[ $reason == "$want" ]] || fail "run show --json: unfittable.reason is '$reason'"
workers=$(show --json | jq -r '.steps[] | select(.step_id == "big") | .unfittable.workers')
[[ $workers == 1 ]] || fail "run show --json: unfittable.workers is '$workers', not 1"

gone() { ! kill -0 "$launcher" 2>/dev/null; }
wait_for "the idle launcher to exit" 60 gone
wait "$launcher" || fail "the launcher exited $?"
grep -qF "idle for 4 s with nothing offered: exiting; cannot fit this allocation: big (unfit@1): $want" \
  "$WORK/launcher.log" || fail "the idle-exit line does not list the step: $(grep idle "$WORK/launcher.log")"
note "unfittable step: launcher warns, run show says '$want', idle exit lists it"
