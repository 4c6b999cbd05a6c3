#!/usr/bin/env bash
# System test: poisson as a step (coordinator + scimesh-launch, local backend,
# 2 ranks) with a misspelt input key ({"nn": 8}) fails the run instead of
# solving n = 32: the attempt fails `fatal` (scimesh_step_fail: a retry
# cannot help), once although 3 attempts are allowed, with the reason in its
# message, and the attempt's step.err names the key too.
source "$(dirname "$0")/../lib/harness.sh"
harness_init poisson-unknown-key-step
lsan_without_tls_roots
: "${SCIMESH_LAUNCH_BIN:?set by CTest}" "${SCIMESH_POISSON_BIN:?set by CTest}"
coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 500 --grace-ms "$(scaled 1000)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
cat >"$WORK/defs.json" <<JSON
{"workflow": "poisson-input", "version": "1", "steps": [
  {"id": "solve", "input": {"nn": 8}, "walltime_s": 60, "max_attempts": 3,
   "resources": {"nodes": 1, "ranks_per_node": 2}, "run": {"argv": ["$SCIMESH_POISSON_BIN"], "native": true}}]}
JSON
SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --backend local --definitions "$WORK/defs.json" \
  --spool "$WORK/spool" --idle-exit 4 --wait-ms 1000 >"$WORK/launcher.log" 2>&1 &
CLEANUP_PIDS+=("$!")
start_first_run poisson-input 30
run=$RUN_ID
status=$(wait_run "$run" 60)
show=$(api GET "/runs/$run")
[[ $status == failed ]] || fail "the run with {\"nn\": 8} ended '$status', not failed: $show"
attempt=$(jq -c '.steps[0].attempts[-1]' <<<"$show")
note "the attempt: $attempt"
[[ $(jq '.steps[0].attempts | length' <<<"$show") == 1 ]] || fail "the refused input was tried again: $show"
[[ $(jq -r .error.class <<<"$attempt") == fatal ]] || fail "the attempt did not fail fatal: $attempt"
[[ $(jq -r .error.message <<<"$attempt") == "rank 0 on "*": bad step input: input: unknown key 'nn' (allowed: n, tol, max_iterations, initial_guess, write_solution)" ]] ||
  fail "the message does not give rank 0's reason: $attempt"
err=$(find "$WORK/spool/$run/solve" -name step.err | head -n 1)
[[ -n $err ]] || fail "no step.err in the attempt directory"
grep -F "unknown key 'nn' (allowed: n, tol, max_iterations, initial_guess, write_solution)" "$err" ||
  fail "step.err does not name the key and the allowed ones: $(cat "$err")"
[[ ! -e $(dirname "$err")/output.json ]] || fail "the step wrote an output: $(cat "$(dirname "$err")/output.json")"
note "poisson refuses an unknown input key as a step: OK"
