#!/usr/bin/env bash
# Benchmark (figures only, never timing asserts): what a launcher costs while
# it holds HELD_STEPS running steps that use no CPU: threads, VmHWM/VmRSS,
# % of one core over a quiet interval, and the same for its step processes
# (single ranks are forked without scimesh-rank: the launcher heartbeats
# every lease itself).
# No allocation on the dev cluster has 1,000 cpus (it has 4, and it is
# shared), so this runs outside SLURM: the local backend reads a synthetic
# topology. Each step waits on a shared `flock` of its workflow's gate file,
# held by the benchmark, which then opens the gates one workflow (200 steps)
# at a time: the figures are about holding steps, not about 1,000 ending at
# once on two cores.
#
# Usage: held-steps.sh        (CTest launcher_held_bench sets the *_BIN env)
# It fails only when something did not work (a step, the launcher's exit).
#
# Parameters (environment, defaults in brackets):
#   SCIMESH_BENCH_HELD_STEPS    steps the launcher holds [1000]
#   SCIMESH_BENCH_SETTLE_S      wait after the last step started (rank 0 take-overs) [10; CTest 3]
#   SCIMESH_BENCH_QUIET_S       the quiet interval of the idle-CPU figure [20; CTest 5]
#   SCIMESH_BENCH_SIZE=full     the full defaults under CTest too
#   SCIMESH_BENCH_TOPOLOGY      hwloc synthetic topology ["pack:2 core:512 pu:1"]
#   SCIMESH_BENCH_HELD_ARGS     extra scimesh-launch flags (e.g. "--agents no") [none]
source "$(dirname "$0")/../../lib/harness.sh"
source "$(dirname "$0")/bench-lib.sh"

HELD_STEPS=${SCIMESH_BENCH_HELD_STEPS:-1000}
SETTLE_S=${SCIMESH_BENCH_SETTLE_S:-$(sized 3 10)}
QUIET_S=${SCIMESH_BENCH_QUIET_S:-$(sized 5 20)}
TOPOLOGY=${SCIMESH_BENCH_TOPOLOGY:-"pack:2 core:512 pu:1"}
read -ra EXTRA_ARGS <<<"${SCIMESH_BENCH_HELD_ARGS:-}"

harness_init launcher-held
: "${SCIMESH_LAUNCH_BIN:?set by CTest}" "${SCIMESH_RANK_BIN:?set by CTest}"
# Each held lease keeps about 3 keep-alive connections (launcher, its
# heartbeat, rank 0), all from 127.0.0.1: above the coordinator's default
# per-address cap (1,024) at 1,000 steps. Held connections use no thread.
connections=$((HELD_STEPS * 4 + 64))
coordinator_start --max-connections "$((connections > 8192 ? connections : 8192))" \
  --max-connections-per-address "$connections" --retry-base-ms 200
: >"$WORK/results.env"
cat >"$WORK/held.sh" <<'SH'
#!/bin/sh
# A held step: waits (no CPU) until the benchmark releases the gate lock $1.
flock -s "$1" true
echo "{}" > output.json
SH
chmod +x "$WORK/held.sh"
split_workflows bench-held "$HELD_STEPS" "$(jq -n --arg dir "$WORK" \
  '{max_attempts: 1, walltime_s: 3600, run: {argv: ["\($dir)/held.sh", "\($dir)/gate"], mpi: "none"}}')" |
  jq '.workflows |= [to_entries[] | .key as $k | .value | .steps |= map(.run.argv[1] += "-\($k + 1)")]' \
  >"$WORK/defs-held.json"
events=$WORK/events-held.jsonl
local_launcher "$TOPOLOGY" "$HELD_STEPS" held "${EXTRA_ARGS[@]}"
held_launcher=$LAUNCHER_PID
held_pus=$(jq -s '[.[] | select(.event == "allocation") | .nodes[].cpus] | add' "$events")
((held_pus >= HELD_STEPS)) || fail "the synthetic topology gives $held_pus cpus, fewer than $HELD_STEPS steps"
gates=()
for ((i = 1; i <= $(jq '.workflows | length' "$WORK/defs-held.json"); i++)); do
  exec {fd}>"$WORK/gate-$i"
  flock -x "$fd"
  gates+=("$fd")
done
t0=$(now)
mapfile -t held_runs < <(start_runs "$WORK/defs-held.json")
# Running = the launcher's child exists (its `start` event comes before the
# spawn, which takes long in a launcher with thousands of threads).
all_running() {
  local bad
  bad=$(jq -rs '[.[] | select(.event == "outcome")] | .[:3] | map("\(.step_id): \(.outcome) (\(.detail))") | join("; ")' "$events")
  [[ -z $bad ]] || fail "a held step ended before the gate opened: $bad"
  (($(pgrep -c -P "$held_launcher") >= HELD_STEPS))
}
wait_for "$HELD_STEPS held steps running" 900 all_running
ramp=$(now)
note "all $HELD_STEPS steps spawned; measuring for $QUIET_S s after $SETTLE_S s"
sleep "$SETTLE_S"  # the last spawns' first beats and writes: not idle yet
# The step processes (the programs; scimesh-rank where a step is wrapped)
# are the launcher's children. One awk over all their files: a fork per process would load the
# machine that is being measured.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
children_files() { pgrep -P "$held_launcher" | sed "s|.*|/proc/&/$1|"; }
children_ticks() { children_files stat | xargs -r awk '{s += $14 + $15} END {print s + 0}' 2>/dev/null || true; }
# PSS, not RSS: the processes share their libraries' pages; RSS would count them once each.
children_pss_kib() { children_files smaps_rollup | xargs -r awk '/^Pss:/ {s += $2} END {print s + 0}' 2>/dev/null || true; }
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
record coordinator_threads "$(awk '/^Threads/ {print $2}' "/proc/$COORDINATOR_PID/status")"

# The figures first: they hold even when ending the steps goes wrong.
source "$WORK/results.env"
cat <<TABLE

## Launcher holding $HELD_STEPS steps (local backend, synthetic "$TOPOLOGY", $held_pus cpus), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)

| figure | scimesh-launch${EXTRA_ARGS[*]:+ ${EXTRA_ARGS[*]}} | goal |
|---|---|---|
| threads | $held_threads | <= 16 |
| VmHWM / VmRSS | $((held_hwm_kib / 1024)) MiB / $((held_rss_kib / 1024)) MiB | <= 32 MiB RSS |
| CPU over $QUIET_S s with all $HELD_STEPS running (from $SETTLE_S s after the last spawn) | $held_cpu_pct % of one core | < 1 % |
| its $held_children step processes (the held programs) | $held_children_cpu_pct % of one core, $((held_children_pss_kib / 1024)) MiB PSS in all | |
| run created -> all $HELD_STEPS spawned | $held_ramp_s s | |
| coordinator threads (default --threads) | $coordinator_threads | |
TABLE
for i in "${!held_runs[@]}"; do
  flock -u "${gates[i]}"
  status=$(wait_run "${held_runs[i]}" 600)
  [[ $status == completed ]] || fail "held run ${held_runs[i]} ended '$status': $(jq -rs --arg r "${held_runs[i]}" '
    [.[] | select(.event == "outcome" and .run_id == $r and .outcome != "completed") | "\(.step_id): \(.outcome)
    (\(.detail))"] | .[:3] | join("; ")' "$events")"
done
stop_launcher "$held_launcher"

note "held-steps benchmark: OK"
