#!/usr/bin/env bash
# System test on the dev cluster in --cgroup mode (ConstrainRAMSpace): a step
# that uses more memory than its allocation has is killed by the kernel's OOM
# killer inside the job's memory cgroup. It must end `unservable` with the
# limit and the node in its message (no attempt spent, not offered to this
# launcher again), both when the node agent forked it (1 rank) and when srun
# ran it (2 ranks); the launcher keeps serving: another step completes in
# the same allocation afterwards. Skipped (77) when the cluster runs without
# cgroups.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-memory
use_dev_cluster
if ! grep -q '^ProctrackType=proctrack/cgroup' "$SLURM_CONF"; then
  echo "SKIP: the dev cluster runs without cgroups (scripts/dev-cluster up --cgroup)"
  exit 77
fi
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"
# 600 MiB touched, in a job allowed 256 MiB per node.
hog="x = b'm' * (600 << 20); print(len(x))"
cat >"$WORK/defs.json" <<JSON
{"workflows": [{"workflow": "memory", "version": "1", "steps": [
  {"id": "hog1", "max_attempts": 1, "walltime_s": 60, "run": {"argv": ["python3", "-c", "$hog"], "mpi": "none"}},
  {"id": "hog2", "max_attempts": 1, "walltime_s": 60, "resources": {"nodes": 1, "ranks_per_node": 2},
   "run": {"argv": ["python3", "-c", "$hog"], "mpi": "none"}}]},
 {"workflow": "after", "version": "1", "steps": [
  {"id": "ok", "max_attempts": 1, "walltime_s": 60,
   "run": {"argv": ["sh", "-c", "echo '{\"fine\":true}' > \"\$SCIMESH_ATTEMPT_DIR/output.json\""], "mpi": "none"}}]}]}
JSON
job=$(sbatch --parsable -N1 -n2 --mem=256 -t 5 -o "$WORK/launcher.log" -J memory \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --events '$WORK/events.jsonl' --wait-ms 1000 --kill-grace 2 --idle-exit 60")
[[ -n $job ]] || fail "sbatch refused the allocation"
CLEANUP_CMDS+=("scancel $job")
run=$(run_when_registered memory '{}')
attempt_of() { api GET "/runs/$run" | jq -c --arg s "$1" '.steps[] | select(.step_id==$s) | .attempts[0] // empty'; }
ended() { [[ -n $(attempt_of "$1" | jq -r '.error.class // empty') ]]; }
for s in hog1 hog2; do
  wait_for "step $s's attempt to end" 90 ended "$s"
  a=$(attempt_of "$s")
  cls=$(jq -r .error.class <<<"$a")
  msg=$(jq -r .error.message <<<"$a")
  [[ $cls == unservable ]] || fail "step $s ended '$cls', not unservable: $a"
  [[ $msg == *"killed by the allocation's memory limit"*"n1"* ]] || fail "step $s's message does not name the limit and the node: $msg"
  note "$s: $cls: $msg"
done
[[ $(api GET "/runs/$run" | jq -r .status) == running ]] || fail "the run did not stay running: $(api GET "/runs/$run")"
grep -q "256 MiB on n1" <<<"$(attempt_of hog1 | jq -r .error.message)" || fail "hog1's message does not say 256 MiB: $(attempt_of hog1)"
note "the launcher keeps serving: a new run completes in the same allocation"
after=$(run_start after '{}')
[[ $(wait_run "$after" 60) == completed ]] || fail "the step after the OOM kills did not complete: $(api GET "/runs/$after")"
squeue -h -j "$job" | grep -q . || fail "the allocation ended: $(tail -n 20 "$WORK/launcher.log")"
api POST "/runs/$run/cancel" -d '{}' >/dev/null
note "a step over its allocation's memory ends unservable with the limit and node named; the launcher serves on"
