#!/usr/bin/env bash
# System test: `scimesh-coordinator run list|show|watch` on real runs of the
# launcher (local backend). show names why a run and each step did not
# complete (an input template, a need, an attempt's failure) and where each
# attempt's directory is; watch streams a running step's progress and ends
# with the run; list finds the runs; a wrong URL is said while watch retries.
source "$(dirname "$0")/../lib/harness.sh"
harness_init run-cli
lsan_without_tls_roots
coordinator_start --heartbeat-ms 500 --retry-base-ms 100
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "pi", "version": "1", "steps": [
    {"id": "pi-a", "input": {"n": "{{input.n}}"}, "run": {"argv": ["echo {} > output.json"], "shell": true}},
    {"id": "pi-b", "needs": ["pi-a"], "run": {"argv": ["echo {} > output.json"], "shell": true}}]},
  {"workflow": "broken", "version": "1", "steps": [
    {"id": "exit3", "max_attempts": 1, "run": {"argv": ["echo oops >&2; exit 3"], "shell": true}}]},
  {"workflow": "long", "version": "1", "steps": [
    {"id": "wait", "max_attempts": 1, "input": {"wait_for_cancel": true},
     "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}}]}
]}
JSON
SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --topology "synthetic:core:2 pu:1" --idle-exit 30 --wait-ms 500 --kill-grace 2 \
  >"$WORK/launcher.log" 2>&1 &
CLEANUP_PIDS+=($!)
wait_for "the launcher to register" 20 grep -q "registered" "$WORK/launcher.log"
grep -q "spool $WORK/spool" "$WORK/launcher.log" || fail "the launcher does not name its spool: $(grep registered "$WORK/launcher.log")"
C() { SCIMESH_TOKEN_FILE=$EXEC_TOKEN_FILE "$SCIMESH_COORDINATOR_BIN" "$@"; }

# An input template that does not render: the run, the step and the step that needs it say why.
pi=$(C run start --workflow pi --input '{"m":5}')
C run show "$pi" >"$WORK/pi.txt"
grep -qF "run $pi  pi@1  failed: step pi-a failed: fatal: input template: 'input.n' not found" "$WORK/pi.txt" ||
  fail "run show does not say why the run failed: $(<"$WORK/pi.txt")"
grep -qF "step pi-a  failed (fatal: input template: 'input.n' not found)" "$WORK/pi.txt" || fail "$(<"$WORK/pi.txt")"
grep -qF "step pi-b  cancelled (cancelled: never ran: it needs step pi-a, which failed)" "$WORK/pi.txt" ||
  fail "$(<"$WORK/pi.txt")"

# An attempt that failed: its class and message, and a directory that is where the files are.
broken=$(C run start --workflow broken --input '{}')
[[ $(wait_run "$broken" 60) == failed ]] || fail "the exit-3 run did not fail"
C run show "$broken" >"$WORK/broken.txt"
host=$(C run show "$broken" --json | jq -r '.steps[0].attempts[0].host')
[[ -n $host && $host != null ]] || fail "the attempt has no host: $(C run show "$broken" --json)"
grep -qF "#1  failed (retryable: the step failed: exit status 3" "$WORK/broken.txt" || fail "$(<"$WORK/broken.txt")"
grep -qF "dir $host:<spool>/$broken/exit3/1" "$WORK/broken.txt" || fail "no attempt directory: $(<"$WORK/broken.txt")"
grep -q oops "$WORK/spool/$broken/exit3/1/step.err" || fail "the directory run show names holds no step.err"
[[ $(C run show "$broken" --json | jq -r .reason) == "step exit3 failed: retryable: "* ]] || fail "no reason in --json"

# watch: a running step's progress as it arrives, the end of the run.
long=$(C run start --workflow long --input '{}')
C run watch "$long" >"$WORK/watch.txt" 2>&1 &
watch=$!
CLEANUP_PIDS+=("$watch")
wait_for "watch to show the step's progress" 60 grep -qF 'progress  step wait #1  {"phase":"waiting"}' "$WORK/watch.txt"
kill -0 "$watch" 2>/dev/null || fail "watch ended before the run: $(<"$WORK/watch.txt")"
C run cancel "$long" >/dev/null
rc=0
wait "$watch" || rc=$?
[[ $rc == 1 ]] || fail "watch of a cancelled run exited $rc: $(<"$WORK/watch.txt")"
grep -qF "run $long: cancelled" "$WORK/watch.txt" || fail "$(<"$WORK/watch.txt")"
grep -qF "attempt_started  step wait #1" "$WORK/watch.txt" || fail "no state changes: $(<"$WORK/watch.txt")"

# list: newest first; --state.
C run list >"$WORK/list.txt"
[[ $(head -n 1 "$WORK/list.txt") == "$long  long@1  cancelled  "* ]] || fail "run list: $(<"$WORK/list.txt")"
[[ $(C run list --state failed | cut -d' ' -f1 | sort | tr '\n' ' ') == "$(printf '%s\n' "$pi" "$broken" | sort | tr '\n' ' ')" ]] ||
  fail "run list --state failed: $(C run list --state failed)"

# A wrong URL: said while watch still retries (it used to say nothing until it gave up after 60 s).
SCIMESH_URL=http://127.0.0.1:1 C run watch "$long" >"$WORK/wrong-url.txt" 2>&1 &
wrong=$!
CLEANUP_PIDS+=("$wrong")
wait_for "watch to say it cannot reach the coordinator" 30 grep -qF "(retrying, 0 s so far)" "$WORK/wrong-url.txt"
kill -0 "$wrong" 2>/dev/null || fail "the line came when watch gave up: $(<"$WORK/wrong-url.txt")"
grep -qF "cannot reach http://127.0.0.1:1 (retrying" "$WORK/wrong-url.txt" || fail "$(<"$WORK/wrong-url.txt")"
note "run show says why and where, watch streams progress and says a wrong URL at once, list finds the runs"
