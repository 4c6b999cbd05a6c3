#!/usr/bin/env bash
# System test on the dev cluster: a 3-node step in a 2-node allocation is not
# silent. The launcher warns at registration, `scimesh-coordinator run show`
# says "no worker can fit: needs 3 nodes, largest offer 2" beside the queued
# step, and the launcher's idle-exit line lists it.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-slurm-unfittable
use_dev_cluster
coordinator_start
cat >"$WORK/defs.json" <<'JSON'
{"workflow": "wide3", "version": "1", "steps": [
  {"id": "three", "resources": {"nodes": 3}, "walltime_s": 60, "run": {"argv": ["true"], "mpi": "none"}}]}
JSON
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
job=$(sbatch --parsable -N2 -t 5 -o "$WORK/job.log" \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --idle-exit 8 --wait-ms 1000 --drain-margin 20")
note "allocation: job $job"
CLEANUP_CMDS+=("scancel $job")

start_first_run wide3 60 '{}' "the launcher in job $job registered"
run=$RUN_ID
want="needs 3 nodes, largest offer 2"
show() { SCIMESH_TOKEN_FILE=$EXEC_TOKEN_FILE "$SCIMESH_COORDINATOR_BIN" run show "$run" "$@"; }
marked() { show >"$WORK/show.txt" 2>&1 && grep -qF "step three  queued  no worker can fit: $want" "$WORK/show.txt"; }
wait_for "run show to say why the 3-node step stays queued" 30 marked
cat "$WORK/show.txt"
[[ $(show --json | jq -r '.steps[0].unfittable.reason') == "$want" ]] || fail "run show --json: $(show --json)"

for _ in $(seq 200); do squeue -h -j "$job" | grep -q . || break; sleep 0.3; done
squeue -h -j "$job" | grep -q . && fail "the idle launcher did not leave the allocation"
grep -qF "cannot fit this allocation: step three (wide3@1): $want" "$WORK/job.log" ||
  fail "no warning at registration: $(tail -n 5 "$WORK/job.log")"
grep -qF "exiting; cannot fit this allocation: three (wide3@1): $want" "$WORK/job.log" ||
  fail "the idle-exit line does not list the step: $(grep idle "$WORK/job.log")"
note "3-node step in a 2-node allocation: named by the launcher and by run show"
