#!/usr/bin/env bash
# Benchmark (label bench; figures for docs/performance.md, never pass/fail on
# time): RANKS ranks over n1 and n2 on the dev cluster at 32 cpus per node,
# RUNS runs of each, from the coordinator refusing rank 0's heartbeat (409,
# the run was cancelled; its request log line, ms) to:
#   cancellation -> the last rank's cancelled() turning true;
#   lease loss -> the last rank of a step whose ranks never poll found dead
#     (the SPANK plugin kills them).
# Oversubscribed on a small machine: compare widths, not absolute times.
# Usage: wide-bench.sh RANKS [RUNS]. Minutes of oversubscribed MPI starts: it
# runs only with SCIMESH_WIDE_BENCH=1, else it reports itself skipped (77).
if [[ ${SCIMESH_WIDE_BENCH:-0} != 1 ]]; then
  echo "wide-bench: skipped (set SCIMESH_WIDE_BENCH=1 to run it)"
  exit 77
fi
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/wide-lib.sh"
harness_init "wide-bench-${1:?usage: wide-bench.sh RANKS [RUNS]}"
runs=${2:-${SCIMESH_BENCH_RUNS:-10}}
wide_setup "$1"

lost_at() {  # seconds since the epoch when the coordinator refused rank 0's heartbeat
  local line
  refused() { grep -q "POST /v1/api/steps/$LEASE/heartbeat -> 409" "$WORK/coordinator.log"; }
  wait_for "the coordinator refused a heartbeat of $LEASE" 60 refused
  line=$(grep -m1 "POST /v1/api/steps/$LEASE/heartbeat -> 409" "$WORK/coordinator.log")
  date -d "${line%% *}" +%s.%N
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%d\n", (b - a) * 1000}'; }
summary() {  # FILE WHAT
  sort -n "$1" | awk -v what="$2" -v r="$ranks" '{a[NR] = $1} END {
    printf "%d ranks (2 nodes): %s, %d runs: p50 %d ms, max %d ms, min %d ms\n", r, what, NR, a[int((NR + 1) / 2)], a[NR], a[1] }'
}

: >"$WORK/cancel-ms.txt"
# A long --idle-exit: the checks between runs may take longer than the default 4 s.
launcher cancel "$WORK/cancel.json" --idle-exit 600 --spank=no  # every rank sees cancelled(), not the plugin's SIGTERM
for i in $(seq "$runs"); do
  start native
  api POST "/runs/$RUN/cancel" -d '{}' >/dev/null
  from=$(lost_at)
  wait_for "no process of the step left" 120 none_left
  last=$(sed -n 's/.*cancelled=1 at \([0-9.]*\)/\1/p' "$DIR/step.out" | sort -n | tail -n1)
  [[ $(grep -c 'cancelled=1' "$DIR/step.out") == "$ranks" ]] || fail "run $i: not every rank saw cancelled()"
  ms "$from" "$last" >>"$WORK/cancel-ms.txt"
done
scancel "$JOB"
wait_for "the launcher (job $JOB) gone" 120 job_gone

: >"$WORK/dead-ms.txt"
launcher deaf "$WORK/deaf.json" --kill-grace 60 --idle-exit 600
for i in $(seq "$runs"); do
  start deaf
  rank_pids >"$WORK/step-pids.txt"
  api POST "/runs/$RUN/cancel" -d '{}' >/dev/null
  from=$(lost_at)
  any_alive() { local p; for p in $(<"$WORK/step-pids.txt"); do alive "$p" && return 0; done; return 1; }
  deadline=$((SECONDS + 120))
  while any_alive; do
    ((SECONDS < deadline)) || fail "run $i: ranks alive 120 s after the loss"
    sleep 0.01
  done
  ms "$from" "$(date +%s.%N)" >>"$WORK/dead-ms.txt"
  wait_for "no process of the step left" 120 none_left
done

summary "$WORK/cancel-ms.txt" "heartbeat refused -> last rank sees cancelled()"
summary "$WORK/dead-ms.txt" "heartbeat refused -> last rank dead (SPANK plugin, grace_s=1)"
