#!/usr/bin/env bash
# System test on the dev cluster in --cgroup mode (ConstrainCores): a job that
# got only part of a node. Another job holds one core of n1; the launcher's
# job gets the other (-n1), so its cgroup allows one cpu, not cpu 0. A
# 1-rank step must run on exactly that cpu (placement uses the job's allowed
# cpuset, never a cpu outside it), and a 2-rank step does not fit the
# allocation (the claim's capacity is the job's cpus, not the node's).
# Skipped (77) when the cluster runs without cgroups.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-partial-node
use_dev_cluster
if ! grep -q '^ProctrackType=proctrack/cgroup' "$SLURM_CONF"; then
  echo "SKIP: the dev cluster runs without cgroups (scripts/dev-cluster up --cgroup)"
  exit 77
fi
use_cluster_cpus 2
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"
cat >"$WORK/defs.json" <<'JSON'
{"workflows": [{"workflow": "partial", "version": "1", "steps": [
  {"id": "one", "max_attempts": 1, "walltime_s": 60,
   "run": {"argv": ["sh", "-c", "c=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status); j=$(sed -n 's/^[0-9]*:cpuset://p' /proc/self/cgroup); printf '{\"cpus\":\"%s\",\"cgroup\":\"%s\"}' \"$c\" \"$j\" > \"$SCIMESH_ATTEMPT_DIR/output.json\""], "mpi": "none"}}]},
 {"workflow": "two", "version": "1", "steps": [
  {"id": "two", "max_attempts": 1, "walltime_s": 60, "resources": {"nodes": 1, "ranks_per_node": 2},
   "run": {"argv": ["true"], "mpi": "none"}}]}]}
JSON
# The first core of n1 taken by another job.
holder=$(sbatch --parsable -N1 -n1 -w n1 -t 5 -o /dev/null --wrap 'exec sleep 300')
CLEANUP_CMDS+=("scancel $holder")
held() { [[ $(squeue -h -j "$holder" -o %T) == RUNNING ]]; }
wait_for "the holder job to run" 30 held
job=$(sbatch --parsable -N1 -n1 -w n1 -t 5 -o "$WORK/launcher.log" -J partial \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --wait-ms 1000 --idle-exit 30")
CLEANUP_CMDS+=("scancel $job")
run=$(run_when_registered partial '{}')
[[ $(wait_run "$run" 60) == completed ]] || fail "the 1-rank step did not complete: $(api GET "/runs/$run")"
out=$(api GET "/runs/$run" | jq -r '.steps[0].output')
cpus=$(jq -r .cpus <<<"$out")
# The job's cpuset, as slurmstepd made it on n1 (the node's own subtree).
job_cpus=$(cat /sys/fs/cgroup/cpuset/scimesh-dev-*/n1/slurm*/uid_*/job_"$job"/cpuset.cpus 2>/dev/null | head -n1)
note "the job's cgroup allows cpus '$job_cpus'; the step ran on '$cpus' ($(jq -r .cgroup <<<"$out"))"
[[ -n $job_cpus && $job_cpus != *[,-]* ]] || fail "the launcher's job was not given one cpu: '$job_cpus'"
[[ $cpus == "$job_cpus" ]] || fail "the step ran on cpus '$cpus', not the job's '$job_cpus'"
two=$(run_start two '{}')
sleep 5
[[ $(api GET "/runs/$two" | jq -r '.steps[0].status') == queued ]] ||
  fail "a 2-rank step was taken by a 1-cpu allocation: $(api GET "/runs/$two")"
grep -qE "needs 2|largest offer 1|does not fit|no node" "$WORK/launcher.log" ||
  note "(the launcher did not log why the 2-rank step waits)"
note "a partial-node job's steps run only on the cpus its cgroup allows"
