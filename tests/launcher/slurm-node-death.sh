#!/usr/bin/env bash
# System test on the dev cluster: a node that really dies under a 2-node
# step. Every process of the node (slurmd, slurmstepd, the step's ranks; the
# launcher too when it is the batch node) is frozen at once and stays silent
# past SlurmdTimeout (10 s here), so slurmctld marks it DOWN and ends the job
# (NODE_FAIL); then it is killed and boots again. Two cases:
#   n2 dies (a non-zero rank's node): rank 0 and the launcher on n1 survive.
#   n1 dies (rank 0's and the launcher's node).
# Each time: the attempt ends exactly once (a recorded class, the step
# requeued), the surviving node's rank dies and nothing of the job is left
# on it, and the dead node rejoins idle. docs/reliability.md "A node dies".
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-node-death
use_dev_cluster
use_cluster_cpus 2 --slurmd-timeout 10
cluster=$(dirname "$0")/../../scripts/dev-cluster
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"
# SLURM requeues a batch job whose node failed (JobRequeue=1): a new
# allocation in a real queue; here the job is to end, so it is not requeued.
export SBATCH_NO_REQUEUE=1
cat >"$WORK/defs.json" <<JSON
{"workflows": [{"workflow": "death", "version": "1", "steps": [
  {"id": "wide", "max_attempts": 3, "walltime_s": 120, "resources": {"nodes": 2, "ranks_per_node": 1},
   "run": {"argv": ["sh", "-c", "echo \$\$ > pids.\$SLURM_PROCID; exec sleep 600"], "mpi": "none"}}]}]}
JSON

# one_death DEAD SURVIVOR: a fresh launcher and run; DEAD dies under the step.
one_death() {
  local dead=$1 survivor=$2
  note "node $dead dies under a 2-node step (rank 0 on n1)"
  submit_launcher "death-$dead" 5 --spank=yes --idle-exit 120
  local job=$JOB run dir
  run=$(run_when_registered death '{}')
  dir=$WORK/spool/$run/wide/1
  two_ranks() { [[ -s $dir/pids.0 && -s $dir/pids.1 ]]; }
  wait_for "both ranks to run" 90 two_ranks
  local survivor_rank=0 started=$SECONDS
  [[ $survivor == n2 ]] && survivor_rank=1
  local survivor_pid
  survivor_pid=$(<"$dir/pids.$survivor_rank")
  "$cluster" node-freeze "$dead" >>"$WORK/dev-cluster.log" 2>&1 || fail "node-freeze $dead failed"
  node_down() { sinfo -h -N -n "$dead" -o %t | grep -qE 'down|fail'; }
  wait_for "slurmctld to mark $dead down" 60 node_down
  note "$dead down after $((SECONDS - started)) s"
  rank_gone() { ! kill -0 "$survivor_pid" 2>/dev/null; }
  wait_for "the rank on $survivor (pid $survivor_pid) to die" 60 rank_gone
  attempt_ended() { [[ -n $(api GET "/runs/$run" | jq -r '.steps[0].attempts[0].error.class // empty') ]]; }
  wait_for "the attempt to end" 60 attempt_ended
  local show cls n left
  show=$(api GET "/runs/$run")
  cls=$(jq -r '.steps[0].attempts[0].error.class' <<<"$show")
  note "attempt 1 ended $cls: $(jq -r '.steps[0].attempts[0].error.message' <<<"$show") ($((SECONDS - started)) s after the freeze)"
  # The launcher on a surviving node (or the plugin there) names the dead
  # node: node_failure. With the launcher's node dead nobody reports: the
  # lease expires.
  local want=node_failure
  [[ $dead == n1 ]] && want=lease_expired
  [[ $cls == "$want" ]] || fail "attempt 1 ended '$cls', not $want: $show"
  [[ $(jq -r '.steps[0].status' <<<"$show") != failed ]] || fail "the step failed for good after a node death: $show"
  # The dead machine is gone for good (its frozen processes die with it);
  # slurmctld then ends the job, whose batch step or tasks were there.
  "$cluster" node-kill "$dead" >>"$WORK/dev-cluster.log" 2>&1 || fail "node-kill $dead failed"
  wait_for "job $job to end" 90 job_gone "$job"
  # Nothing of the job is left anywhere: no rank, no slurmstepd of the job.
  # A zombie runs nothing: it is dead, waiting for its killed parent's reaper.
  for p in $(<"$dir/pids.0") $(<"$dir/pids.1"); do
    [[ $(ps -o stat= -p "$p" 2>/dev/null) == Z* || -z $(ps -o stat= -p "$p" 2>/dev/null) ]] ||
      fail "rank pid $p is still alive: $(ps -o pid,stat,args -p "$p")"
  done
  left=$(pgrep -f "slurmstepd: \\[$job\\." || true)
  [[ -z $left ]] || fail "slurmstepd of job $job left: $(ps -o pid,args -p "$(paste -sd, <<<"$left")")"
  "$cluster" node-start "$dead" >>"$WORK/dev-cluster.log" 2>&1 || fail "node-start $dead failed"
  node_idle() { [[ $(sinfo -h -N -n "$dead" -o %t) == idle ]]; }
  wait_for "$dead to rejoin idle" 90 node_idle
  # Exactly one outcome for attempt 1 in the journal.
  n=$(api GET "/runs/$run/journal" | jq '[.events[] | select((.type == "attempt_failed" or .type == "attempt_completed" or .type == "attempt_expired") and .attempt == 1)] | length')
  [[ $n == 1 ]] || fail "attempt 1 has $n outcomes in the journal: $(api GET "/runs/$run/journal")"
  api POST "/runs/$run/cancel" -d '{}' >/dev/null
}

one_death n2 n1
one_death n1 n2
note "a dead node: the attempt ends once, the survivor's rank dies, the node rejoins"
