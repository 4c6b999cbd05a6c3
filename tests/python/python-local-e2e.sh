#!/usr/bin/env bash
# System test of the Python package scimesh, driven as users run it: the
# real coordinator, scimesh-launch (local backend, real mpirun) and Python
# steps (tests/python/steps.py) under mpi4py.
# - make (Python, 2 ranks) -> relay (C++) -> check (Python): every call;
#   artifacts, a directory artifact among them, from Python to C++ and back;
#   progress, usage, output (numpy values) and state patch in `run show`.
# - rank 3 of 4 raises: one failure, fatal, naming the rank and the first
#   line of the message; one attempt; the traceback only in step.err.
# - Retryable and StepFailed give their classes; cancellation reaches every
#   rank's cancelled(); Step() without MPI; calls after the end and outside
#   a step are clear Python exceptions.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/python-lib.sh"
harness_init python-local
lsan_without_tls_roots
coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 300 --grace-ms "$(scaled 1000)" --retry-base-ms 100
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
py=${SCIMESH_PYTHON:?} steps=$(dirname "$(readlink -f "$0")")/steps.py
export PYTHONPATH=${SCIMESH_PYTHONPATH:?}

pyenv=$(python_step_env)
step() {  # step ID DO RANKS [EXTRA]: a Python step's definition
  printf '{"id": "%s", "input": {"do": "%s", "n": 7}, "resources": {"nodes": 1, "ranks_per_node": %s}, %s
   "run": {"argv": ["%s", "%s"], "native": true, "env": %s}}' "$1" "$2" "$3" "${4:-}" "$py" "$steps" "$pyenv"
}
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "pychain", "version": "1", "steps": [
    $(step make make 2 '"max_attempts": 1,'),
    {"id": "relay", "needs": ["make"], "max_attempts": 1,
     "run": {"argv": ["$SCIMESH_RELAY_BIN"], "native": true}},
    $(step check check 1 '"needs": ["relay", "make"], "max_attempts": 1,')]},
  {"workflow": "pyfail", "version": "1", "steps": [$(step fail fail_rank3 4 '"max_attempts": 3,')]},
  {"workflow": "pyretry", "version": "1", "steps": [$(step retry retry 1 '"max_attempts": 2,')]},
  {"workflow": "pynamed", "version": "1", "steps": [$(step named named 1 '"max_attempts": 3,')]},
  {"workflow": "pycancel", "version": "1", "steps": [$(step wait wait_cancel 2)]},
  {"workflow": "pyserial", "version": "1", "steps": [$(step serial serial 1)]}
]}
JSON

SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --topology "synthetic:core:4 pu:1" --spool "$WORK/spool" --events "$WORK/events.jsonl" --idle-exit 5 \
  --wait-ms 1000 --kill-grace 3 >"$WORK/launcher.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")

start_first_run pychain 30 '{}' "the launcher registered pychain"
chain=$RUN_ID
declare -A runs=([fail]=$(run_start pyfail '{}') [retry]=$(run_start pyretry '{}') [named]=$(run_start pynamed '{}')
                 [cancel]=$(run_start pycancel '{}') [serial]=$(run_start pyserial '{}'))

# --- cancellation: once rank 0 holds the lease, cancel; both ranks see it ---
cancel_held_step "${runs[cancel]}" wait 2 60

declare -A want=([fail]=failed [retry]=failed [named]=failed [cancel]=cancelled [serial]=completed)
[[ $(wait_run "$chain" 120) == completed ]] || fail "the chain did not complete: $(api GET "/runs/$chain")"
for k in "${!runs[@]}"; do
  got=$(wait_run "${runs[$k]}" 120)
  [[ $got == "${want[$k]}" ]] || fail "$k: $got, not ${want[$k]}: $(api GET "/runs/${runs[$k]}")"
done

# --- every call, and artifacts both ways ---
show=$(api GET "/runs/$chain")
make=$(jq '.steps[] | select(.step_id=="make")' <<<"$show")
jq -e '.output | .sum == 3 and .ranks == 2 and .mean == 2.5 and .count == 3 and .vector == [0,1,2]' <<<"$make" >/dev/null ||
  fail "make's output (numpy values as numbers and lists): $(jq -c .output <<<"$make")"
for e in set nan usage name; do
  note "wrong use ($e): $(jq -r ".output.errors.$e" <<<"$make")"
done
jq -e '.output.errors | (.set | test("must be JSON serialisable: Object of type set")) and (.nan | test("NaN"))
  and (.usage | test("numbers only; not a number: cells")) and (.name | test("artifact"))' <<<"$make" >/dev/null ||
  fail "a wrong use did not get its clear exception: $(jq -c .output.errors <<<"$make")"
jq -e '.attempts[0].progress | .fraction == 0.5 and .message == "halfway" and .rank_count == 2' <<<"$make" >/dev/null ||
  fail "make's progress is not in run show: $(jq -c .attempts[0].progress <<<"$make")"
jq -e '.attempts[0].usage | .cells == 1000 and .solver_s == 0.25 and .wall_s > 0' <<<"$make" >/dev/null ||
  fail "make's usage is not in run show: $(jq -c .attempts[0].usage <<<"$make")"
jq -e '[.artifacts[] | "\(.name) \(.media_type)"] | sort ==
  ["data.txt text/plain", "tree application/vnd.scimesh.directory+tar"]' <<<"$make" >/dev/null ||
  fail "make's artifacts: $(jq -c '[.artifacts[] | {name, media_type}]' <<<"$make")"
# ... and as the user reads them: scimesh-coordinator run show.
shown=$(SCIMESH_TOKEN_FILE=$EXEC_TOKEN_FILE "$SCIMESH_COORDINATOR_BIN" run show "$chain") || fail "run show: $shown"
grep -E '^ +#1 +completed .*progress \{[^}]*"fraction":0.5,"message":"halfway"\}.*usage \{"cells":1000(\.0)?,"solver_s":0.25,' \
  <<<"$shown" >/dev/null || fail "run show does not show make's progress and usage: $shown"
jq -e '.state.python == true' <<<"$show" >/dev/null || fail "the state patch was not merged: $(jq -c .state <<<"$show")"
check=$(jq '.steps[] | select(.step_id=="check") | .output' <<<"$show")
jq -e '.relayed == "relayed: from python\n" and .tree == "in a directory\n" and .previous == ["make", "relay"]
  and (.missing | test("no input artifact .missing.txt. of step .relay."))' <<<"$check" >/dev/null ||
  fail "the Python step did not read the C++ step's artifact and the directory: $check"
note "artifacts: Python -> C++ -> Python, and a directory: OK"

# --- failures ---
error_of() { api GET "/runs/$1" | jq -c '[.steps[0].attempts[] | .error]'; }
fail_errors=$(error_of "${runs[fail]}")
note "rank 3 of 4 raised: $fail_errors"
jq -e --arg host "$(hostname -s)" 'length == 1 and .[0].class == "fatal" and
  .[0].message == "rank 3 on \($host): ValueError: bad mesh: 0 cells"' <<<"$fail_errors" >/dev/null ||
  fail "rank 3's exception is not one fatal failure naming the rank: $fail_errors"
err=$(find "$WORK/spool/${runs[fail]}" -name step.err | head -n1)
grep -q 'Traceback (most recent call last)' "$err" || fail "the traceback is not in step.err"
retry_errors=$(error_of "${runs[retry]}")
jq -e 'length == 2 and all(.[]; .class == "retryable" and (.message | endswith(": the license server did not answer")))' \
  <<<"$retry_errors" >/dev/null || fail "Retryable: $retry_errors"
named_errors=$(error_of "${runs[named]}")
jq -e 'length == 1 and .[0].class == "invalid_output" and (.[0].message | endswith(": no convergence after 100 iterations"))' \
  <<<"$named_errors" >/dev/null || fail "StepFailed: $named_errors"
note "failures: fatal (rank 3 of 4), retryable x2, invalid_output: OK"

# --- one process, and after the end ---
jq -e '.steps[0].output.size == 1' <<<"$(api GET "/runs/${runs[serial]}")" >/dev/null || fail "Step() without a communicator"
grep -q 'after end: StepEnded: the step has ended' "$(find "$WORK/spool/${runs[serial]}" -name step.out | head -n1)" ||
  fail "a call after the end did not raise StepEnded"
outside=$(cd "$WORK" && env -u SCIMESH_ATTEMPT_DIR "$py" -c 'import scimesh; scimesh.Step()' 2>&1) &&
  fail "Step() outside a step did not fail"
[[ $outside == *"NotInAStep: not inside a scimesh step: SCIMESH_ATTEMPT_DIR is not set"* ]] ||
  fail "Step() outside a step: $outside"
wait "$launcher" || fail "the launcher exited non-zero"
note "Python steps end-to-end: OK"
