#!/usr/bin/env bash
# System test on the dev cluster without the SPANK plugin (plugstack.conf
# lists none): SLURM's own ending spends no attempt. The job of a
# launcher running a 2-node step (srun) and a 1-rank step (its node agent) is
# scancelled: SLURM sends SIGTERM to the launcher and to the steps at once.
# Both attempts must fail `preempted`, spending no attempt (max_attempts 1:
# a `retryable` would fail the run), and another allocation runs them again.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-scancel
use_dev_cluster
PLUGSTACK=$SCIMESH_CLUSTER_DIR/etc/plugstack.conf
cp "$PLUGSTACK" "$WORK/plugstack.conf.saved"
CLEANUP_CMDS+=("cp '$WORK/plugstack.conf.saved' '$PLUGSTACK'")  # never leave the cluster without its plugin
echo "# no plugin (tests/launcher/slurm-scancel.sh)" >"$PLUGSTACK"
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"
write_slow_step
cat >"$WORK/defs.json" <<JSON
{"workflows": [{"workflow": "scancel", "version": "1", "steps": [
  {"id": "one", "max_attempts": 1, "walltime_s": 60, "run": {"argv": ["$WORK/slow.sh"], "mpi": "none"}},
  {"id": "wide", "max_attempts": 1, "walltime_s": 60, "resources": {"nodes": 2, "ranks_per_node": 1},
   "run": {"argv": ["$WORK/slow.sh"], "mpi": "none"}}]}]}
JSON

submit_launcher victim 5 --idle-exit 60
job=$JOB
run=$(run_when_registered scancel '{}')
both_started() { [[ $(started_count "$run") == 2 ]]; }
wait_for "both steps to start in job $job" 60 both_started
grep -q "the SPANK plugin is not loaded" "$WORK/victim.log" || fail "the plugin is loaded: $(cat "$WORK/victim.log")"
note "scancel $job while both steps run"
scancel "$job"
wait_for "allocation $job to end" 60 job_gone "$job"
show=$(api GET "/runs/$run")
for s in one wide; do
  attempt=$(jq -c --arg s "$s" '.steps[] | select(.step_id==$s) | .attempts[0]' <<<"$show")
  cls=$(jq -r '.error.class // empty' <<<"$attempt")
  [[ $cls == preempted ]] || fail "step $s's attempt ended '${cls:-without a recorded error}', not preempted: $attempt"
  status=$(jq -r --arg s "$s" '.steps[] | select(.step_id==$s) | .status' <<<"$show")
  # leased: a claim in flight at the scancel was answered after the launcher
  # stopped reading it; that lease never starts and is requeued free.
  [[ $status == queued || $status == leased ]] || fail "step $s is '$status' after a scancel, not queued: $show"
done
[[ $(jq -r .status <<<"$show") == running ]] || fail "the run did not stay running after the scancel: $show"
grep -q "SIGTERM: the allocation is ending" "$WORK/victim.log" ||
  fail "the launcher did not log SLURM's SIGTERM: $(cat "$WORK/victim.log")"

note "another allocation runs both steps again (max_attempts 1: no attempt was spent)"
submit_launcher second 5 --idle-exit 5
status=$(wait_run "$run" 60)
[[ $status == completed ]] || fail "run $run ended '$status' in the second allocation: $(api GET "/runs/$run")"
note "a scancelled allocation's steps fail preempted without the plugin, their attempts unspent"
