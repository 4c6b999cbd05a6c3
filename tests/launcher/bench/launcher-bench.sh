#!/usr/bin/env bash
# Benchmark (figures only, never timing asserts): scimesh-launch against plain
# `srun --exact` and GNU parallel + srun in one `sbatch -N2` allocation on the
# dev cluster, with the launcher's node agents on and off when it has them
# (`--agents` in its --help; else once, with its defaults), and where a
# launcher step's time goes (lease arrived -> process spawned, ...). What a
# launcher holding many steps costs is tests/launcher/bench/held-steps.sh.
#
# Usage: launcher-bench.sh            (CTest launcher_bench sets the *_BIN env)
# It fails only when something did not work (a step, a baseline command, the
# launcher's exit); the figures go to stdout as a Markdown table.
#
# Parameters (environment, defaults in brackets):
#   SCIMESH_BENCH_CHAIN_STEPS   steps of the dispatch chain [20; CTest 10]
#   SCIMESH_BENCH_TINY_STEPS    independent tiny steps [40; CTest 20]
#   SCIMESH_BENCH_SIZE=full     the full defaults under CTest too
#   SCIMESH_BENCH_TINY_SLEEP    seconds each tiny step sleeps [0.2]
#   SCIMESH_BENCH_MIXED         mixed workload, "NODES:RANKS_PER_NODE:SECONDS" items, queue order
#   SCIMESH_BENCH_AGENT_MODES   the launcher's --agents values to run ["yes no" when
#                               --help lists --agents, else "default": no flag]
source "$(dirname "$0")/../../lib/harness.sh"
source "$(dirname "$0")/bench-lib.sh"

CHAIN_STEPS=${SCIMESH_BENCH_CHAIN_STEPS:-$(sized 10 20)}
TINY_STEPS=${SCIMESH_BENCH_TINY_STEPS:-$(sized 20 40)}
TINY_SLEEP=${SCIMESH_BENCH_TINY_SLEEP:-0.2}
# A mix of 2-node and 1-node steps (the claim places the widest first,
# launcher/placement/claim_order.h, whatever the queue's order).
MIXED=${SCIMESH_BENCH_MIXED:-"2:2:2 2:1:3 2:1:3 1:1:4 1:1:1 1:1:2 1:1:3 1:1:1 1:1:4 1:1:2 1:1:1 1:1:2 1:1:3 1:1:1"}

# mode_workflow WORKFLOW MODE: the workflow's name for one --agents mode. Each
# mode has its own names, so a stopped launcher's claim, which the coordinator
# keeps holding, is never handed the next launcher's leases (see launcher_run).
mode_workflow() { if [[ $2 == default ]]; then echo "$1"; else echo "$1-agents-$2"; fi; }

# The step programs: the launcher and the baselines run exactly these.
write_step_programs() {
  trivial_program "$WORK/trivial.sh"
  printf '#!/bin/sh\n# A tiny step.\nsleep %s\necho "{}" > output.json\n' "$TINY_SLEEP" >"$WORK/tiny.sh"
  cat >"$WORK/mixed.sh" <<'SH'
#!/bin/sh
# A step of the mixed workload: every rank sleeps $1 s; rank 0 writes the result.
sleep "$1"
if [ "${SLURM_PROCID:-0}" = 0 ]; then echo "{}" > output.json; fi
SH
  chmod +x "$WORK"/{tiny,mixed}.sh
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
  local w mode
  for mode in $AGENT_MODES; do
    for w in bench-chain bench-tiny bench-mixed; do
      jq --arg w "$w" --arg name "$(mode_workflow "$w" "$mode")" \
        '{workflows: [.workflows[] | select(.workflow == $w) | .workflow = $name]}' "$WORK/defs.json" \
        >"$WORK/defs-$(mode_workflow "$w" "$mode").json"
    done
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

# launcher_run WORKFLOW STEPS MODE: starts a fresh launcher in the allocation
# (with --agents MODE unless MODE is "default"), runs one workflow through it,
# stops it (SIGTERM: drain, exit 0); records <workflow>_s (run created -> last
# outcome) and the run id, the workflow named for its mode (mode_workflow).
# A fresh launcher per phase, because a claim held from an earlier phase
# carries stale free capacity. Its own worker_id and only its own workflow,
# because the coordinator keeps holding a stopped launcher's long-poll claim
# and hands leases to it that nobody receives (they expire unstarted and are
# requeued, which only delays the run): see docs/performance.md, "Launcher".
launcher_run() {
  local workflow steps=$2 mode=$3 t0 run status last n launcher rc=0
  local -a agents=()
  workflow=$(mode_workflow "$1" "$mode")
  [[ $mode == default ]] || agents=(--agents "$mode")
  local events=$WORK/events-$workflow.jsonl
  "$SCIMESH_LAUNCH_BIN" "${agents[@]}" --definitions "$WORK/defs-$workflow.json" --spool "$WORK/spool" --events "$events" \
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
  AGENT_MODES=${SCIMESH_BENCH_AGENT_MODES:?exported by the benchmark}
  local cpus scratch t0 t1 i mode
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
  for mode in $AGENT_MODES; do
    note "1. dispatch: chain of $CHAIN_STEPS steps through scimesh-launch (agents: $mode)"
    launcher_run bench-chain "$CHAIN_STEPS" "$mode"
  done

  note "2. throughput: $TINY_STEPS x sleep $TINY_SLEEP via parallel -j $cpus srun --exact"
  t0=$(now)
  seq "$TINY_STEPS" | parallel --will-cite -j "$cpus" \
    srun --exact -N1 -n1 --ntasks-per-node=1 -c1 --chdir="$scratch" "$WORK/tiny.sh" 2>>"$WORK/baseline-parallel.log" ||
    fail "a baseline srun under GNU parallel failed (see baseline-parallel.log)"
  t1=$(now)
  record parallel_tiny_s "$(calc "$t1 - $t0")"
  for mode in $AGENT_MODES; do
    note "2. throughput: $TINY_STEPS tiny steps through scimesh-launch (agents: $mode)"
    launcher_run bench-tiny "$TINY_STEPS" "$mode"
  done

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
  for mode in $AGENT_MODES; do
    note "3. utilization: mixed workload through scimesh-launch (agents: $mode)"
    launcher_run bench-mixed "$(wc -w <<<"$MIXED")" "$mode"
  done

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
coordinator_start --threads 512 --retry-base-ms 200
# Node agents on and off when the launcher has them, else once.
if [[ -z ${SCIMESH_BENCH_AGENT_MODES:-} ]]; then
  # The help read whole first: `--help | grep -q` under pipefail fails when
  # grep exits before the launcher's last write (SIGPIPE), and the benchmark
  # then ran one mode only.
  help=$("$SCIMESH_LAUNCH_BIN" --help 2>&1)
  if [[ $help == *--agents* ]]; then AGENT_MODES="yes no"; else AGENT_MODES=default; fi
else
  AGENT_MODES=$SCIMESH_BENCH_AGENT_MODES
fi
note "launcher runs with --agents: $AGENT_MODES"
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE WORK SCIMESH_BENCH_CHAIN_STEPS=$CHAIN_STEPS \
  SCIMESH_BENCH_TINY_STEPS=$TINY_STEPS SCIMESH_BENCH_TINY_SLEEP=$TINY_SLEEP SCIMESH_BENCH_MIXED=$MIXED \
  SCIMESH_BENCH_AGENT_MODES=$AGENT_MODES
write_step_programs
write_definitions
: >"$WORK/results.env"
submitted=$(now)

# --- 1-3: one sbatch -N2 allocation; sbatch --wait returns the job's status ---
# --wrap, not the script itself: sbatch copies a script away from harness.sh.
# Its time limit grows with the launcher runs: about 1.5 min each mode.
sbatch --wait --parsable -N2 --ntasks-per-node=2 -t $((3 + 3 * $(wc -w <<<"$AGENT_MODES"))) -o "$WORK/job.log" \
  --wrap "exec bash '$(cd "$(dirname "$0")" && pwd)/$(basename "$0")' in-allocation" >"$WORK/job.id" &
sbatch_pid=$!
wait_for "the job was submitted" 30 test -s "$WORK/job.id"
job=$(<"$WORK/job.id")
CLEANUP_CMDS+=("scancel $job")
note "allocation: job $job"
wait "$sbatch_pid" || fail "job $job failed (job.log above)"
cat "$WORK/job.log"

# --- the tables ---
source "$WORK/results.env"
mixed_steps=$(wc -w <<<"$MIXED")
mixed_work=0
for item in $MIXED; do
  IFS=: read -r nodes rpn secs <<<"$item"
  mixed_work=$((mixed_work + nodes * rpn * secs))
done
srun_step=$(calc "$srun_chain_s / $CHAIN_STEPS")
rank_step=$(calc "$srun_rank_chain_s / $CHAIN_STEPS")
par_rate=$(calc "$TINY_STEPS / $parallel_tiny_s" 1)
par_util=$(calc "100 * $mixed_work / ($cpus * $parallel_mixed_s)" 0)
var() { local name=${1//-/_}_$2; echo "${!name}"; }

# launcher_rows MODE: the launcher's rows of the main table for one mode.
launcher_rows() {
  local mode=$1 label="scimesh-launch" chain tiny mixed step rate util
  [[ $mode == default ]] || label="scimesh-launch --agents $mode"
  chain=$(var "$(mode_workflow bench-chain "$mode")" s)
  tiny=$(var "$(mode_workflow bench-tiny "$mode")" s)
  mixed=$(var "$(mode_workflow bench-mixed "$mode")" s)
  step=$(calc "$chain / $CHAIN_STEPS")
  rate=$(calc "$TINY_STEPS / $tiny" 1)
  util=$(calc "100 * $mixed_work / ($cpus * $mixed)" 0)
  echo "| dispatch, chain of $CHAIN_STEPS trivial steps | srun --exact: $srun_step s/step | $label: $step s/step | $(calc "$step / $srun_step" 2) (through the wrapper: $(calc "$step / $rank_step" 2)) | <= 1.10 |"
  echo "| throughput, $TINY_STEPS x sleep $TINY_SLEEP | parallel -j $cpus srun --exact: $par_rate steps/s | $label: $rate steps/s | $(calc "$rate / $par_rate" 2) | >= 1.5 |"
  echo "| utilization, $mixed_steps mixed steps ($mixed_work core-s) | parallel -j $cpus srun --exact: $par_util % (makespan $parallel_mixed_s s) | $label: $util % (makespan $mixed s) | $(calc "$parallel_mixed_s / $mixed" 2) | >= 1 |"
}

cat <<TABLE

## Launcher benchmark: job $job on $job_nodes ($cpus cpus), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg): queue wait $(calc "$job_started - $submitted" 0) s, allocation $(calc "$job_ended - $job_started" 0) s, all after the queue $(calc "$(now) - $job_started" 0) s

| figure | baseline | scimesh-launch | launcher / baseline | goal |
|---|---|---|---|---|
$(for mode in $AGENT_MODES; do launcher_rows "$mode"; done)
| (baseline through the wrapper) | srun --exact scimesh-rank --: $rank_step s/step | | | |

Baseline sruns that printed "step creation temporarily disabled": $srun_waits.
TABLE
# Where a launcher step's time goes; the goal: a 1-node step starts
# <= 5 ms after its lease arrives.
for mode in $AGENT_MODES; do
  for w in bench-chain bench-tiny; do
    name=$(mode_workflow "$w" "$mode")
    echo
    echo "### $name (agents: $mode), run $(var "$name" run)$([[ $w == bench-tiny ]] &&
      echo ": its program sleeps $TINY_SLEEP s before it writes its result")"
    echo
    step_breakdown "$WORK/events-$name.jsonl" "$WORK/spool" "$(var "$name" run)"
  done
done
note "launcher benchmark: OK"
