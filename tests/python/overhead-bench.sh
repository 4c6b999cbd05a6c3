#!/usr/bin/env bash
# overhead-bench.sh: a Python step's overhead against the C API's
# (docs/performance.md "Python steps"). The same empty step -- begin, output
# {}, end -- as a C program and as a Python program (mpi4py + scimesh), each
# run 10 times (3 under CTest: SCIMESH_BENCH_CTEST_SIZE=small, unless
# SCIMESH_BENCH_SIZE=full) with 4 ranks through the real coordinator and
# scimesh-launch (local backend, mpirun, a synthetic 4-core topology). Prints
# the medians of begin and end (rank 0, after a barrier), Python's import time,
# and the attempt's wall time as the launcher measured it. Never fails on a time.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/python-lib.sh"
harness_init python-overhead-bench
lsan_without_tls_roots
source "$(dirname "$0")/../launcher/bench/bench-lib.sh"
runs=$(sized 3 10)
coordinator_start --lease-ttl-ms 30000 --heartbeat-ms 10000
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
here=$(dirname "$(readlink -f "$0")")
four='"resources": {"nodes": 1, "ranks_per_node": 4}, "max_attempts": 1'
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "c", "version": "1", "steps": [{"id": "empty", $four,
    "run": {"argv": ["$SCIMESH_OVERHEAD_C_BIN"], "native": true}}]},
  {"workflow": "py", "version": "1", "steps": [{"id": "empty", $four,
    "run": {"argv": ["${SCIMESH_PYTHON:?}", "$here/overhead.py"], "native": true, "env": $(python_step_env)}}]}]}
JSON
SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --topology "synthetic:core:4 pu:1" --spool "$WORK/spool" --idle-exit 10 --wait-ms 1000 \
  >"$WORK/launcher.log" 2>&1 &
CLEANUP_PIDS+=("$!")
start_first_run c 30
first=$RUN_ID
median() { sort -n | awk '{v[NR] = $1} END {printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for lang in c py; do
  : >"$WORK/$lang.txt"
  for i in $(seq "$runs"); do
    if [[ $lang == c && $i == 1 ]]; then run=$first; else run=$(run_start "$lang" '{}'); fi
    [[ $(wait_run "$run" 120) == completed ]] || fail "$lang run $i: $(api GET "/runs/$run")"
    wall=$(api GET "/runs/$run" | jq -r '.steps[0].attempts[0].usage.wall_s')
    echo "$(cat "$WORK/spool/$run/empty/"*/step.out) wall_s=$wall" >>"$WORK/$lang.txt"
  done
done
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$WORK/$2.txt" | median; }
wall_ms() { sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$WORK/$1.txt" | awk '{print $1 * 1000}' | median; }
note "step overhead, 4 ranks, median of $runs runs each (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '%-8s %12s %10s %10s %14s\n' api import_ms begin_ms end_ms attempt_wall_ms
printf '%-8s %12s %10s %10s %14s\n' C - "$(field begin_ms c)" "$(field end_ms c)" "$(wall_ms c)"
printf '%-8s %12s %10s %10s %14s\n' Python "$(field import_ms py)" "$(field begin_ms py)" "$(field end_ms py)" "$(wall_ms py)"
