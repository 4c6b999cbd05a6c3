#!/usr/bin/env bash
# Benchmark (figures only, never timing asserts): scimesh-launch against plain
# `srun --exact` and GNU parallel + srun in one `sbatch -N2` allocation on the
# dev cluster, and the launcher's RSS and idle CPU while it holds 100 steps.
#
# Usage: launcher-bench.sh            (CTest launcher_bench sets the *_BIN env)
# It fails only when something did not work (a step, a baseline command, the
# launcher's exit); the figures go to stdout as a Markdown table.
#
# Parameters (environment, defaults in brackets):
#   SCIMESH_BENCH_CHAIN_STEPS   steps of the dispatch chain [20]
#   SCIMESH_BENCH_TINY_STEPS    independent tiny steps [40]
#   SCIMESH_BENCH_TINY_SLEEP    seconds each tiny step sleeps [0.2]
#   SCIMESH_BENCH_MIXED         mixed workload, "NODES:RANKS_PER_NODE:SECONDS" items, queue order
#   SCIMESH_BENCH_HELD_STEPS    steps the launcher holds for RSS/CPU [100]
#   SCIMESH_BENCH_QUIET_S       the quiet interval of the idle-CPU figure [20]
#   SCIMESH_BENCH_TOPOLOGY      hwloc synthetic topology of that launcher ["pack:2 core:64 pu:1"]
source "$(dirname "$0")/../../lib/harness.sh"

CHAIN_STEPS=${SCIMESH_BENCH_CHAIN_STEPS:-20}
TINY_STEPS=${SCIMESH_BENCH_TINY_STEPS:-40}
TINY_SLEEP=${SCIMESH_BENCH_TINY_SLEEP:-0.2}
# The 2-node steps come first: see "Known launcher limits" in docs/performance.md
# (a 2-node step offered in one claim after 1-cpu steps cannot be placed).
MIXED=${SCIMESH_BENCH_MIXED:-"2:2:2 2:1:3 2:1:3 1:1:4 1:1:1 1:1:2 1:1:3 1:1:1 1:1:4 1:1:2 1:1:1 1:1:2 1:1:3 1:1:1"}
HELD_STEPS=${SCIMESH_BENCH_HELD_STEPS:-100}
QUIET_S=${SCIMESH_BENCH_QUIET_S:-20}
TOPOLOGY=${SCIMESH_BENCH_TOPOLOGY:-"pack:2 core:64 pu:1"}

now() { echo "$EPOCHREALTIME"; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
record() { echo "$1=$2" >>"$WORK/results.env"; }

# The step programs: the launcher and the baselines run exactly these.
write_step_programs() {
  printf '#!/bin/sh\n# A trivial step: an empty result.\necho "{}" > output.json\n' >"$WORK/trivial.sh"
  printf '#!/bin/sh\n# A tiny step.\nsleep %s\necho "{}" > output.json\n' "$TINY_SLEEP" >"$WORK/tiny.sh"
  cat >"$WORK/mixed.sh" <<'SH'
#!/bin/sh
# A step of the mixed workload: every rank sleeps $1 s; rank 0 writes the result.
sleep "$1"
if [ "${SLURM_PROCID:-0}" = 0 ]; then echo "{}" > output.json; fi
SH
  cat >"$WORK/held.sh" <<'SH'
#!/bin/sh
# A held step: waits (no CPU) until the benchmark releases the gate lock $1.
flock -s "$1" true
echo "{}" > output.json
SH
  chmod +x "$WORK"/{trivial,tiny,mixed,held}.sh
}

# The definitions the launcher inside the allocation serves.
write_definitions() {
  jq -n --arg dir "$WORK" --argjson n "$CHAIN_STEPS" --argjson m "$TINY_STEPS" --arg mixed "$MIXED" '
    def one($id; $prog): {id: $id, max_attempts: 1, walltime_s: 60, run: {argv: [$prog], mpi: "none"}};
    {workflows: [
      {workflow: "bench-chain", version: "1", steps: [range(1; $n + 1) as $i |
        one("c\($i)"; "\($dir)/trivial.sh") + (if $i > 1 then {needs: ["c\($i - 1)"]} else {} end)]},
      {workflow: "bench-tiny", version: "1", steps: [range(1; $m + 1) as $i | one("t\($i)"; "\($dir)/tiny.sh")]},
      {workflow: "bench-mixed", version: "1", steps: [$mixed | split(" ") | map(select(. != "")) | to_entries[] |
        (.value | split(":") | map(tonumber)) as [$nodes, $rpn, $secs] |
        {id: "m\(.key + 1)", max_attempts: 1, walltime_s: ($secs + 30),
         resources: {nodes: $nodes, ranks_per_node: $rpn, cpus_per_rank: 1},
         run: {argv: ["\($dir)/mixed.sh", "\($secs)"], mpi: "none"}}]}]}' >"$WORK/defs.json"
  # One file per launcher: see launcher_run.
  local w
  for w in bench-chain bench-tiny bench-mixed; do
    jq --arg w "$w" '{workflows: [.workflows[] | select(.workflow == $w)]}' "$WORK/defs.json" >"$WORK/defs-$w.json"
  done
}

# total_cpus "2(x2),4": the cpus of SLURM_JOB_CPUS_PER_NODE.
total_cpus() {
  local part total=0
  local -a parts
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ $part =~ ^([0-9]+)\(x([0-9]+)\)$ ]]; then
      total=$((total + BASH_REMATCH[1] * BASH_REMATCH[2]))
    else
      total=$((total + part))
    fi
  done
  echo "$total"
}

# launcher_run WORKFLOW STEPS: starts a fresh launcher in the allocation,
# runs one workflow through it, stops it (SIGTERM: drain, exit 0); records
# <workflow>_s (run created -> last outcome) and the run id.
# A fresh launcher per phase, because a claim held from an earlier phase
# carries stale free capacity. Its own worker_id and only its own workflow,
# because the coordinator keeps holding a stopped launcher's long-poll claim
# and hands leases to it that nobody receives (they expire unstarted and
# spend the step's only attempt): see docs/performance.md, "Launcher".
launcher_run() {
  local workflow=$1 steps=$2 t0 run status last n launcher rc=0
  local events=$WORK/events-$workflow.jsonl
  "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs-$workflow.json" --spool "$WORK/spool" --events "$events" \
    --worker-id "slurm/$SLURM_JOB_ID/${SLURMD_NODENAME:-batch}/$workflow" --scimesh-rank "$SCIMESH_RANK_BIN" \
    --idle-exit 0 --drain-margin 30 --drain-grace 5 --kill-grace 2 >"$WORK/launcher-$workflow.log" 2>&1 &
  launcher=$!
  trap "kill $launcher 2>/dev/null || true" EXIT
  launcher_up() { [[ -s $events ]] && grep -q '"allocation"' "$events"; }
  wait_for "the launcher registered" 60 launcher_up
  t0=$(now)
  run=$(run_start "$workflow" '{}')
  local deadline=$((SECONDS + 180)) bad
  while :; do
    status=$(run_status "$run")
    [[ $status == completed ]] && break
    [[ $status =~ ^(failed|timed_out|cancelled)$ ]] && fail "launcher run of $workflow ended '$status': $(api GET "/runs/$run")"
    # A step that did not complete may be requeued for ever (unservable): say which at once.
    bad=$(jq -rs --arg r "$run" '[.[] | select(.event == "outcome" and .run_id == $r and .outcome != "completed") |
      "step \(.step_id): \(.outcome) (\(.detail))"] | join("; ")' "$events")
    [[ -z $bad ]] || fail "launcher run of $workflow: $bad (launcher-$workflow.log says why)"
    ((SECONDS < deadline)) || fail "launcher run of $workflow still '$status' after 180 s"
    sleep 0.3
  done
  n=$(jq -s --arg r "$run" '[.[] | select(.event == "outcome" and .run_id == $r and .outcome == "completed")] | length' "$events")
  ((n == steps)) || fail "$workflow: $n of $steps steps reported completed in the events file"
  last=$(jq -s --arg r "$run" '[.[] | select(.event == "outcome" and .run_id == $r) | .t] | max' "$events")
  record "${workflow//-/_}_s" "$(calc "$last - $t0")"
  record "${workflow//-/_}_run" "$run"
  kill -TERM "$launcher"
  wait "$launcher" || rc=$?
  trap - EXIT
  ((rc == 0)) || fail "the launcher of $workflow exited $rc after SIGTERM (drain)"
}

# Inside the allocation: the baselines and the launcher, one after another.
in_allocation() {
  : "${WORK:?exported by the benchmark}"
  local cpus scratch t0 t1 i
  record job_started "$(now)"
  cpus=$(total_cpus "$SLURM_JOB_CPUS_PER_NODE")
  record job "$SLURM_JOB_ID"
  record job_nodes "$SLURM_JOB_NODELIST"
  record cpus "$cpus"
  scratch=$WORK/baseline
  mkdir -p "$scratch"

  note "1. dispatch: $CHAIN_STEPS x srun --exact (one after another)"
  t0=$(now)
  for ((i = 0; i < CHAIN_STEPS; i++)); do
    srun --exact -N1 -n1 --ntasks-per-node=1 -c1 --chdir="$scratch" "$WORK/trivial.sh" 2>>"$WORK/baseline-srun.log" ||
      fail "baseline srun failed"
  done
  t1=$(now)
  record srun_chain_s "$(calc "$t1 - $t0")"
  note "1. dispatch: $CHAIN_STEPS x srun --exact scimesh-rank -- (the wrapper, no lease)"
  t0=$(now)
  for ((i = 0; i < CHAIN_STEPS; i++)); do
    srun --exact -N1 -n1 --ntasks-per-node=1 -c1 --chdir="$scratch" "$SCIMESH_RANK_BIN" -- "$WORK/trivial.sh" \
      2>>"$WORK/baseline-rank.log" || fail "baseline srun of scimesh-rank failed"
  done
  t1=$(now)
  record srun_rank_chain_s "$(calc "$t1 - $t0")"
  note "1. dispatch: chain of $CHAIN_STEPS steps through scimesh-launch"
  launcher_run bench-chain "$CHAIN_STEPS"

  note "2. throughput: $TINY_STEPS x sleep $TINY_SLEEP via parallel -j $cpus srun --exact"
  t0=$(now)
  seq "$TINY_STEPS" | parallel --will-cite -j "$cpus" \
    srun --exact -N1 -n1 --ntasks-per-node=1 -c1 --chdir="$scratch" "$WORK/tiny.sh" 2>>"$WORK/baseline-parallel.log" ||
    fail "a baseline srun under GNU parallel failed (see baseline-parallel.log)"
  t1=$(now)
  record parallel_tiny_s "$(calc "$t1 - $t0")"
  note "2. throughput: $TINY_STEPS tiny steps through scimesh-launch"
  launcher_run bench-tiny "$TINY_STEPS"

  note "3. utilization: mixed workload via parallel -j $cpus srun --exact (each job its own size)"
  local item nodes rpn secs
  for item in $MIXED; do
    IFS=: read -r nodes rpn secs <<<"$item"
    echo "$nodes $rpn $((nodes * rpn)) $secs"
  done >"$WORK/mixed.list"
  t0=$(now)
  parallel --will-cite -j "$cpus" --colsep ' ' \
    srun --exact -N{1} --ntasks-per-node={2} -n{3} -c1 --chdir="$scratch" "$WORK/mixed.sh" {4} \
    :::: "$WORK/mixed.list" 2>>"$WORK/baseline-mixed.log" ||
    fail "a baseline srun of the mixed workload failed (see baseline-mixed.log)"
  t1=$(now)
  record parallel_mixed_s "$(calc "$t1 - $t0")"
  note "3. utilization: mixed workload through scimesh-launch"
  launcher_run bench-mixed "$(wc -w <<<"$MIXED")"

  record srun_waits "$(cat "$WORK"/baseline-*.log | grep -c 'temporarily disabled' || true)"
  record job_ended "$(now)"
}

if [[ ${1:-} == in-allocation ]]; then
  in_allocation
  exit 0
fi

harness_init launcher-bench
: "${SCIMESH_LAUNCH_BIN:?set by CTest}" "${SCIMESH_RANK_BIN:?set by CTest}"
command -v parallel >/dev/null || fail "GNU parallel is not installed (scripts/install-deps)"
use_dev_cluster
# 100 held steps keep ~3 keep-alive connections each (launcher, rank 0).
coordinator_start --threads 512 --retry-base-ms 200
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE WORK SCIMESH_BENCH_CHAIN_STEPS=$CHAIN_STEPS \
  SCIMESH_BENCH_TINY_STEPS=$TINY_STEPS SCIMESH_BENCH_TINY_SLEEP=$TINY_SLEEP SCIMESH_BENCH_MIXED=$MIXED
write_step_programs
write_definitions
: >"$WORK/results.env"
submitted=$(now)

# --- 1-3: one sbatch -N2 allocation; sbatch --wait returns the job's status ---
# --wrap, not the script itself: sbatch copies a script away from harness.sh.
sbatch --wait --parsable -N2 --ntasks-per-node=2 -t 8 -o "$WORK/job.log" \
  --wrap "exec bash '$(cd "$(dirname "$0")" && pwd)/$(basename "$0")' in-allocation" >"$WORK/job.id" &
sbatch_pid=$!
wait_for "the job was submitted" 30 test -s "$WORK/job.id"
job=$(<"$WORK/job.id")
CLEANUP_CMDS+=("scancel $job")
note "allocation: job $job"
wait "$sbatch_pid" || fail "job $job failed (job.log above)"
cat "$WORK/job.log"

# --- 4: a launcher holding HELD_STEPS steps (local backend, synthetic topology) ---
# The dev cluster has 4 cpus; a launcher with 100 placements needs 100, and
# the cluster is shared, so the local backend reads a synthetic topology
# (hwloc honours HWLOC_SYNTHETIC). The steps wait on a lock and use no cpu.
jq -n --arg dir "$WORK" --argjson n "$HELD_STEPS" '{workflows: [{workflow: "bench-held", version: "1", steps:
  [range(1; $n + 1) as $i | {id: "h\($i)", max_attempts: 1, walltime_s: 600,
   run: {argv: ["\($dir)/held.sh", "\($dir)/gate"], mpi: "none"}}]}]}' >"$WORK/defs-held.json"
env -u SLURM_JOB_ID -u SLURM_JOBID HWLOC_SYNTHETIC="$TOPOLOGY" "$SCIMESH_LAUNCH_BIN" --backend local \
  --definitions "$WORK/defs-held.json" --spool "$WORK/spool-held" --events "$WORK/events-held.jsonl" \
  --scimesh-rank "$SCIMESH_RANK_BIN" --concurrency 128 --idle-exit 0 --drain-grace 5 --kill-grace 2 >"$WORK/launcher-held.log" 2>&1 &
held_launcher=$!
CLEANUP_PIDS+=("$held_launcher")
held_up() { [[ -s $WORK/events-held.jsonl ]] && grep -q '"allocation"' "$WORK/events-held.jsonl"; }
wait_for "the local launcher registered" 60 held_up
held_pus=$(jq -s '[.[] | select(.event == "allocation") | .nodes[].cpus] | add' "$WORK/events-held.jsonl")
((held_pus >= HELD_STEPS)) || fail "the synthetic topology gives $held_pus cpus, fewer than $HELD_STEPS steps"
exec 9>"$WORK/gate"
flock -x 9
t0=$(now)
held_run=$(run_start bench-held '{}')
started_count() { jq -s '[.[] | select(.event == "start")] | length' "$WORK/events-held.jsonl"; }
all_started() { (($(started_count) >= HELD_STEPS)); }
wait_for "$HELD_STEPS held steps started" 180 all_started
ramp=$(jq -s '[.[] | select(.event == "start") | .t] | max' "$WORK/events-held.jsonl")
note "all $HELD_STEPS steps running; measuring for $QUIET_S s"
# Wrapper processes (scimesh-rank, rank 0 of each step) are the launcher's children.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
children_ticks() {
  local pid sum=0
  for pid in $(pgrep -P "$held_launcher"); do sum=$((sum + $(ticks "$pid" 2>/dev/null || echo 0))); done
  echo "$sum"
}
# PSS, not RSS: the wrappers share their libraries' pages; RSS would count them 100 times.
children_pss_kib() {
  local pid sum=0
  for pid in $(pgrep -P "$held_launcher"); do
    sum=$((sum + $(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)))
  done
  echo "$sum"
}
hz=$(getconf CLK_TCK)
l0=$(ticks "$held_launcher") c0=$(children_ticks) q0=$(now)
sleep "$QUIET_S"  # the measured interval itself, not a wait for a condition
l1=$(ticks "$held_launcher") c1=$(children_ticks) q1=$(now)
status_file=/proc/$held_launcher/status
record held_hwm_kib "$(awk '/^VmHWM/ {print $2}' "$status_file")"
record held_rss_kib "$(awk '/^VmRSS/ {print $2}' "$status_file")"
record held_threads "$(awk '/^Threads/ {print $2}' "$status_file")"
record held_children "$(pgrep -c -P "$held_launcher")"
record held_children_pss_kib "$(children_pss_kib)"
record held_cpu_pct "$(calc "100 * ($l1 - $l0) / $hz / ($q1 - $q0)" 2)"
record held_children_cpu_pct "$(calc "100 * ($c1 - $c0) / $hz / ($q1 - $q0)" 2)"
record held_ramp_s "$(calc "$ramp - $t0" 1)"
record held_pus "$held_pus"
flock -u 9
exec 9>&-
status=$(wait_run "$held_run" 180)
[[ $status == completed ]] || fail "the held run ended '$status'"
kill -TERM "$held_launcher"
rc=0
wait "$held_launcher" || rc=$?
((rc == 0)) || fail "the local launcher exited $rc after SIGTERM (drain)"

# --- the table ---
source "$WORK/results.env"
mixed_steps=$(wc -w <<<"$MIXED")
mixed_work=0
for item in $MIXED; do
  IFS=: read -r nodes rpn secs <<<"$item"
  mixed_work=$((mixed_work + nodes * rpn * secs))
done
srun_step=$(calc "$srun_chain_s / $CHAIN_STEPS")
launch_step=$(calc "$bench_chain_s / $CHAIN_STEPS")
rank_step=$(calc "$srun_rank_chain_s / $CHAIN_STEPS")
par_rate=$(calc "$TINY_STEPS / $parallel_tiny_s" 1)
launch_rate=$(calc "$TINY_STEPS / $bench_tiny_s" 1)
par_util=$(calc "100 * $mixed_work / ($cpus * $parallel_mixed_s)" 0)
launch_util=$(calc "100 * $mixed_work / ($cpus * $bench_mixed_s)" 0)
# Where a chain step's time goes in the launcher (medians over the chain, from the events file).
phases=$(jq -rs --arg r "$bench_chain_run" '
  def median: sort | if length == 0 then 0 else .[(length / 2 | floor)] end;
  [.[] | select(.run_id == $r)] | group_by(.step_id) | map({
    start: (map(select(.event == "start")) | .[0].t), end: (map(select(.event == "end")) | .[0].t),
    outcome: (map(select(.event == "outcome")) | .[0].t)}) | sort_by(.start) as $s |
  [range(1; $s | length) | $s[.].start - $s[. - 1].outcome] as $gap |
  "\($gap | median * 1000 | round) ms outcome -> next start (claim, place, started, spawn), \(
    [$s[] | .end - .start] | median * 1000 | round) ms start -> end (srun), \(
    [$s[] | .outcome - .end] | median * 1000 | round) ms end -> outcome (collect, complete)"' "$WORK/events-bench-chain.jsonl")

cat <<TABLE

## Launcher benchmark: job $job on $job_nodes ($cpus cpus), $(date -u +%Y-%m-%d): queue wait $(calc "$job_started - $submitted" 0) s, allocation $(calc "$job_ended - $job_started" 0) s, all after the queue $(calc "$(now) - $job_started" 0) s

| figure | baseline | scimesh-launch | launcher / baseline |
|---|---|---|---|
| dispatch, chain of $CHAIN_STEPS trivial steps | srun --exact: $srun_step s/step | $launch_step s/step | $(calc "$launch_step / $srun_step" 2) |
| (same, baseline through the wrapper) | srun --exact scimesh-rank --: $rank_step s/step | | $(calc "$launch_step / $rank_step" 2) |
| throughput, $TINY_STEPS x sleep $TINY_SLEEP | parallel -j $cpus srun --exact: $par_rate steps/s | $launch_rate steps/s | $(calc "$launch_rate / $par_rate" 2) |
| utilization, $mixed_steps mixed steps ($mixed_work core-s) | parallel -j $cpus srun --exact: $par_util % (makespan $parallel_mixed_s s) | $launch_util % (makespan $bench_mixed_s s) | $(calc "$parallel_mixed_s / $bench_mixed_s" 2) |

Chain step in the launcher (medians): $phases.
Baseline sruns that printed "step creation temporarily disabled": $srun_waits.

| launcher holding $HELD_STEPS steps (local backend, synthetic "$TOPOLOGY", $held_pus cpus) | figure |
|---|---|
| VmHWM / VmRSS | $((held_hwm_kib / 1024)) MiB / $((held_rss_kib / 1024)) MiB |
| threads | $held_threads |
| CPU over $QUIET_S s with all $HELD_STEPS running | $held_cpu_pct % of one core |
| its $held_children scimesh-rank wrappers (rank 0 heartbeats each lease) | $held_children_cpu_pct % of one core, $((held_children_pss_kib / 1024)) MiB PSS in all |
| run created -> all $HELD_STEPS started | $held_ramp_s s |
TABLE
note "launcher benchmark: OK"
