#!/usr/bin/env bash
# Benchmark (figures only, never timing asserts): STEPS independent no-op
# steps through the real coordinator and one scimesh-launch (local backend,
# SLOTS slots), next to GNU parallel -j SLOTS and xargs -P SLOTS running the
# same program file, each task in its own directory (the launcher's steps in
# workflows of 200, one run each, all started at once); and where a launcher
# step's time goes (lease arrived -> process spawned, ..., end -> outcome).
#
# Usage: local-throughput.sh          (CTest launcher_local_throughput_bench sets the *_BIN env)
# It fails only when something did not work (a step, a baseline command, the
# launcher's exit); the figures go to stdout as Markdown tables.
#
# Parameters (environment, defaults in brackets):
#   SCIMESH_BENCH_LOCAL_STEPS   no-op steps [600]
#   SCIMESH_BENCH_LOCAL_SLOTS   slots: the launcher's synthetic cpus and --concurrency,
#                               the baselines' -j / -P [64]
#   SCIMESH_BENCH_LOCAL_ARGS    extra scimesh-launch flags (e.g. "--agents no") [none]
source "$(dirname "$0")/../../lib/harness.sh"
source "$(dirname "$0")/bench-lib.sh"

STEPS=${SCIMESH_BENCH_LOCAL_STEPS:-600}
SLOTS=${SCIMESH_BENCH_LOCAL_SLOTS:-64}
read -ra EXTRA_ARGS <<<"${SCIMESH_BENCH_LOCAL_ARGS:-}"

harness_init launcher-local-throughput
: "${SCIMESH_LAUNCH_BIN:?set by CTest}" "${SCIMESH_RANK_BIN:?set by CTest}"
command -v parallel >/dev/null || fail "GNU parallel is not installed (scripts/install-deps)"
# SLOTS leases hold about 3 keep-alive connections each (launcher, its
# heartbeat, rank 0), all from 127.0.0.1; the per-address cap counts only
# connections without a key (256 by default), and is raised here to be sure.
connections=$((SLOTS * 4 + 64))
coordinator_start --max-connections-per-address "$((connections > 1024 ? connections : 1024))" --retry-base-ms 200
: >"$WORK/results.env"
trivial_program "$WORK/trivial.sh"

# --- baselines: the same program file, each task in a fresh directory ---
# (mkdir in the task: the launcher makes an attempt directory per step too)
check_outputs() {
  local n
  n=$(find "$WORK/$1" -name output.json | wc -l)
  ((n == STEPS)) || fail "$1: $n of $STEPS tasks left output.json"
}
note "baseline: $STEPS x trivial.sh via parallel -j $SLOTS"
mkdir "$WORK/parallel"
t0=$(now)
(cd "$WORK/parallel" && seq "$STEPS" | parallel --will-cite -j "$SLOTS" "mkdir {} && cd {} && exec $WORK/trivial.sh") \
  2>"$WORK/baseline-parallel.log" || fail "a task under GNU parallel failed (see baseline-parallel.log)"
t1=$(now)
record parallel_s "$(calc "$t1 - $t0")"
check_outputs parallel
note "baseline: $STEPS x trivial.sh via xargs -P $SLOTS"
mkdir "$WORK/xargs"
t0=$(now)
(cd "$WORK/xargs" && seq "$STEPS" | xargs -P "$SLOTS" -I{} sh -c 'mkdir "$1" && cd "$1" && exec "$0"' \
  "$WORK/trivial.sh" {}) 2>"$WORK/baseline-xargs.log" || fail "a task under xargs failed (see baseline-xargs.log)"
t1=$(now)
record xargs_s "$(calc "$t1 - $t0")"
check_outputs xargs

# --- the launcher: local backend, SLOTS synthetic cpus ---
split_workflows bench-local "$STEPS" "$(jq -n --arg prog "$WORK/trivial.sh" \
  '{max_attempts: 1, walltime_s: 600, run: {argv: [$prog], mpi: "none"}}')" >"$WORK/defs-local.json"
events=$WORK/events-local.jsonl
local_launcher "pack:1 core:$SLOTS pu:1" "$SLOTS" local "${EXTRA_ARGS[@]}"
note "launcher: $STEPS no-op steps, $SLOTS slots"
t0=$(now)
mapfile -t runs < <(start_runs "$WORK/defs-local.json")
for run in "${runs[@]}"; do
  status=$(wait_run "$run" 900)
  [[ $status == completed ]] || fail "run $run ended '$status': $(jq -rs '[.[] | select(.event == "outcome" and
    .outcome != "completed") | "\(.step_id): \(.outcome) (\(.detail))"] | .[:5] | join("; ")' "$events")"
done
n=$(jq -s '[.[] | select(.event == "outcome" and .outcome == "completed")] | length' "$events")
((n == STEPS)) || fail "$n of $STEPS steps reported completed in the events file"
last=$(jq -s '[.[] | select(.event == "outcome") | .t] | max' "$events")
record launcher_s "$(calc "$last - $t0")"
stop_launcher "$LAUNCHER_PID"
breakdown=$(step_breakdown "$events" "$WORK/spool-local" "${runs[@]}")

source "$WORK/results.env"
rate() { calc "$STEPS / $1" 0; }
cat <<TABLE

## Local throughput: $STEPS no-op steps, $SLOTS slots, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)

| runner | wall | steps/s | scimesh-launch / runner |
|---|---|---|---|
| GNU parallel -j $SLOTS | $parallel_s s | $(rate "$parallel_s") | $(calc "$parallel_s / $launcher_s" 2) |
| xargs -P $SLOTS | $xargs_s s | $(rate "$xargs_s") | $(calc "$xargs_s / $launcher_s" 2) |
| scimesh-launch --backend local${EXTRA_ARGS[*]:+ ${EXTRA_ARGS[*]}} (first run created -> last outcome; ${#runs[@]} runs) | $launcher_s s | $(rate "$launcher_s") | |

Goals: scimesh-launch >= 1,000 steps/s here; a 1-node step starts <= 5 ms after its lease arrives.

$breakdown
TABLE
note "local throughput benchmark: OK"
