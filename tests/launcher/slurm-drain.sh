#!/usr/bin/env bash
# System test on the dev cluster: draining.
#  1. Walltime: in a 2-minute allocation a step whose walltime_s does not fit is
#     never claimed, while one that fits runs; the launcher exits 0.
#  2. Preemption: SIGTERM to the launcher while a 1-rank step and a 2-node step
#     run -> both fail `preempted` (no retry spent: max_attempts is 1), the
#     launcher exits 0, and a second allocation finishes the work.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-drain
use_dev_cluster
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE

source "$(dirname "$0")/allocation-lib.sh"
write_slow_step
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "walltime", "version": "1", "steps": [
    {"id": "fits", "max_attempts": 1, "walltime_s": 20,
     "run": {"argv": ["sh", "-c", "echo '{}' > output.json"], "mpi": "none"}},
    {"id": "too-long", "max_attempts": 1, "walltime_s": 3600,
     "run": {"argv": ["sh", "-c", "echo '{}' > output.json"], "mpi": "none"}}]},
  {"workflow": "preempt", "version": "1", "steps": [
    {"id": "one", "max_attempts": 1, "walltime_s": 30,
     "run": {"argv": ["$WORK/slow.sh"], "mpi": "none"}},
    {"id": "wide", "max_attempts": 1, "walltime_s": 30,
     "resources": {"nodes": 2, "ranks_per_node": 1},
     "run": {"argv": ["$WORK/slow.sh"]}}]}
]}
JSON
jq . "$WORK/defs.json" >/dev/null || fail "bad test definitions"

steps_of() { api GET "/runs/$1"; }

note "1. walltime: only what fits in a 2-minute allocation is claimed"
submit_launcher wall 2 --idle-exit 5
jobA=$JOB
wrun=$(run_when_registered walltime '{}')
wait_for "allocation $jobA to end (idle exit)" 120 job_gone "$jobA"
[[ $(exit_code "$jobA") == 0:0 ]] || fail "launcher in job $jobA exited $(exit_code "$jobA")"
show=$(steps_of "$wrun")
[[ $(jq -r '.steps[] | select(.step_id=="fits") | .status' <<<"$show") == completed ]] ||
  fail "the step that fits did not complete: $show"
[[ $(jq -r '.steps[] | select(.step_id=="too-long") | .attempts | length' <<<"$show") == 0 ]] ||
  fail "the 3600 s step was claimed in a 2-minute allocation: $show"
! grep -q '"step_id":"too-long"' "$WORK/wall.events.jsonl" || fail "the events file shows too-long"
grep -q '"event":"claim"' "$WORK/wall.events.jsonl" || fail "the launcher never claimed"
api POST "/runs/$wrun/cancel" -d '{}' >/dev/null

note "2. SIGTERM drains: running steps fail preempted, the launcher exits 0"
prun=$(run_start preempt '{}')
submit_launcher first 5 --idle-exit 60 --drain-grace 3
jobB=$JOB
both_started() { [[ $(started_count "$prun") == 2 ]]; }
wait_for "both steps to start in job $jobB" 90 both_started
pid=$(launcher_pid first)
[[ -n $pid ]] || fail "no launcher process for job $jobB"
kill -TERM "$pid"
wait_for "allocation $jobB to end after SIGTERM" 60 job_gone "$jobB"
[[ $(exit_code "$jobB") == 0:0 ]] || fail "the drained launcher exited $(exit_code "$jobB"), not 0"
grep -q "draining" "$WORK/first.log" || fail "the launcher did not log its drain"
show=$(steps_of "$prun")
for s in one wide; do
  cls=$(jq -r --arg s "$s" '.steps[] | select(.step_id==$s) | .attempts[0].error.class' <<<"$show")
  [[ $cls == preempted ]] || fail "step $s's first attempt ended '$cls', not preempted: $show"
done
[[ $(jq -r .status <<<"$show") == running ]] || fail "the run did not stay running after preemption: $show"

note "3. a second allocation finishes the preempted work"
submit_launcher second 5 --idle-exit 5
jobC=$JOB
status=$(wait_run "$prun" 120)
[[ $status == completed ]] || fail "run $prun ended '$status' after the second allocation: $(steps_of "$prun")"
show=$(steps_of "$prun")
for s in one wide; do
  [[ $(jq -r --arg s "$s" '.steps[] | select(.step_id==$s) | .output.attempt' <<<"$show") == 2 ]] ||
    fail "step $s did not complete on its second attempt: $show"
  [[ $(jq -r --arg s "$s" '.steps[] | select(.step_id==$s) | .attempts[1].worker_id' <<<"$show") == "slurm/$jobC/"* ]] ||
    fail "step $s's second attempt was not run by job $jobC"
done
note "launcher drain and preemption: OK"
