#!/usr/bin/env bash
# System test on the dev cluster: what scimesh-alloc does not submit.
#  1. A partition that does not exist: --dry-run shows sbatch --test-only's
#     words and exits 1; served, each refusal is logged in SLURM's words,
#     after --failure-limit 2 in a row it pauses and says so, and sbatch is
#     not tried again during the pause.
#  2. A step no shape fits (3 nodes, shapes of at most 2): reported once,
#     nothing submitted, `status` says why.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/alloc-lib.sh"
alloc_test_init alloc-refusals
one_step_defs "$WORK/defs.json" refuse one 1
one_step_defs "$WORK/wide.json" wide three 3

note "1. sbatch refuses: a clear message, a pause, no submission loop"
common=(--state-dir "$WORK/state-r" --definitions "$WORK/defs.json" --spool "$WORK/spool" --workflow refuse
  --shape nodes=1,time=5,cores=2 --partition nosuch)
if "$SCIMESH_ALLOC_BIN" --name r "${common[@]}" --dry-run >"$WORK/dry.log" 2>&1; then
  fail "--dry-run with a partition that does not exist exited 0: $(cat "$WORK/dry.log")"
fi
grep -q "^shape 1 node x 00:05:00 x 2 cores: .*invalid partition" "$WORK/dry.log" || fail "--dry-run did not show SLURM's words: $(cat "$WORK/dry.log")"
grep -q "^exec '.*scimesh-launch' " "$WORK/dry.log" || fail "--dry-run did not print the batch script"
alloc_start r --workflow refuse --shape nodes=1,time=5,cores=2 --partition nosuch --failure-limit 2 --pause 30
alloc_registered r
run_start refuse '{}' >/dev/null
paused() { grep -q "paused for 30 s after 2 refusals in a row" "$WORK/alloc-r.log"; }
wait_for "scimesh-alloc to pause" 30 paused
sleep 8  # eight more decisions, all inside the pause
refusals=$(grep -c "sbatch refused" "$WORK/alloc-r.log")
[[ $refusals == 2 ]] || fail "$refusals refusals logged, not 2: sbatch was tried during the pause"
grep -q "sbatch refused (1 in a row): .*invalid partition" "$WORK/alloc-r.log" ||
  fail "the refusal is not in SLURM's words: $(grep refused "$WORK/alloc-r.log")"
grep -q "; paused [0-9]* s more after 2 sbatch refusals in a row" "$WORK/alloc-r.log" ||
  fail "the decision lines do not say it is paused"
no_jobs_of r || fail "a job was submitted: $(our_jobs r)"
kill "$ALLOC_PID"

note "2. a step no shape fits"
alloc_start w --definitions "$WORK/wide.json" --workflow wide --shape nodes=1,time=5 --shape nodes=2,time=5
alloc_registered w
run_start wide '{}' >/dev/null
reported() { grep -q "step wide/1/three (1 runnable) fits no --shape: needs 3 nodes, the shape has 2" "$WORK/alloc-w.log"; }
wait_for "the unfittable step to be reported" 30 reported
sleep 4
[[ $(grep -c "fits no --shape" "$WORK/alloc-w.log") == 1 ]] || fail "the unfittable step was reported more than once"
[[ $(submitted_count w) == 0 ]] && no_jobs_of w || fail "something was submitted for a step no shape fits"
"$SCIMESH_ALLOC_BIN" status --state-dir "$WORK/state-w" | grep -q "^wide/1/three .*no: needs 3 nodes, the shape has 2" ||
  fail "status does not say why: $("$SCIMESH_ALLOC_BIN" status --state-dir "$WORK/state-w")"
echo PASS
