#!/usr/bin/env bash
# System test on the dev cluster, the SPANK plugin loaded: a run cancelled by
# its owner keeps its grace. scimesh-launch (--kill-grace 8) runs a 2-node
# native step (owner_cancel_step.c) that polls scimesh_step_cancelled(); the
# run is cancelled through the run API. Both ranks must see cancelled(),
# take their 2 s checkpoint and exit on their own, unsignalled: the plugin
# (grace_s=1, so only the launcher's grace can keep a signal away) gives
# the step the launcher's grace, and slurmd's log says it ended within it.
source "$(dirname "$0")/../lib/harness.sh"
harness_init plugin-owner-cancel
use_dev_cluster
: "${SCIMESH_OWNER_CANCEL_STEP_BIN:?set by CTest}" "${SCIMESH_LAUNCH_BIN:?set by CTest}"
PLUGIN=$(plugin_under_test)
PLUGSTACK=$SCIMESH_CLUSTER_DIR/etc/plugstack.conf
cp "$PLUGSTACK" "$WORK/plugstack.conf.saved"
CLEANUP_CMDS+=("cp '$WORK/plugstack.conf.saved' '$PLUGSTACK'")  # never leave the cluster with our config
echo "optional $PLUGIN grace_s=1 poll_ms=50" >"$PLUGSTACK"
coordinator_start --lease-ttl-ms 4000 --heartbeat-ms 1000 --grace-ms 2000
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/../launcher/allocation-lib.sh"

cat >"$WORK/defs.json" <<JSON
{"workflows": [{"workflow": "owner-cancel", "version": "1", "steps": [
  {"id": "solve", "max_attempts": 1, "walltime_s": 100, "resources": {"nodes": 2, "ranks_per_node": 1},
   "run": {"argv": ["$SCIMESH_OWNER_CANCEL_STEP_BIN", "2000"], "native": true}}]}]}
JSON

submit_launcher owner 5 --idle-exit 60 --spank --kill-grace 8
job=$JOB
run=$(run_when_registered owner-cancel '{}')
dir=$WORK/spool/$run/solve/1
both_running() { [[ -e $dir/running.0 && -e $dir/running.1 ]]; }
wait_for "both ranks of the native step to run" 60 both_running
lease=$(api GET "/runs/$run" | jq -r '.steps[0].attempts[-1].lease_id // empty')
[[ -n $lease ]] || fail "no lease for run $run"
watching() { grep -q "watching lease $lease " <<<"$(slurmd_logs)"; }
wait_for "the plugin to watch lease $lease" 30 watching
rank0_holds() { grep -q '"holder":"rank0"' "$dir/lease.state" 2>/dev/null; }
wait_for "rank 0 to hold the lease" 30 rank0_holds

note "the run is cancelled by its owner"
api POST "/runs/$run/cancel" -d '{}' | jq -e '.status == "cancelled"' >/dev/null || fail "run cancel refused"
ended() { ls "$dir" | grep -qE '^(stopped|sigterm)\.1$' && ls "$dir" | grep -qE '^(stopped|sigterm)\.0$'; }
wait_for "both ranks to end" 30 ended
ls "$dir"/sigterm.* >/dev/null 2>&1 && fail "a rank was sent SIGTERM: $(cd "$dir" && ls sigterm.* | tr '\n' ' ')"
for r in 0 1; do
  [[ -e $dir/cancelled.$r && -e $dir/stopped.$r ]] || fail "rank $r did not stop through cancelled(): $(ls "$dir" | tr '\n' ' ')"
done
gave_grace() { grep -q "lease $lease: its run was cancelled" <<<"$(slurmd_logs)"; }
wait_for "slurmd to log the grace" 10 gave_grace
grep "lease $lease: its run was cancelled" <<<"$(slurmd_logs)" | grep -q "8000 ms" ||
  fail "the plugin did not give the launcher's grace: $(grep "lease $lease" <<<"$(slurmd_logs)")"
ended_alone() { grep -q "the step of lease $lease ended on its own within its grace" <<<"$(slurmd_logs)"; }
wait_for "slurmd to log that the step ended within its grace" 10 ended_alone
if grep -q "cancelling the step of lease $lease" <<<"$(slurmd_logs)"; then
  fail "the plugin signalled the step: $(grep "lease $lease" <<<"$(slurmd_logs)")"
fi
scancel "$job"
wait_for "allocation $job to end" 60 job_gone "$job"
note "a run cancelled by its owner ends through cancelled(), unsignalled, within the launcher's grace"
