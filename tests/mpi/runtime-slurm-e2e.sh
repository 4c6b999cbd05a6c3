#!/usr/bin/env bash
# System test of the MPI runtime on the dev cluster (srun -N2 -n4 through an
# sbatch allocation running scimesh-launch): a run cancelled mid-step reaches
# all 4 ranks on both nodes; a C step over 4 ranks on n1 and
# n2 completes with its lease heartbeated from one connection per holder
# (never one per rank) for 1, 2 and 4 ranks; every rank's affinity equals its
# assignment; an unmodified program whose rank 2 dies of SIGSEGV fails with
# the signal named.
source "$(dirname "$0")/../lib/harness.sh"
harness_init mpi-runtime-slurm
use_dev_cluster
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 500 --grace-ms 2000 --retry-base-ms 100 --log-level debug

step() {  # id, nodes, ranks_per_node, argv, native, [env json]
  local env=${6:-}
  [[ -n $env ]] || env='{}'
  echo "{\"id\": \"$1\", \"walltime_s\": 60, \"max_attempts\": 1, \"input\": {\"terms\": 200000},
    \"resources\": {\"nodes\": $2, \"ranks_per_node\": $3},
    \"run\": {\"argv\": [\"$4\"], \"native\": $5, \"env\": $env}}"
}
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "rt", "version": "1", "steps": [
    $(step c1 1 1 "$SCIMESH_STEP_C_BIN" true),
    $(step c2 2 1 "$SCIMESH_STEP_C_BIN" true),
    $(step c4 2 2 "$SCIMESH_STEP_C_BIN" true),
    $(step affinity 2 2 "$SCIMESH_AFFINITY_BIN" false)]},
  {"workflow": "crash", "version": "1", "steps": [
    $(step rank2 2 2 "$SCIMESH_CRASH_RANK_BIN" false '{"CRASH_RANK": "2"}')]},
  {"workflow": "cancel", "version": "1", "steps": [
    {"id": "wait4", "walltime_s": 120, "max_attempts": 1, "input": {"wait_for_cancel": true},
     "resources": {"nodes": 2, "ranks_per_node": 2}, "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}}]}
]}
JSON
jq . "$WORK/defs.json" >/dev/null || fail "bad test definitions"

export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
# --spank=no: every rank must see cancelled() itself, not the plugin's SIGTERM.
job=$(sbatch --parsable -N2 --ntasks-per-node=2 -t 5 -o "$WORK/job.log" \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --idle-exit 6 --wait-ms 2000 --drain-margin 20 --spank=no")
CLEANUP_CMDS+=("scancel $job")
start_first_run rt 60 '{}' "the launcher in job $job registered"
r1=$RUN_ID
r2=$(run_start crash '{}')
r3=$(run_start cancel '{}')

# A run cancelled while its 4-rank step runs: every rank on both nodes sees it.
cancel_held_step "$r3" wait4 4 120
out=$CANCELLED_OUT
cancelled_at=$(api GET "/runs/$r3/journal" | jq -r '.events[] | select(.type=="run_cancelled") | .at')
last_rank=$(sed -n 's/.*cancelled=1 at \([0-9.]*\)/\1/p' "$out" | sort -n | tail -n1)
note "4 ranks on n1+n2: run cancelled -> last rank saw it: $(awk -v a="$(date -d "$cancelled_at" +%s.%N)" -v b="$last_rank" \
  'BEGIN{printf "%.0f ms (includes up to one heartbeat interval, 500 ms)", (b-a)*1000}')"

for r in "$r1" "$r2" "$r3"; do echo "$(wait_run "$r" 150)" >"$WORK/status-$r"; done
[[ $(<"$WORK/status-$r3") == cancelled ]] || fail "the cancel run should be cancelled"
[[ $(<"$WORK/status-$r1") == completed ]] || fail "rt: $(<"$WORK/status-$r1"): $(api GET /runs/$r1)"
[[ $(<"$WORK/status-$r2") == failed ]] || fail "the rank-2 crash run should fail"

show=$(api GET "/runs/$r1")
out() { jq -r ".steps[] | select(.step_id==\"$1\") | .output.$2" <<<"$show"; }
[[ $(out c4 ranks) == 4 && $(out c4 sum) == 20000100000 ]] || fail "c4 output: $show"
[[ $(out affinity ranks) == 4 ]] || fail "affinity step did not run 4 ranks"
[[ $(out affinity mismatches) == 0 ]] || fail "some rank's affinity differs from its assignment: $show"
hosts=$(jq -r '.steps[] | select(.step_id=="affinity") | .output.hosts | join(",")' <<<"$show")
note "affinity step ranks ran on: $hosts"
[[ $hosts == *n1* && $hosts == *n2* ]] || fail "the 4-rank step did not span n1 and n2"

# Heartbeats per lease, by connection: the launcher's (before rank 0 took
# over, and after it ended) and rank 0's -- never one per rank.
for id in c1 c2 c4; do
  lease=$(jq -r ".steps[] | select(.step_id==\"$id\") | .attempts[-1].lease_id" <<<"$show")
  # A step shorter than one heartbeat interval may send none at all (grep
  # finding nothing must not end the test silently under pipefail).
  peers=$({ grep "request POST /v1/api/steps/$lease/heartbeat" "$WORK/coordinator.log" || true; } |
    sed 's/.* from //' | sort -u | wc -l)
  note "step $id: heartbeats from $peers connection(s)"
  (( peers <= 3 )) || fail "step $id heartbeats came from $peers connections (4 ranks: one per rank?)"
done

msg=$(api GET "/runs/$r2" | jq -r '.steps[0].attempts[-1].error.message')
note "rank-2 crash failed with: $msg"
[[ $msg == *"signal 11"* || $msg == *"Segmentation fault"* ]] || fail "the crash's fail message does not name the signal: $msg"
note "MPI runtime on the dev cluster: OK"
