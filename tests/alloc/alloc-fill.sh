#!/usr/bin/env bash
# System test on the dev cluster: scimesh-alloc fills the queue and no more.
# 30 one-node steps and 4 two-node steps queued; scimesh-alloc with
# --max-jobs 2 --max-nodes 3 and shapes of 1 and 2 nodes:
#  - allocations appear and every step completes;
#  - sampled every 0.5 s, never more than 2 of its jobs nor 3 of their nodes;
#  - 60 s after the queue empties no job of its is left, and none was
#    submitted after;
#  - the batch script names the token file, never the token;
#  - `scimesh-alloc status` prints the table.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/alloc-lib.sh"
alloc_test_init alloc-fill

step_json() {  # ID NODES
  printf '{"id":"%s","max_attempts":1,"walltime_s":30,"resources":{"nodes":%s,"ranks_per_node":1},"run":{"argv":["sh","-c","sleep 1; if [ \\"${SLURM_PROCID:-0}\\" = 0 ]; then echo {} > output.json; fi"],"mpi":"none"}}' "$1" "$2"
}
{
  printf '{"workflows":[{"workflow":"fill","version":"1","steps":['
  for i in $(seq 1 30); do step_json "one-$i" 1; printf ','; done
  for i in 1 2 3 4; do step_json "two-$i" 2; [[ $i == 4 ]] || printf ','; done
  printf ']}]}\n'
} >"$WORK/defs.json"
jq -e '.workflows[0].steps | length == 34' "$WORK/defs.json" >/dev/null || fail "bad test definitions"

alloc_start fill --workflow fill --shape nodes=1,time=3 --shape nodes=2,time=3 --max-jobs 2 --max-nodes 3 --backlog 1
alloc_registered fill

# Sample its jobs while they run: "jobs nodes" per line.
( while :; do our_jobs fill | awk '{j++; n+=$3} END {print j+0, n+0}'; sleep 0.5; done ) >"$WORK/samples" 2>/dev/null &
CLEANUP_PIDS+=($!)

run=$(run_start fill '{}')
status=$(wait_run "$run" 300)
[[ $status == completed ]] || fail "run $run ended '$status': $(api GET "/runs/$run" | jq -c '[.steps[] | {step_id, status}]')"
note "every step completed; $(submitted_count fill) allocation(s) submitted"
(( $(submitted_count fill) >= 1 )) || fail "no allocation was submitted"
submitted_at_end=$(submitted_count fill)
wait_for "no job of scimesh-alloc's left, 60 s after the queue emptied" 60 no_jobs_of fill
sleep 3
[[ $(submitted_count fill) == "$submitted_at_end" ]] || fail "scimesh-alloc submitted after the queue emptied"
no_jobs_of fill || fail "a job was left: $(our_jobs fill)"

read -r most_jobs most_nodes < <(awk '$1 > j {j = $1} $2 > n {n = $2} END {print j+0, n+0}' "$WORK/samples")
note "at most $most_jobs jobs and $most_nodes nodes at once over $(wc -l <"$WORK/samples") samples"
((most_jobs >= 1)) || fail "the sampler never saw a job of scimesh-alloc's"
((most_jobs <= 2)) || fail "$most_jobs jobs at once, past --max-jobs 2"
((most_nodes <= 3)) || fail "$most_nodes nodes at once, past --max-nodes 3"

script=$WORK/state-fill/fill.sbatch
grep -q "SCIMESH_TOKEN_FILE='$WORKER_TOKEN_FILE'" "$script" || fail "the batch script does not name the token file"
! grep -qF "$(cat "$WORKER_TOKEN_FILE")" "$script" || fail "the batch script holds the token"
! grep -qF "$(cat "$WORKER_TOKEN_FILE")" "$WORK/alloc-fill.log" || fail "the log holds the token"

table=$("$SCIMESH_ALLOC_BIN" status --state-dir "$WORK/state-fill") || fail "scimesh-alloc status failed"
grep -q "^STEP .*RUNNABLE" <<<"$table" || fail "status prints no demand table: $table"
grep -q "^JOB .*STATE" <<<"$table" || fail "status prints no job table: $table"
grep -q "running, pid $ALLOC_PID" <<<"$table" || fail "status does not say scimesh-alloc runs: $table"
kill "$ALLOC_PID"
wait "$ALLOC_PID" || fail "scimesh-alloc exited $? on SIGTERM, not 0"
grep -q "(not running)" <<<"$("$SCIMESH_ALLOC_BIN" status --state-dir "$WORK/state-fill")" ||
  fail "status does not say scimesh-alloc stopped"
echo PASS
