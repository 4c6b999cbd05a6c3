#!/usr/bin/env bash
# System test of scimesh_step_fail, driven the way users run it: coordinator +
# scimesh-launch (local backend, real mpirun, 4 ranks), the C step program.
#   fatal      rank 3 fails the step `fatal` and calls MPI_Abort: the attempt
#              fails `fatal` with "rank 3 on HOST: bad mesh: 0 cells", once
#              (fatal is not retried, though 3 attempts are allowed)
#   retryable  rank 0 fails it `retryable`, and the step still writes its
#              output and exits 0: the attempt fails `retryable`, not completed
source "$(dirname "$0")/../lib/harness.sh"
harness_init mpi-step-fail-local
lsan_without_tls_roots
coordinator_start --lease-ttl-ms "$(scaled 6000)" --heartbeat-ms 500 --grace-ms "$(scaled 1000)" --retry-base-ms 100
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

four='"resources": {"nodes": 1, "ranks_per_node": 4}, "walltime_s": 120'
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "failfatal", "version": "1", "steps": [
    {"id": "mesh", $four, "max_attempts": 3,
     "input": {"terms": 100, "fail_rank": 3, "fail_class": "fatal", "fail_message": "bad mesh: 0 cells",
               "fail_abort": true},
     "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}}]},
  {"workflow": "failretry", "version": "1", "steps": [
    {"id": "solve", $four, "max_attempts": 1,
     "input": {"terms": 100, "fail_rank": 0, "fail_class": "retryable", "fail_message": "residual diverged"},
     "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}}]}
]}
JSON
jq . "$WORK/defs.json" >/dev/null || fail "bad test definitions"

SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --topology "synthetic:core:4 pu:1" --idle-exit 6 --wait-ms 1000 --kill-grace 2 \
  >"$WORK/launcher.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")
C() { SCIMESH_TOKEN_FILE=$EXEC_TOKEN_FILE "$SCIMESH_COORDINATOR_BIN" "$@"; }

start_first_run failfatal 60 '{}' "the launcher registered"
r_fatal=$RUN_ID
r_retry=$(run_start failretry '{}')
for r in "$r_fatal" "$r_retry"; do
  s=$(wait_run "$r" 120)
  [[ $s == failed ]] || fail "run $r ended '$s', not failed: $(C run show "$r")"
done

# fatal: one attempt, the class and the message rank 3 gave, with its host.
C run show "$r_fatal" >"$WORK/fatal.txt"
C run show "$r_fatal" --json >"$WORK/fatal.json"
host=$(jq -r '.steps[0].attempts[0].host' "$WORK/fatal.json")
note "fatal: $(grep -F '#1' "$WORK/fatal.txt")"
[[ $(jq '.steps[0].attempts | length' "$WORK/fatal.json") == 1 ]] ||
  fail "a fatal failure was retried: $(<"$WORK/fatal.txt")"
grep -qF "#1  failed (fatal: rank 3 on $host: bad mesh: 0 cells)" "$WORK/fatal.txt" ||
  fail "run show does not say rank 3's failure: $(<"$WORK/fatal.txt")"
failure=$(find "$WORK/spool/$r_fatal" -name failure.json | head -n1)
jq -e '.class=="fatal" and .rank==3' "$failure" >/dev/null || fail "failure.json: $(cat "$failure")"

# retryable: output.json was written and the step exited 0, yet it failed.
C run show "$r_retry" >"$WORK/retry.txt"
note "retryable: $(grep -F '#1' "$WORK/retry.txt")"
host=$(C run show "$r_retry" --json | jq -r '.steps[0].attempts[0].host')
grep -qF "#1  failed (retryable: rank 0 on $host: residual diverged)" "$WORK/retry.txt" ||
  fail "run show does not say rank 0's failure: $(<"$WORK/retry.txt")"
dir=$(dirname "$(find "$WORK/spool/$r_retry" -name failure.json | head -n1)")
jq -e '.sum == 5050' "$dir/output.json" >/dev/null || fail "the step did not go on to write its output"
wait "$launcher" || fail "the launcher exited non-zero"
note "scimesh_step_fail end-to-end: OK"
