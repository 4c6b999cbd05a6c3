# Shared helpers for the system tests in tests/*/ (bash). Source it, then call
# harness_init NAME. It gives each test a work directory visible to every dev
# cluster node (never /tmp), a real coordinator on an ephemeral loopback
# port, keys in 0600 files, and cleanup on exit -- also on failure.
#
# Needs: SCIMESH_COORDINATOR_BIN (and the other *_BIN the test uses), set by CTest.

set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "--- $*"; }
# scaled SECONDS: a waiting bound stretched for slow (sanitizer) builds by
# SCIMESH_TEST_TIME_SCALE, as tests/lib/time_scale.h does for C++ tests.
scaled() { echo $(($1 * ${SCIMESH_TEST_TIME_SCALE:-1})); }

harness_init() {
  local name=$1
  : "${SCIMESH_COORDINATOR_BIN:?set by CTest}"
  : "${SCIMESH_TEST_WORK:?set by CTest}"
  WORK=$SCIMESH_TEST_WORK/$name
  rm -rf "$WORK"
  mkdir -p "$WORK"
  CLEANUP_PIDS=()
  CLEANUP_CMDS=()  # shell commands run first at exit (e.g. "scancel 42")
  trap harness_cleanup EXIT
}

harness_cleanup() {
  local rc=$?
  local pid cmd
  for cmd in "${CLEANUP_CMDS[@]:-}"; do
    [[ -n $cmd ]] && eval "$cmd" >/dev/null 2>&1 || true
  done
  for pid in "${CLEANUP_PIDS[@]:-}"; do
    [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${CLEANUP_PIDS[@]:-}"; do
    [[ -n $pid ]] && wait "$pid" 2>/dev/null || true
  done
  if [[ $rc != 0 && -d ${WORK:-} ]]; then
    echo "--- logs of the failed test (last lines)" >&2
    local f
    for f in "$WORK"/*.log; do
      [[ -f $f ]] || continue
      echo "=== $(basename "$f")" >&2
      tail -n 25 "$f" >&2
    done
  fi
  exit $rc
}

# use_dev_cluster: SLURM's environment for the dev cluster (sbatch, squeue,
# scontrol talk to it), from scripts/dev-cluster env.
use_dev_cluster() {
  eval "$("$(dirname "${BASH_SOURCE[0]}")/../../scripts/dev-cluster" env)"
}

# lsan_without_tls_roots: under the asan preset, LeakSanitizer in this test's
# processes (and the MPI ranks they start, which inherit it) does not scan
# threads' TLS. On Linux 6.18, GCC 12's LSan crashed scanning the TLS of a
# short MPI rank's exiting OpenMPI threads ("Tracer caught signal 11"; the
# rank exits 1), often. Only the tests that run local multi-rank steps use
# it: elsewhere TLS roots matter (OpenSSL's per-thread error state would be
# reported as leaked without them). docs/development.md.
lsan_without_tls_roots() {
  [[ -z ${LSAN_OPTIONS:-} ]] || export LSAN_OPTIONS="$LSAN_OPTIONS:use_tls=0"
}

# plugin_under_test: the spank_scimesh.so the tests list in plugstack.conf:
# SCIMESH_SPANK_PLUGIN when it names a file (the release matrix's build for
# the SLURM under test, scripts/test --slurm-matrix), else this build's.
plugin_under_test() {
  if [[ -n ${SCIMESH_SPANK_PLUGIN:-} && $SCIMESH_SPANK_PLUGIN != system ]]; then
    echo "$SCIMESH_SPANK_PLUGIN"
  else
    echo "${SCIMESH_SPANK_PLUGIN_BIN:?set by CTest}"
  fi
}

# coordinator_start [serve flags...]: starts the coordinator on 127.0.0.1:0
# (or $COORDINATOR_LISTEN, to restart it on the same port) with worker and
# execute keys; exports SCIMESH_URL, WORKER_TOKEN_FILE, EXEC_TOKEN_FILE and
# COORDINATOR_PID.
coordinator_start() {
  local keys=$WORK/keys
  if [[ ! -f $keys ]]; then
    "$SCIMESH_COORDINATOR_BIN" keys add worker --scope worker --workflows '*' --keys "$keys" --secret-out "$WORK/worker.token" >/dev/null
    "$SCIMESH_COORDINATOR_BIN" keys add exec --scope execute --keys "$keys" --secret-out "$WORK/exec.token" >/dev/null
    # curl reads the header from a 0600 file: the token never appears in argv.
    (umask 077; printf 'Authorization: Bearer %s\n' "$(<"$WORK/exec.token")" >"$WORK/exec.header")
  fi
  rm -f "$WORK/port"
  "$SCIMESH_COORDINATOR_BIN" serve --db "$WORK/coordinator.db" --listen "${COORDINATOR_LISTEN:-127.0.0.1:0}" --port-file "$WORK/port" \
    --keys "$keys" "$@" >>"$WORK/coordinator.log" 2>&1 &
  COORDINATOR_PID=$!
  CLEANUP_PIDS+=("$COORDINATOR_PID")
  local i
  for i in $(seq 100); do
    [[ -s $WORK/port ]] && break
    kill -0 "$COORDINATOR_PID" 2>/dev/null || fail "the coordinator exited at start"
    sleep 0.1
  done
  [[ -s $WORK/port ]] || fail "the coordinator did not start listening"
  export SCIMESH_URL=http://127.0.0.1:$(<"$WORK/port")
  export WORKER_TOKEN_FILE=$WORK/worker.token EXEC_TOKEN_FILE=$WORK/exec.token
}

coordinator_stop() {
  kill "$COORDINATOR_PID" 2>/dev/null || true
  wait "$COORDINATOR_PID" 2>/dev/null || true
}

# api METHOD PATH [curl args...]: a run-API call with the execute key; prints the body.
api() {
  local method=$1 path=$2
  shift 2
  curl -sS -X "$method" -H @"$WORK/exec.header" \
    -H 'Content-Type: application/json' "$SCIMESH_URL/v1/api$path" "$@"
}

# run_start WORKFLOW INPUT_JSON: prints the run id.
run_start() {
  api POST /runs -d "{\"workflow\":\"$1\",\"input\":$2}" | jq -er .run_id
}

run_status() { api GET "/runs/$1" | jq -r .status; }

# start_first_run WORKFLOW TIMEOUT_S [INPUT] [WHAT]: starts a run of WORKFLOW
# (input INPUT, default {}) as soon as a launcher has registered it -- the
# coordinator answers 404 until then -- and sets RUN_ID. Fails with "timed
# out waiting for: WHAT" after TIMEOUT_S (scaled).
start_first_run() {
  local workflow=$1 timeout=$2 input=${3:-'{}'} what=${4:-"the launcher registered $1"}
  _first_run_started() {
    api POST /runs -o "$WORK/first-run.json" -w '%{http_code}' \
      -d "{\"workflow\":\"$workflow\",\"input\":$input}" | grep -q 201
  }
  wait_for "$what" "$timeout" _first_run_started
  RUN_ID=$(jq -er .run_id "$WORK/first-run.json")
}

# wait_run RUN_ID TIMEOUT_S: waits for a terminal status; prints it.
wait_run() {
  local run=$1 deadline=$((SECONDS + $(scaled "$2"))) status
  while ((SECONDS < deadline)); do
    status=$(run_status "$run")
    case $status in completed|failed|timed_out|cancelled) echo "$status"; return 0 ;; esac
    sleep 0.3
  done
  echo "timeout($status)"
}

# cancel_held_step RUN STEP RANKS TIMEOUT_S: waits (TIMEOUT_S) until rank 0
# of RUN's step STEP holds its lease (lease.state under $WORK/spool), cancels
# the run, then waits (30 s) until RANKS lines of the step's stdout say
# "cancelled=1" (each rank prints one when its cancelled() turns true). Sets
# CANCELLED_STATE (that lease.state) and CANCELLED_OUT (that step.out).
cancel_held_step() {
  local run=$1 step=$2 ranks=$3 timeout=$4
  _held_state() { find "$WORK/spool/$run/$step" -name lease.state 2>/dev/null | head -n1; }
  _held_by_rank0() {
    CANCELLED_STATE=$(_held_state)
    [[ -n $CANCELLED_STATE ]] && jq -e '.holder=="rank0" and .state=="held"' "$CANCELLED_STATE" >/dev/null
  }
  wait_for "rank 0 holds the lease of step $step" "$timeout" _held_by_rank0
  api POST "/runs/$run/cancel" -d '{}' >/dev/null
  CANCELLED_OUT=$(dirname "$CANCELLED_STATE")/step.out
  _ranks_cancelled() { [[ $(grep -c 'cancelled=1' "$CANCELLED_OUT" 2>/dev/null) == "$ranks" ]]; }
  wait_for "all $ranks ranks of step $step saw the cancellation" 30 _ranks_cancelled
}

# wait_for DESCRIPTION TIMEOUT_S COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local what=$1 deadline=$((SECONDS + $(scaled "$2")))
  shift 2
  until "$@"; do
    ((SECONDS < deadline)) || fail "timed out waiting for: $what"
    sleep 0.2
  done
}

# use_cluster_cpus N [UP-FLAGS...]: restarts the dev cluster with N cpus per
# node (more than the machine has oversubscribes it) and any other `up` flags
# (e.g. --slurmd-timeout 10), and back to its count and the environment's
# defaults at exit.
use_cluster_cpus() {
  local cluster was n=$1
  shift
  cluster=$(dirname "${BASH_SOURCE[0]}")/../../scripts/dev-cluster
  was=$("$cluster" status | sed -n 's/^cpus\/node *//p' || true)
  "$cluster" up --cpus "$n" "$@" >>"$WORK/dev-cluster.log" 2>&1 || fail "dev-cluster up --cpus $n $* failed: $(tail -n 5 "$WORK/dev-cluster.log")"
  CLEANUP_CMDS+=("'$cluster' up ${was:+--cpus $was}")
}
