#!/usr/bin/env bash
# Benchmark on the dev cluster: scimesh-alloc against hand-submitted allocations.
#  1. First step: with the cluster empty, the seconds from "run started" to
#     "first step running" (the coordinator's started_at), scimesh-alloc at
#     --interval 5 (REPS times).
#  2. A bursty workload (BURSTS bursts of STEPS one-node, one-core steps of
#     STEP_S seconds, GAP_S apart), run twice: by scimesh-alloc (shape 1 node,
#     --max-jobs 2, --idle-exit 10), and by 2 hand-submitted 1-node
#     allocations of the same shape submitted at the start, with an
#     --idle-exit that spans the gaps. Allocated node-seconds are sampled
#     from squeue every 0.5 s (running jobs x nodes); busy node-seconds are
#     the steps' started_at..ended_at times half a node (1 of 2 cores); idle
#     is the difference. Also the mean time of a burst (run start to end).
# Prints the figures and writes them to $WORK/results.env. CTest runs it small
# (SCIMESH_BENCH_CTEST_SIZE=small); SCIMESH_BENCH_SIZE=full gives the sizes
# docs/performance.md quotes.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/alloc-lib.sh"
source "$(dirname "$0")/../launcher/bench/bench-lib.sh"
alloc_test_init alloc-bench
REPS=$(sized 1 5) BURSTS=$(sized 2 3) STEPS=$(sized 4 20) STEP_S=$(sized 2 10) GAP_S=$(sized 15 120)

burst_defs() {  # FILE: one workflow "burst" of STEPS one-core steps of STEP_S s
  {
    printf '{"workflows":[{"workflow":"burst","version":"1","steps":['
    for i in $(seq 1 "$STEPS"); do
      printf '{"id":"s%s","max_attempts":1,"walltime_s":60,"run":{"argv":["sh","-c","sleep %s; echo {} > output.json"],"mpi":"none"}}' "$i" "$STEP_S"
      [[ $i == "$STEPS" ]] || printf ','
    done
    printf ']}]}\n'
  } >"$1"
}
iso_s() { date -d "$1" +%s.%N; }
# first_started RUN: the earliest started_at of RUN's attempts, in epoch seconds.
first_started() { iso_s "$(api GET "/runs/$1" | jq -r '[.steps[].attempts[].started_at // empty] | min')"; }
# busy_node_s RUN: sum of the attempts' run times x 0.5 node.
busy_node_s() {
  api GET "/runs/$1" | jq -r '.steps[].attempts[] | "\(.started_at) \(.ended_at)"' | while read -r a b; do
    echo "$(iso_s "$a") $(iso_s "$b")"
  done | awk '{s += ($2 - $1) * 0.5} END {printf "%.1f", s}'
}
# sample_nodes NAME FILE: every 0.5 s, the nodes of NAME's running jobs (job name NAME).
sample_nodes() {
  ( while :; do squeue -h --name="$1" -t RUNNING -o %D | awk '{n += $1} END {print n+0}'; sleep 0.5; done ) >"$2" 2>/dev/null &
  SAMPLER=$!
  CLEANUP_PIDS+=("$SAMPLER")
}
allocated_node_s() { awk '{s += $1 * 0.5} END {printf "%.1f", s}' "$1"; }

burst_defs "$WORK/defs.json"

note "1. run started -> first step running, empty cluster ($REPS time(s))"
alloc_start first --workflow burst --shape nodes=1,time=5 --interval 5 --idle-exit 5
alloc_registered first
for rep in $(seq 1 "$REPS"); do
  wait_for "an empty cluster" 120 no_jobs_of first
  t0=$EPOCHREALTIME
  run=$(run_start burst '{}')
  [[ $(wait_run "$run" 300) == completed ]] || fail "run $run did not complete"
  first=$(calc "$(first_started "$run") - $t0" 1)
  note "rep $rep: first step running after $first s"
  record "first_step_s_$rep" "$first"
done
kill "$ALLOC_PID"
wait "$ALLOC_PID" 2>/dev/null || true
wait_for "an empty cluster" 120 no_jobs_of first

# bursts LABEL: BURSTS runs, each started GAP_S after the previous completed;
# sets RUNS, and BURST_S to the mean seconds from a run's start to its end.
bursts() {
  local i run t0 total=0
  RUNS=()
  for i in $(seq 1 "$BURSTS"); do
    t0=$EPOCHREALTIME
    run=$(run_start burst '{}')
    RUNS+=("$run")
    [[ $(wait_run "$run" 600) == completed ]] || fail "$1: run $run did not complete"
    total=$(calc "$total + $EPOCHREALTIME - $t0" 1)
    ((i == BURSTS)) || sleep "$GAP_S"
  done
  BURST_S=$(calc "$total / $BURSTS" 1)
}
busy_of() { local s=0 r; for r in "$@"; do s=$(calc "$s + $(busy_node_s "$r")" 1); done; echo "$s"; }

note "2a. bursty workload, scimesh-alloc"
sample_nodes scimesh-alloc-bursty "$WORK/nodes-alloc"
alloc_start bursty --workflow burst --shape nodes=1,time=10 --max-jobs 2 --interval 2 --idle-exit 10
bursts alloc
wait_for "its allocations to end" 120 no_jobs_of bursty
kill "$SAMPLER" "$ALLOC_PID"
alloc_ns=$(allocated_node_s "$WORK/nodes-alloc") alloc_burst_s=$BURST_S
alloc_busy=$(busy_of "${RUNS[@]}")

note "2b. bursty workload, 2 hand-submitted allocations"
sample_nodes hand "$WORK/nodes-hand"
for h in 1 2; do
  job=$(sbatch --parsable -N1 --ntasks-per-node=2 -t 10 -J hand -o "$WORK/hand-$h.log" \
    --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --wait-ms 1000 --drain-margin 20 --idle-exit $((GAP_S + 20))")
  CLEANUP_CMDS+=("scancel $job")
done
hand_running() { [[ $(squeue -h --name=hand -t RUNNING | wc -l) == 2 ]]; }
wait_for "both hand-submitted allocations to run" 120 hand_running
bursts hand
hand_gone() { [[ -z $(squeue -h --name=hand) ]]; }
wait_for "the hand-submitted allocations to end" $((GAP_S + 120)) hand_gone
kill "$SAMPLER"
hand_ns=$(allocated_node_s "$WORK/nodes-hand") hand_burst_s=$BURST_S
hand_busy=$(busy_of "${RUNS[@]}")

alloc_idle=$(calc "$alloc_ns - $alloc_busy" 1) hand_idle=$(calc "$hand_ns - $hand_busy" 1)
record alloc_allocated_node_s "$alloc_ns"
record alloc_idle_node_s "$alloc_idle"
record hand_allocated_node_s "$hand_ns"
record hand_idle_node_s "$hand_idle"
record alloc_burst_s "$alloc_burst_s"
record hand_burst_s "$hand_burst_s"
note "workload: $BURSTS bursts x $STEPS steps x $STEP_S s, $GAP_S s apart (busy $alloc_busy / $hand_busy node-s)"
note "scimesh-alloc: $alloc_ns node-s allocated, $alloc_idle idle; a burst took $alloc_burst_s s"
note "hand-submitted: $hand_ns node-s allocated, $hand_idle idle; a burst took $hand_burst_s s"
cat "$WORK/results.env"
echo PASS
