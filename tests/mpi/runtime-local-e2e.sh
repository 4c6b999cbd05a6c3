#!/usr/bin/env bash
# System test of the MPI runtime, driven the way users run it: coordinator +
# scimesh-launch (local backend, real mpirun). The same small step in C, C++
# and Fortran completes with 2 ranks; an unmodified MPI program completes
# under scimesh-rank, and one whose rank 1 dies of SIGSEGV fails with the
# signal named; a run cancelled mid-step reaches every rank's cancelled()
# (the time from the refused heartbeat to the last rank is printed).
source "$(dirname "$0")/../lib/harness.sh"
harness_init mpi-runtime-local
lsan_without_tls_roots
coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 300 --grace-ms "$(scaled 1000)" --retry-base-ms 100
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

pair='"resources": {"nodes": 1, "ranks_per_node": 2}, "max_attempts": 1'
# Under AddressSanitizer the crash must stay a crash: ASan's SEGV handler
# would turn it into exit 1, so the crashing step alone runs with handle_segv=0.
crash_env='"CRASH_RANK": "1"'
if [[ -n ${ASAN_OPTIONS:-} ]]; then crash_env+=", \"ASAN_OPTIONS\": \"$ASAN_OPTIONS:handle_segv=0\""; fi
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "rt", "version": "1", "steps": [
    {"id": "c", "input": {"terms": 1000}, $pair, "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}},
    {"id": "cxx", "input": {"terms": 1000}, $pair, "run": {"argv": ["$SCIMESH_STEP_CXX_BIN"], "native": true}},
    {"id": "fortran", "input": {"terms": 1000}, $pair, "run": {"argv": ["$SCIMESH_STEP_FORTRAN_BIN"], "native": true}},
    {"id": "wrapped", $pair, "run": {"argv": ["$SCIMESH_CRASH_RANK_BIN"]}}]},
  {"workflow": "rtcrash", "version": "1", "steps": [
    {"id": "crash", $pair, "run": {"argv": ["$SCIMESH_CRASH_RANK_BIN"], "env": {$crash_env}}}]},
  {"workflow": "rtcancel", "version": "1", "steps": [
    {"id": "wait", "input": {"wait_for_cancel": true}, $pair, "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}}]}
]}
JSON

SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --events "$WORK/events.jsonl" --idle-exit 5 --wait-ms 1000 --kill-grace 3 \
  >"$WORK/launcher.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")

start_first_run rt 20 '{}' "the launcher registered"
r1=$RUN_ID
r2=$(run_start rtcrash '{}')
r3=$(run_start rtcancel '{}')

# --- cancellation: wait until rank 0 holds the lease, then cancel the run ---
cancel_held_step "$r3" wait 2 60
out=$CANCELLED_OUT
jq -e '.state=="lost" and .reason=="run_terminal"' "$CANCELLED_STATE" >/dev/null ||
  fail "lease.state does not say lost: run_terminal: $(cat "$CANCELLED_STATE")"
cancelled_at=$(api GET "/runs/$r3/journal" | jq -r '.events[] | select(.type=="run_cancelled") | .at')
last_rank=$(sed -n 's/.*cancelled=1 at \([0-9.]*\)/\1/p' "$out" | sort -n | tail -n1)
note "cancellation: run cancelled -> last rank saw it: $(awk -v a="$(date -d "$cancelled_at" +%s.%N)" -v b="$last_rank" \
  'BEGIN{printf "%.0f ms (includes up to one heartbeat interval, 300 ms)", (b-a)*1000}')"

for r in "$r1" "$r2" "$r3"; do echo "$(wait_run "$r" 120)" >"$WORK/status-$r"; done
[[ $(<"$WORK/status-$r1") == completed ]] || fail "rt run: $(<"$WORK/status-$r1"): $(api GET /runs/$r1)"
[[ $(<"$WORK/status-$r2") == failed ]] || fail "rtcrash should fail"
[[ $(<"$WORK/status-$r3") == cancelled ]] || fail "rtcancel should be cancelled"

show=$(api GET "/runs/$r1")
for lang in c cxx fortran; do
  sum=$(jq -r ".steps[] | select(.step_id==\"$lang\") | .output.sum" <<<"$show")
  ranks=$(jq -r ".steps[] | select(.step_id==\"$lang\") | .output.ranks" <<<"$show")
  note "$lang step: sum $sum over $ranks ranks"
  [[ $sum == 500500 && $ranks == 2 ]] || fail "$lang step output is wrong: $show"
done
[[ $(jq -r '.steps[] | select(.step_id=="wrapped") | .output.ranks' <<<"$show") == 2 ]] || fail "wrapped program output"
msg=$(api GET "/runs/$r2" | jq -r '.steps[0].attempts[-1].error.message')
note "crash step failed with: $msg"
[[ $msg == *"signal 11"* ]] || fail "the crash's fail message does not name the signal: $msg"

# The cancelled attempt: nothing was written for it after the cancel.
journal=$(api GET "/runs/$r3/journal")
! jq -e '.events[] | select(.type=="attempt_completed" or .type=="attempt_failed")' <<<"$journal" >/dev/null ||
  fail "an outcome was recorded for the cancelled attempt"
# One heartbeat stream per step: while rank 0 held the long step's lease,
# the launcher's own heartbeats paused.
wait_lease=$(jq -r .lease_id "$CANCELLED_STATE")
grep -E "lease $wait_lease: (rank 0 holds the lease now|rank0 holds it now; pausing)" "$WORK/launcher.log" >/dev/null ||
  fail "the launcher did not hand lease $wait_lease to rank 0"
wait "$launcher" || fail "the launcher exited non-zero"
note "MPI runtime end-to-end: OK"
