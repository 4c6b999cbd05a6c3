#!/usr/bin/env bash
# System test on the dev cluster: `kill -9` of the launcher while it runs a
# 1-rank step (forked by its node agent, without scimesh-rank: the launcher
# heartbeats it) and a 2-node step (heartbeated by its rank 0, scimesh-rank,
# after the hand-over). SLURM ends the allocation; no process of either step survives;
# both leases expire at the coordinator and are requeued; a second allocation
# completes both steps. Every attempt ends in exactly one recorded outcome.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-kill
use_dev_cluster
coordinator_start --lease-ttl-ms 3000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"
write_slow_step
# Expiry spends a retry (at_least_once), so each step may run twice.
cat >"$WORK/defs.json" <<JSON
{"workflow": "killed", "version": "1", "steps": [
  {"id": "one", "max_attempts": 2, "walltime_s": 30, "run": {"argv": ["$WORK/slow.sh"], "mpi": "none"}},
  {"id": "wide", "max_attempts": 2, "walltime_s": 30, "resources": {"nodes": 2, "ranks_per_node": 1},
   "run": {"argv": ["$WORK/slow.sh"]}}
]}
JSON

submit_launcher first 5 --idle-exit 60
job1=$JOB
run=$(run_when_registered killed '{}')
both_started() { [[ $(started_count "$run") == 2 ]]; }
wait_for "both steps to start in job $job1" 90 both_started
# The 2-node step runs under scimesh-rank, whose rank 0 takes the lease over;
# the 1-rank step, forked by its node agent, has no take-over (the launcher
# heartbeats it), unless the agent was not ready yet and srun ran it under
# scimesh-rank too. Wait until every wrapped step's rank 0 holds its lease,
# so the kill hits leases held inside the job as well as by the launcher.
ranks_hold() {
  local launched on_agent held
  launched=$(grep -cE "\(step (one|wide), attempt 1\): started on" "$WORK/first.log" || true)
  on_agent=$(grep -cE "\(step one, attempt 1\): started on .* by its node agent" "$WORK/first.log" || true)
  held=$(grep -c "rank 0 holds the lease now" "$WORK/first.log" || true)
  ((launched == 2 && held == launched - on_agent))
}
wait_for "rank 0 of every wrapped step to hold its lease" 30 ranks_hold
grep -qE "\(step one, attempt 1\): started on .* by its node agent" "$WORK/first.log" &&
  note "step one runs on its node agent: its lease is held by the launcher"
pid=$(launcher_pid first)
[[ -n $pid ]] || fail "no launcher process for job $job1"
note "kill -9 of the launcher (pid $pid, job $job1)"
kill -KILL "$pid"
wait_for "allocation $job1 to end" 60 job_gone "$job1"
[[ $(exit_code "$job1") == 0:9 ]] || fail "job $job1 should have ended by signal 9, not $(exit_code "$job1")"
slow_processes() { pgrep -f -- "$WORK/slow.sh" >/dev/null; }
wait_for "the steps' processes to be gone" 30 eval '! slow_processes'

expired_twice() {
  [[ $(api GET "/runs/$run" | jq '[.steps[].attempts[0] | select(.status=="expired")] | length') == 2 ]]
}
wait_for "both first attempts to expire at the coordinator" 30 expired_twice
show=$(api GET "/runs/$run")
[[ $(jq -r '[.steps[].attempts[0].error.class] | unique | join(",")' <<<"$show") == lease_expired ]] ||
  fail "the expired attempts do not say lease_expired: $show"

note "a second allocation finishes what the killed one held"
submit_launcher second 5 --idle-exit 5
job2=$JOB
status=$(wait_run "$run" 120)
[[ $status == completed ]] || fail "run $run ended '$status': $(api GET /runs/$run)"
show=$(api GET "/runs/$run")
for s in one wide; do
  [[ $(jq -r --arg s "$s" '.steps[] | select(.step_id==$s) | [.attempts[].status] | join(",")' <<<"$show") == expired,completed ]] ||
    fail "step $s's attempts are not exactly [expired, completed]: $show"
  [[ $(jq -r --arg s "$s" '.steps[] | select(.step_id==$s) | .output.attempt' <<<"$show") == 2 ]] ||
    fail "step $s's output is not from its second attempt: $show"
done
[[ $(api GET "/runs/$run/journal" | jq '[.events[] | select(.type=="step_requeued")] | length') == 2 ]] ||
  fail "the journal does not show both steps requeued once"
note "launcher kill -9: OK (job $job2 finished the work)"
