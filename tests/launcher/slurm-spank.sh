#!/usr/bin/env bash
# System test on the dev cluster (whose plugstack.conf lists this build's
# spank_scimesh.so): scimesh-launch finds the SPANK plugin by itself.
#   1. no --spank: a 2-node step whose ranks never poll is cancelled by the
#      plugin at once when its lease is fenced (the launcher alone would wait
#      --kill-grace 300 s); slurmd's log names the lease.
#   2. --spank=no: a step runs without the option (the plugin never watches
#      its lease) and completes.
#   3. a plugstack.conf without the plugin: --spank fails at start, naming
#      why; with no flag the step runs unwatched and completes.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-spank
use_dev_cluster
PLUGSTACK=$SCIMESH_CLUSTER_DIR/etc/plugstack.conf
grep -q '^optional .*spank_scimesh\.so' "$PLUGSTACK" || fail "the dev cluster lists no spank_scimesh.so: build the plugin"
cp "$PLUGSTACK" "$WORK/plugstack.conf.saved"
CLEANUP_CMDS+=("cp '$WORK/plugstack.conf.saved' '$PLUGSTACK'")  # never leave the cluster without it
coordinator_start --lease-ttl-ms 4000 --heartbeat-ms 1000 --grace-ms 2000
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"

write_deaf_step "$WORK/defs.json" spank
cat >"$WORK/quick.json" <<JSON
{"workflow": "quick", "version": "1", "steps": [
  {"id": "one", "max_attempts": 1, "walltime_s": 60,
   "run": {"argv": ["sh", "-c", "echo '{}' > output.json"], "mpi": "none"}}]}
JSON
lease_of() { api GET "/runs/$1" | jq -r '.steps[0].attempts[-1].lease_id // empty'; }

note "1. no flag: the launcher finds the plugin, which cancels a fenced step's deaf ranks"
submit_launcher auto 5 --idle-exit 60 --kill-grace 300
job=$JOB
run=$(run_when_registered spank '{}')
deaf_step_watched "$run"
grep -q "the SPANK plugin is loaded: steps get --scimesh-lease" "$WORK/auto.log" ||
  fail "the launcher did not say it found the plugin: $(cat "$WORK/auto.log")"
plugin_kills_deaf_step "$run"  # the launcher's own grace is 300 s
scancel "$job"
wait_for "allocation $job to end" 60 job_gone "$job"

note "2. --spank=no: the step runs without the option and completes"
cp "$WORK/quick.json" "$WORK/defs.json"
submit_launcher off 5 --idle-exit 3 --spank=no
job=$JOB
run=$(run_when_registered quick '{}')
[[ $(wait_run "$run" 90) == completed ]] || fail "the step under --spank=no did not complete: $(api GET "/runs/$run")"
lease=$(lease_of "$run")
if grep -q "lease $lease " <<<"$(slurmd_logs)"; then fail "the plugin watched lease $lease under --spank=no"; fi
wait_for "allocation $job to end" 60 job_gone "$job"
if grep -q "SPANK plugin is" "$WORK/off.log"; then fail "--spank=no still asked srun: $(cat "$WORK/off.log")"; fi

note "3. the plugin not loaded: --spank refuses to start; no flag runs unwatched"
echo "# no plugin (tests/launcher/slurm-spank.sh)" >"$PLUGSTACK"
submit_launcher forced 5 --idle-exit 3 --spank
job=$JOB
wait_for "allocation $job to end" 60 job_gone "$job"
[[ $(exit_code "$job") != 0:0 ]] || fail "--spank without the plugin exited 0"
grep -q -- "--spank=yes: the SPANK plugin is not loaded here" "$WORK/forced.log" ||
  fail "--spank without the plugin did not say why: $(cat "$WORK/forced.log")"
submit_launcher plain 5 --idle-exit 3
job=$JOB
run=$(run_when_registered quick '{}')
[[ $(wait_run "$run" 90) == completed ]] || fail "the step without the plugin did not complete: $(api GET "/runs/$run")"
grep -q "the SPANK plugin is not loaded: steps run without --scimesh-lease" "$WORK/plain.log" ||
  fail "the launcher did not say the plugin is missing: $(cat "$WORK/plain.log")"
wait_for "allocation $job to end" 60 job_gone "$job"
note "the launcher finds the installed plugin, and --spank=no/yes override it"
