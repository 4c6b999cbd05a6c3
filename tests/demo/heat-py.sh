#!/usr/bin/env bash
# System test of examples/heat-py: a numpy + mpi4py solver, its solve a
# Python step (`import scimesh`), as one 2-node x 1-rank step on the dev
# cluster, with its serial mesh as run.setup and its serial check as
# run.finish: heat-py.json as shipped, read in place (it names ./heat_py.py
# beside it), served by a launcher in an sbatch -N2 allocation.
# Checks what a user sees: the run completed; the solve ran on n1 and n2 in
# 2 parts; the field is accurate; the usage the step set; setup.out and
# finish.out; the artifact field.npy uploaded with its SHA-256.
source "$(dirname "$0")/../lib/harness.sh"
harness_init demo-heat-py-slurm
repo=$(cd "$(dirname "$0")/../.." && pwd)
# The step's `#!/usr/bin/env python3` runs the first python3 on PATH: the one
# with numpy and mpi4py (SCIMESH_PYTHON); scimesh from this build. sbatch
# passes both on to the launcher, srun to the step's processes.
mkdir -p "$WORK/python-bin"
ln -sf "${SCIMESH_PYTHON:?set by CTest}" "$WORK/python-bin/python3"
export PATH=$WORK/python-bin:$PATH PYTHONPATH=${SCIMESH_PYTHONPATH:?set by CTest}
use_dev_cluster
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
flags=(--definitions "$repo/examples/heat-py/heat-py.json" --spool "$WORK/spool" --events "$WORK/events.jsonl"
  --wait-ms 1000 --idle-exit 6 --drain-margin 20)
job=$(sbatch --parsable -N2 --ntasks-per-node=1 -t 5 -o "$WORK/launcher.log" -J heat-py \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' ${flags[*]}")
CLEANUP_CMDS+=("scancel $job")

start_first_run heat-py 60
run=$RUN_ID
status=$(wait_run "$run" 120)
show=$(api GET "/runs/$run")
dir=$(find "$WORK/spool/$run/solve" -mindepth 1 -maxdepth 1 -type d | head -n1)
[[ $status == completed ]] ||
  fail "run $run ended '$status': $show; step.err: $(tail -n 20 "$dir/step.err" 2>/dev/null)"

out=$(jq -c '.steps[0].output' <<<"$show")
note "heat-py output: $out"
[[ $(jq -r .parts <<<"$out") == 2 ]] || fail "the case was not solved in 2 parts: $out"
[[ $(jq -r '.hosts | join(",")' <<<"$out") == n1,n2 ]] || fail "the solve's ranks did not run on n1 and n2: $out"
jq -e '.max_error < 1e-4' <<<"$out" >/dev/null || fail "the field is not accurate (or check did not run): $out"
[[ $(jq -r '[.nodes[] | "\(.name):\(.ranks)"] | join(",")' <(grep '"event":"place"' "$WORK/events.jsonl")) == n1:1,n2:1 ]] ||
  fail "the step was not placed as n1:1,n2:1"
usage=$(jq -c '.steps[0].attempts[-1].usage' <<<"$show")
jq -e '.steps == 2000 and .points == 200 and .solve_s > 0' <<<"$usage" >/dev/null ||
  fail "the usage the step set is not in the attempt: $usage"

grep -q "200 points in 2 parts" "$dir/setup.out" || fail "setup.out does not hold the mesh's output"
grep -q "max error" "$dir/finish.out" || fail "finish.out does not hold the check's output"
sha=$(jq -r '.steps[0].artifacts[] | select(.name=="field.npy") | .sha256' <<<"$show")
[[ $sha == $(sha256sum "$dir/artifacts/field.npy" | cut -d' ' -f1) ]] ||
  fail "field.npy was not uploaded with the SHA-256 of the file: $(jq -c '.steps[0].artifacts' <<<"$show")"
"$SCIMESH_PYTHON" -c "import numpy, sys; sys.exit(numpy.load(sys.argv[1]).shape != (200,))" "$dir/artifacts/field.npy" ||
  fail "field.npy is not the 200-point field"
note "heat-py example on the dev cluster, one 2-node step: OK"
