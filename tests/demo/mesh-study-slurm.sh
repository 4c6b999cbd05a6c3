#!/usr/bin/env bash
# System test on the dev cluster: the demo's mesh study as scripts/demo runs it
# (examples/mesh-study.json unchanged, one sbatch -N2 allocation running
# scimesh-launch, which finds the SPANK plugin), with what the demo only shows now asserted:
#  - every step completed; each solve ran 4 ranks on both nodes (the ranks'
#    own processor names, and the launcher's placement);
#  - the observed order of accuracy is between 1.8 and 2.2;
#  - each artifact's SHA-256 at the coordinator matches the file the step
#    wrote and the bytes the coordinator serves;
#  - a run cancelled during a 2-node solve stops it on all ranks (CG polls
#    cancelled(); the SPANK plugin also cancels the step at once): no rank is
#    left, the attempt is cancelled and the launcher reports nothing more.
source "$(dirname "$0")/../lib/harness.sh"
harness_init demo-mesh-study
repo=$(cd "$(dirname "$0")/../.." && pwd)
use_dev_cluster
: "${SCIMESH_EXAMPLES_PATH:?set by CTest}"
export PATH=$SCIMESH_EXAMPLES_PATH:$PATH  # the definitions name `poisson`, `convergence_report`
coordinator_start --lease-ttl-ms 15000 --heartbeat-ms 2000
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE

# The study as shipped, plus a solve that runs until cancelled (tol below
# round-off, no iteration cap worth the name) for the cancellation check.
jq '{workflows: [., {workflow: "endless-solve", version: "1", steps: [
      {id: "solve", input: {n: 48, tol: 1e-300, max_iterations: 100000000, write_solution: false},
       walltime_s: 300, max_attempts: 1, resources: {nodes: 2, ranks_per_node: 2, cpus_per_rank: 1},
       run: {argv: ["poisson"], native: true}}]}]}' "$repo/examples/mesh-study.json" >"$WORK/defs.json" ||
  fail "cannot read examples/mesh-study.json"

job=$(sbatch --parsable -N2 --ntasks-per-node=2 -t 10 -o "$WORK/launcher.log" -J mesh-study \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --events '$WORK/events.jsonl' --idle-exit 30 --wait-ms 2000 --kill-grace 60")
CLEANUP_CMDS+=("scancel $job")

start_first_run mesh-study 60 '{}' "the launcher in job $job registered mesh-study"
run=$RUN_ID
note "mesh-study run $run in job $job"
status=$(wait_run "$run" 240)
show=$(api GET "/runs/$run")
[[ $status == completed ]] || fail "run $run ended '$status': $show"
[[ $(jq -r '[.steps[] | .status] | unique | join(",")' <<<"$show") == completed ]] || fail "not every step completed: $show"

for s in solve-16 solve-32 solve-64; do
  out=$(jq -c --arg s "$s" '.steps[] | select(.step_id==$s) | .output' <<<"$show")
  note "$s: $(jq -r '"\(.iterations) iterations, L2 error \(.l2_error), ranks \(.ranks) on \(.hosts | join("+"))"' <<<"$out")"
  [[ $(jq -r .ranks <<<"$out") == 4 ]] || fail "$s did not run 4 ranks: $out"
  [[ $(jq -r '.hosts | join(",")' <<<"$out") == n1,n2 ]] || fail "$s's ranks did not run on both nodes: $out"
  [[ $(jq -r --arg s "$s" 'select(.event=="place" and .step_id==$s) | [.nodes[] | "\(.name):\(.ranks)"] | join(",")' \
    "$WORK/events.jsonl") == n1:2,n2:2 ]] || fail "$s was not placed 2 ranks per node on n1 and n2"
done

order=$(jq -r '.steps[] | select(.step_id=="report") | .output.observed_order' <<<"$show")
note "observed order of accuracy: $order"
awk -v p="$order" 'BEGIN { exit !(p >= 1.8 && p <= 2.2) }' || fail "observed order $order is outside [1.8, 2.2]"

# Every artifact: the coordinator's SHA-256 = the step's file = the bytes served.
n=0
while IFS=$'\t' read -r step name sha uri; do
  file=$(find "$WORK/spool/$run/$step" -path "*/artifacts/$name" | head -n1)
  [[ -n $file ]] || fail "$step's artifact $name is not in its attempt directory"
  [[ $(sha256sum "$file" | cut -d' ' -f1) == "$sha" ]] || fail "$step/$name: the step's file differs from the coordinator's SHA-256"
  curl -sS -f -H @"$WORK/exec.header" "$uri" -o "$WORK/download" || fail "cannot download $step/$name"
  [[ $(sha256sum "$WORK/download" | cut -d' ' -f1) == "$sha" ]] || fail "$step/$name: the served bytes differ from the SHA-256"
  n=$((n + 1))
done < <(jq -r '.steps[] | .step_id as $s | .artifacts[] | [$s, .name, .sha256, .uri] | @tsv' <<<"$show")
note "artifacts checked: $n"
((n >= 4)) || fail "expected a solution per solve and a convergence table, found $n artifacts"

note "cancel a run while its 2-node solve iterates"
crun=$(run_start endless-solve '{}')
running() { [[ $(api GET "/runs/$crun" | jq -r '.steps[0].attempts[-1].started_at // empty') != "" ]]; }
wait_for "the endless solve to start" 60 running
ranks_up() { [[ $(pgrep -xc poisson || true) == 4 ]]; }
wait_for "4 poisson ranks to run" 30 ranks_up
sleep 2  # let CG iterate a little: the cancel must land mid-solve
api POST "/runs/$crun/cancel" -d '{}' >/dev/null
no_ranks() { ! pgrep -x poisson >/dev/null; }
wait_for "every poisson rank to stop after the cancel" 30 no_ranks
[[ $(run_status "$crun") == cancelled ]] || fail "the run is not cancelled: $(api GET /runs/$crun)"
show=$(api GET "/runs/$crun")
[[ $(jq -r '.steps[0].attempts[-1].status' <<<"$show") == cancelled ]] || fail "the attempt is not cancelled: $show"
lease=$(jq -r '.steps[0].attempts[-1].lease_id' <<<"$show")
wait_for "the launcher to record the cancelled solve's outcome" 30 \
  grep -q "\"event\":\"outcome\",\"lease_id\":\"$lease\"" "$WORK/events.jsonl"
outcome=$(jq -r --arg l "$lease" 'select(.event=="outcome" and .lease_id==$l) | .outcome' "$WORK/events.jsonl")
[[ $outcome == abandoned ]] || fail "the launcher did not abandon the cancelled lease: outcome '$outcome'"
! grep -q "$lease.*fail " "$WORK/launcher.log" || fail "the launcher reported a fail for a lease it had lost"
note "cancelled solve: ranks stopped ($(jq -r --arg l "$lease" 'select(.event=="end" and .lease_id==$l) | .exit' "$WORK/events.jsonl")), lease abandoned, nothing reported"
note "mesh study on the dev cluster: OK"
