# Helpers shared by the launcher benchmarks (source after tests/lib/harness.sh
# and harness_init): time, arithmetic, the results file, and the per-step
# breakdown of a run read from the launcher's events file and its spool.

# sized SMALL FULL: FULL, or SMALL when the run is CTest's short one
# (SCIMESH_BENCH_CTEST_SIZE=small, set by tests/launcher/bench/CMakeLists.txt).
# SCIMESH_BENCH_SIZE=full gives the full size under CTest too.
sized() { if [[ ${SCIMESH_BENCH_SIZE:-${SCIMESH_BENCH_CTEST_SIZE:-full}} == small ]]; then echo "$1"; else echo "$2"; fi; }

now() { echo "$EPOCHREALTIME"; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
record() { echo "$1=$2" >>"$WORK/results.env"; }

# trivial_program FILE: the no-op step every benchmark and baseline runs (a
# step run by scimesh-launch has to leave a result).
trivial_program() {
  printf '#!/bin/sh\n# A trivial step: an empty result.\necho "{}" > output.json\n' >"$1"
  chmod +x "$1"
}

# local_launcher TOPOLOGY CONCURRENCY NAME [flags...]: starts scimesh-launch
# (local backend) on the hwloc synthetic TOPOLOGY (hwloc honours
# HWLOC_SYNTHETIC; the wrappers inherit it, so their binding is a no-op) with
# $WORK/defs-NAME.json, spool-NAME/, events-NAME.jsonl and launcher-NAME.log;
# sets LAUNCHER_PID once it has registered.
local_launcher() {
  local topology=$1 concurrency=$2 name=$3
  shift 3
  env -u SLURM_JOB_ID -u SLURM_JOBID HWLOC_SYNTHETIC="$topology" SCIMESH_TOKEN_FILE="$WORKER_TOKEN_FILE" \
    "$SCIMESH_LAUNCH_BIN" --backend local --definitions "$WORK/defs-$name.json" --spool "$WORK/spool-$name" \
    --events "$WORK/events-$name.jsonl" --scimesh-rank "$SCIMESH_RANK_BIN" --concurrency "$concurrency" \
    --idle-exit 0 --drain-grace 5 --kill-grace 2 "$@" >"$WORK/launcher-$name.log" 2>&1 &
  LAUNCHER_PID=$!
  CLEANUP_PIDS+=("$LAUNCHER_PID")
  launcher_up() { grep -qs '"allocation"' "$WORK/events-$name.jsonl"; }
  wait_for "the local launcher registered" 60 launcher_up
}

# stop_launcher PID: SIGTERM (drain); fails unless it exits 0.
stop_launcher() {
  local rc=0
  kill -TERM "$1"
  wait "$1" || rc=$?
  ((rc == 0)) || fail "the launcher exited $rc after SIGTERM (drain)"
}

# split_workflows PREFIX STEPS STEP_JSON: definitions ({workflows: [...]}) of
# STEPS steps s1..sSTEPS, each STEP_JSON (jq) plus its id, in workflows
# PREFIX-1, PREFIX-2, ... of at most 200 steps (the coordinator takes 1 to
# 256 steps per workflow), one run each.
split_workflows() {
  jq -n --arg prefix "$1" --argjson n "$2" --argjson step "$3" '
    {workflows: [range(0; ($n + 199) / 200 | floor) as $w | {workflow: "\($prefix)-\($w + 1)", version: "1",
      steps: [range($w * 200 + 1; [$n, $w * 200 + 200] | min + 1) as $i | $step + {id: "s\($i)"}]}]}'
}

# start_runs DEFINITIONS: starts one run of each workflow; prints the run ids.
start_runs() {
  local w
  for w in $(jq -r '.workflows[].workflow' "$1"); do run_start "$w" '{}'; done
}

# step_breakdown EVENTS SPOOL RUN...: a Markdown table (p50 / p99 / max, ms) of
# where each step of the RUNs spent its time, one attempt per step:
#   arrived  the `claim` event: the launcher got the claim's response (the
#            last claim before the step's `place`: one claim loop writes both)
#   placed / start / end / outcome   the events of that name
#   spawned  birth time of the attempt's step.out (the launcher opens it just
#            before it forks the step's process: srun, or the wrapper locally)
#   program  mtime of output.json: the step's program wrote its result (its
#            first command), so this bounds "the user's program started"
# File times come from the kernel's coarse clock (one tick: 4 ms at HZ=250),
# so `spawned` and `program` can read up to a tick early; events have 1 us.
step_breakdown() {
  local events=$1 spool=$2 files
  shift 2
  local runs=("$@") dirs=("${@/#/$spool/}")
  # find's %B cannot read a birth time; stat (statx) can.
  files=$( { find "${dirs[@]}" -name step.out -print0 | xargs -0r stat -c 'spawned %n %.9W'
             find "${dirs[@]}" -name output.json -print0 | xargs -0r stat -c 'program %n %.9Y'; } |
    awk '{ n = split($2, p, "/"); printf "{\"step\":\"%s/%s\",\"%s\":%s}\n", p[n - 3], p[n - 2], $1, $3 }' | jq -s '
      reduce .[] as $f ({}; .[$f.step] += ($f | del(.step)))')
  # Through files, not arguments: thousands of steps pass the argv limit.
  printf '%s\n' "${files:-"{}"}" >"$WORK/breakdown-files.json"
  jq -rs --argjson runs "$(printf '%s\n' "${runs[@]}" | jq -R . | jq -s .)" \
    --slurpfile files_in "$WORK/breakdown-files.json" '
    $files_in[0] as $files |
    def pct($q): sort | .[((length - 1) * $q | floor)];
    def ms: . * 1000 | . * 10 | round / 10;
    (reduce .[] as $e ({claim: null, steps: {}};
      if $e.event == "claim" then .claim = $e.t
      elif any($runs[]; . == ($e.run_id // "")) | not then .
      elif $e.event == "place" then .steps["\($e.run_id)/\($e.step_id)"] += {placed: $e.t, arrived: .claim}
      else .steps["\($e.run_id)/\($e.step_id)"] += {($e.event): $e.t} end) | .steps) as $s |
    [$s | to_entries[] | .value + ($files[.key] // {})] as $steps |
    def row($name; $from; $to):
      [$steps[] | select(.[$from] != null and .[$to] != null) | .[$to] - .[$from]] as $d |
      if ($d | length) == 0 then "| \($name) | n/a | n/a | n/a | 0 |"
      else "| \($name) | \($d | pct(0.5) | ms) | \($d | pct(0.99) | ms) | \($d | max | ms) | \($d | length) |" end;
    "| per step (ms) | p50 | p99 | max | steps |", "|---|---|---|---|---|",
    row("lease arrived (claim response) -> process spawned"; "arrived"; "spawned"),
    row("lease arrived -> program wrote its result"; "arrived"; "program"),
    row("lease arrived -> placed"; "arrived"; "placed"),
    row("placed -> start event (started sent, attempt dir)"; "placed"; "start"),
    row("lease placed -> process spawned"; "placed"; "spawned"),
    row("process spawned -> program wrote its result"; "spawned"; "program"),
    row("process spawned -> end event (exit seen)"; "spawned"; "end"),
    row("start -> end event"; "start"; "end"),
    row("end -> outcome (collect, complete)"; "end"; "outcome")' "$events"
}
