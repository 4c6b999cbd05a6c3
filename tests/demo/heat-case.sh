#!/usr/bin/env bash
# System test of examples/heat-case: an unmodified case-directory solver as
# one multi-node step, its serial mesh-and-decompose as run.setup and its
# serial reconstruction as run.finish. `slurm`: the definitions file as
# shipped (2 nodes x 2 ranks) in an sbatch -N2 allocation on the dev cluster;
# `local`: heat-case-workstation.json, the same step on 1 node x 2 ranks, on
# the local backend.
# Checks what a user sees: the run completed, the solve ran on every node,
# the reconstructed field is accurate, the artifact's SHA-256 matches.
source "$(dirname "$0")/../lib/harness.sh"
mode=${1:?local or slurm}
harness_init "demo-heat-case-$mode"
repo=$(cd "$(dirname "$0")/../.." && pwd)
: "${SCIMESH_EXAMPLES_PATH:?set by CTest}"
export PATH=$SCIMESH_EXAMPLES_PATH:$PATH  # the definitions name `heat_case`
defs=$repo/examples/heat-case/heat-case.json
if [[ $mode == slurm ]]; then
  use_dev_cluster
  coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000
  cp "$defs" "$WORK/defs.json"
  parts=4 hosts=n1,n2 placed=n1:2,n2:2
else
  coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 500 --grace-ms "$(scaled 1000)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
  cp "$repo/examples/heat-case/heat-case-workstation.json" "$WORK/defs.json"
  parts=2 hosts=$(hostname) placed=$(hostname):2
fi
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
flags=(--definitions "$WORK/defs.json" --spool "$WORK/spool" --events "$WORK/events.jsonl" --wait-ms 1000)
if [[ $mode == slurm ]]; then
  job=$(sbatch --parsable -N2 --ntasks-per-node=2 -t 5 -o "$WORK/launcher.log" -J heat-case \
    --wrap "exec '$SCIMESH_LAUNCH_BIN' ${flags[*]} --idle-exit 6 --drain-margin 20")
  CLEANUP_CMDS+=("scancel $job")
else
  "$SCIMESH_LAUNCH_BIN" "${flags[@]}" --backend local --idle-exit 4 >"$WORK/launcher.log" 2>&1 &
  CLEANUP_PIDS+=("$!")
fi

start_first_run heat-case 60
run=$RUN_ID
status=$(wait_run "$run" 120)
show=$(api GET "/runs/$run")
[[ $status == completed ]] || fail "run $run ended '$status': $show"

out=$(jq -c '.steps[0].output' <<<"$show")
note "heat-case output: $out"
[[ $(jq -r .parts <<<"$out") == "$parts" ]] || fail "the case was not solved in $parts parts: $out"
[[ $(jq -r '.hosts | unique | join(",")' <<<"$out") == "$hosts" ]] || fail "the solve did not run on $hosts: $out"
jq -e '.max_error < 1e-4' <<<"$out" >/dev/null || fail "the reconstructed field is not accurate: $out"
[[ $(jq -r '[.nodes[] | "\(.name):\(.ranks)"] | join(",")' <(grep '"event":"place"' "$WORK/events.jsonl")) == "$placed" ]] ||
  fail "the step was not placed as $placed"

dir=$(find "$WORK/spool/$run/solve" -mindepth 1 -maxdepth 1 -type d | head -n1)
grep -q "200 points in $parts parts" "$dir/setup.out" || fail "setup.out does not hold the mesh's output"
grep -q "max error" "$dir/finish.out" || fail "finish.out does not hold the reconstruction's output"
sha=$(jq -r '.steps[0].artifacts[] | select(.name=="field.csv") | .sha256' <<<"$show")
[[ $sha == $(sha256sum "$dir/artifacts/field.csv" | cut -d' ' -f1) ]] || fail "field.csv's SHA-256 differs from the coordinator's"
note "heat-case example, $mode backend: OK"
