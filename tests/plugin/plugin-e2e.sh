#!/usr/bin/env bash
# System tests of spank_scimesh.so on the dev cluster (n1, n2). One scenario
# per run: untouched | bad_option | bad_args | required | fenced |
# owner_cancel_escalates | hung | scancel | time_limit | planted_url | bench.
# Leases are claimed with curl from a real coordinator; this script plays the
# heartbeating rank 0 by writing the lease state file itself, so it controls
# when a lease is lost or stops being renewed.
set -euo pipefail
scenario=${1:?usage: plugin-e2e.sh SCENARIO}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/harness.sh
source "$repo/tests/lib/harness.sh"
use_dev_cluster
: "${SCIMESH_SPANK_PLUGIN_BIN:?set by CTest}" "${SCIMESH_LEASE_STATE_BIN:?set by CTest}"
SCIMESH_SPANK_PLUGIN_BIN=$(plugin_under_test)
STATE_TOOL=$SCIMESH_LEASE_STATE_BIN
PLUGSTACK=$SCIMESH_CLUSTER_DIR/etc/plugstack.conf
WORKER_ID=w-plugin-test

harness_init "plugin-$scenario"
cp "$PLUGSTACK" "$WORK/plugstack.conf.saved"
cleanup() {
  local rc=$?
  cp "$WORK/plugstack.conf.saved" "$PLUGSTACK"   # never leave the cluster with our config
  if [[ -n ${JOB_IDS:-} ]]; then scancel $JOB_IDS 2>/dev/null || true; fi
  (exit $rc)
  harness_cleanup
}
trap cleanup EXIT
JOB_IDS=

# plugin_config ARGS...: this build's plugin with ARGS, for the steps started from now on.
plugin_config() { echo "optional $SCIMESH_SPANK_PLUGIN_BIN $*" >"$PLUGSTACK"; }
# plugin_required ARGS...: the same as a `required` plugin, whose failing hooks SLURM
# does not ignore (a failing init drains the node unless the plugin says otherwise).
plugin_required() { echo "required $SCIMESH_SPANK_PLUGIN_BIN $*" >"$PLUGSTACK"; }

# batch_runs: a 2-node batch job with a 2-node step ends with its output.
batch_runs() {
  local job
  job=$(sbatch --parsable -N2 -o "$WORK/batch.out" --wrap 'srun -N2 -n2 true && echo done')
  JOB_IDS+=" $job"
  wait_for "batch job $job to end" 60 bash -c "! squeue -h -j $job 2>/dev/null | grep -q ."
  grep -q done "$WORK/batch.out" || fail "batch job did not finish: $(cat "$WORK/batch.out")"
}

now_ms() { "$STATE_TOOL" now; }

nodes_not_drained() {
  local states
  states=$(sinfo -h -N -o '%N %t' | sort -u)
  if grep -qE 'drain|down|fail' <<<"$states"; then fail "a node is drained or down: $states"; fi
}

wait_nodes_idle() {
  # A job's end (epilog, cgroup cleanup) takes seconds on a loaded machine.
  local deadline=$((SECONDS + $(scaled 60)))
  until [[ $(sinfo -h -N -o '%t' | sort -u) == idle ]]; do
    nodes_not_drained
    ((SECONDS < deadline)) || fail "nodes not idle: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
    sleep 0.2
  done
}

# lease_claim: registers, starts a run, claims it and sends started; writes
# $WORK/attempt/lease.json; sets RUN, LEASE, ATTEMPT_DIR.
lease_claim() {
  (umask 077; printf 'Authorization: Bearer %s\n' "$(<"$WORKER_TOKEN_FILE")" >"$WORK/worker.header")
  wapi() {
    curl -sS -X POST -H @"$WORK/worker.header" -H 'Content-Type: application/json' "$SCIMESH_URL/v1/api$1" -d "$2"
  }
  wapi /workers/register "{\"worker_id\":\"$WORKER_ID\",\"host\":\"test\",\"version\":\"t\",\"concurrency\":1,
    \"definitions\":[{\"workflow\":\"plugin-test\",\"version\":\"1\",\"steps\":[{\"id\":\"solve\"}]}]}" >/dev/null
  RUN=$(run_start plugin-test '{}')
  wapi /steps/claim "{\"worker_id\":\"$WORKER_ID\",\"max\":1,\"wait_ms\":2000,\"run_id\":\"$RUN\"}" >"$WORK/claim.json"
  LEASE=$(jq -er '.leases[0].lease_id' "$WORK/claim.json")
  wapi "/steps/$LEASE/started" "{\"worker_id\":\"$WORKER_ID\",\"attempt\":1}" | jq -e .lease_expires_at >/dev/null
  ATTEMPT_DIR=$WORK/attempt
  mkdir -p "$ATTEMPT_DIR/pids"
  chmod 700 "$ATTEMPT_DIR"
  (umask 077; jq --arg u "$SCIMESH_URL" '.leases[0] + {coordinator_url: $u}' "$WORK/claim.json" >"$ATTEMPT_DIR/lease.json")
}

write_state() { "$STATE_TOOL" write "$ATTEMPT_DIR" "$LEASE" 1 "$@"; }

# Tasks record their pid per node and rank, then sleep (the "body").
TASK='echo $$ >"$0/pids/$(hostname).$SLURM_PROCID"; exec sleep 300'

await_tasks() {  # N: waits for N pid files
  wait_for "$1 tasks running" 30 bash -c "(( \$(ls '$ATTEMPT_DIR/pids' | wc -l) >= $1 ))"
}

alive() {  # PID: alive and not a zombie
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $st != Z ]]
}

any_task_alive() {
  local f
  for f in "$ATTEMPT_DIR"/pids/*; do alive "$(<"$f")" && return 0; done
  return 1
}

# lease_batch_job [SBATCH-ARGS...]: a 2-node batch job whose step holds the
# lease; waits for its two tasks. Sets JOB.
lease_batch_job() {
  JOB=$(sbatch --parsable -N2 "$@" -o "$WORK/batch.out" \
    --wrap "srun -N2 -n2 --scimesh-lease='$ATTEMPT_DIR' bash -c '$TASK' '$ATTEMPT_DIR'")
  JOB_IDS+=" $JOB"
  await_tasks 2
}

# reported_lease TTL_MS HEARTBEAT_MS: a coordinator, the plugin reporting to
# it, a claimed lease held on n1 for 10 minutes, and the worker's identity in
# the environment a batch job inherits (the plugin reports with it).
reported_lease() {
  coordinator_start --lease-ttl-ms "$1" --heartbeat-ms "$2"
  plugin_config url="$SCIMESH_URL" grace_s=1 poll_ms=100 timeout_ms=3000
  lease_claim
  write_state n1 held 1 600000
  export SCIMESH_WORKER_ID=$WORKER_ID SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
}

# attempt_error_within S: prints the lease's recorded error (JSON) once there
# is one; returns 1 after S seconds without.
attempt_error_within() {
  local deadline=$((SECONDS + $1)) error
  while ((SECONDS < deadline)); do
    error=$(api GET "/runs/$RUN" | jq -c '.steps[0].attempts[0].error // empty')
    [[ -z $error ]] || { echo "$error"; return 0; }
    sleep 0.2
  done
  return 1
}

# scancel_and_wait JOB: cancels it and waits until SLURM has forgotten it.
scancel_and_wait() {
  scancel "$1"
  wait_for "job $1 to end" 30 bash -c "[[ -z \$(squeue -h -j $1 2>/dev/null) ]]"
}

# One lost lease under a 4-task step. REASON run_terminal: the run is
# cancelled, the next heartbeat is refused and its 409 reason written to the
# state file; any other REASON (default fenced) is written as a rank 0 would
# after that 409. Sets LAST_MS: from the loss to the last rank dead. Leaves
# srun's stderr in $WORK/srun.err.
fenced_once() {
  local reason=${1:-fenced}
  lease_claim
  write_state "$(hostname)" held 1 20000
  srun -N2 -n4 --scimesh-lease="$ATTEMPT_DIR" bash -c "$TASK" "$ATTEMPT_DIR" >"$WORK/srun.out" 2>"$WORK/srun.err" &
  local srun_pid=$! seq=1 code
  await_tasks 4
  grep -q '^n1\.' <(ls "$ATTEMPT_DIR/pids") && grep -q '^n2\.' <(ls "$ATTEMPT_DIR/pids") ||
    fail "tasks not on both nodes: $(ls "$ATTEMPT_DIR/pids" | tr '\n' ' ')"
  if [[ $reason == run_terminal ]]; then
    # The heartbeater (rank 0's part): beat, keep the state, stop at the refusal.
    api POST "/runs/$RUN/cancel" -d '{}' | jq -e '.status == "cancelled"' >/dev/null || fail "run cancel refused"
    code=$(curl -sS -o "$WORK/hb.json" -w '%{http_code}' -X POST -H @"$WORK/worker.header" \
      -H 'Content-Type: application/json' "$SCIMESH_URL/v1/api/steps/$LEASE/heartbeat" \
      -d "{\"worker_id\":\"$WORKER_ID\",\"attempt\":1}")
    [[ $code == 409 ]] || fail "heartbeat after cancel answered $code"
    reason=$(jq -r .reason "$WORK/hb.json")
  fi
  local lost_at dead_at
  seq=$((seq + 1))
  write_state "$(hostname)" "lost:$reason" "$seq" 0
  lost_at=$(now_ms)
  local deadline=$((SECONDS + 60))
  while any_task_alive; do
    ((SECONDS < deadline)) || fail "tasks still alive 60 s after the lease was lost"
    sleep 0.01
  done
  dead_at=$(now_ms)
  wait "$srun_pid" || true
  LAST_MS=$((dead_at - lost_at))
}

case $scenario in
  untouched)
    coordinator_start
    plugin_config grace_s=1 poll_ms=50
    note "a step without the option runs as if the plugin were absent"
    out=$(srun -N2 -n2 bash -c 'echo "$(hostname) ok"' 2>"$WORK/srun.err") || fail "srun failed: $(cat "$WORK/srun.err")"
    [[ $(sort <<<"$out" | tr '\n' ' ') == "n1 ok n2 ok " ]] || fail "unexpected output: $out"
    grep -q scimesh "$WORK/srun.err" && fail "the plugin spoke to a step without the option: $(cat "$WORK/srun.err")"
    note "--help shows the option"
    for cmd in srun sbatch salloc; do
      help=$($cmd --help 2>&1 || true)  # captured first: grep -q would cut the pipe
      grep -q -- '--scimesh-lease=DIR|LEASE' <<<"$help" || fail "$cmd --help does not show --scimesh-lease"
    done
    wait_nodes_idle
    ;;

  bad_option)
    coordinator_start
    plugin_config grace_s=1
    for bad in relative/dir /a/../b l_nothex; do
      note "srun --scimesh-lease=$bad"
      if srun -N1 --scimesh-lease="$bad" true 2>"$WORK/err"; then
        fail "srun accepted --scimesh-lease=$bad"
      fi
      grep -q 'spank_scimesh: --scimesh-lease:' "$WORK/err" || fail "no clear error: $(cat "$WORK/err")"
      note "sbatch --scimesh-lease=$bad"
      if sbatch -N1 --scimesh-lease="$bad" --wrap true >"$WORK/out" 2>"$WORK/err"; then
        JOB_IDS+=" $(awk '{print $4}' "$WORK/out")"
        fail "sbatch accepted --scimesh-lease=$bad"
      fi
      grep -q 'spank_scimesh: --scimesh-lease:' "$WORK/err" || fail "no clear error: $(cat "$WORK/err")"
    done
    note "the environment fallback is checked too (an error; SLURM runs an optional plugin's step anyway, unwatched)"
    SCIMESH_LEASE=not/absolute srun -N1 true 2>"$WORK/err" || true
    grep -q 'spank_scimesh: SCIMESH_LEASE: must be an absolute' "$WORK/err" || fail "no clear error: $(cat "$WORK/err")"
    grep -q 'spank_scimesh: step runs unwatched' "$WORK/err" || fail "slurmstepd did not say so: $(cat "$WORK/err")"
    note "require=1: a directory without a lease is refused before anything runs"
    plugin_config require=1
    mkdir -p "$WORK/empty"
    srun -N1 --scimesh-lease="$WORK/empty" true 2>"$WORK/err" && fail "srun accepted a directory without lease.json"
    grep -q 'lease.json: does not exist' "$WORK/err" || fail "no clear error: $(cat "$WORK/err")"
    wait_nodes_idle
    ;;

  bad_args)
    coordinator_start
    plugin_config grace_s=1 colour=blue
    note "bad plugstack arguments: steps without the option run, batch too"
    srun -N2 -n2 true 2>"$WORK/err" || fail "srun failed under a misconfigured plugin: $(cat "$WORK/err")"
    job=$(sbatch --parsable -N2 -o "$WORK/batch.out" --wrap 'srun -N2 -n2 true && echo done')
    JOB_IDS+=" $job"
    wait_for "the batch job to end" 60 bash -c "! squeue -h -j $job 2>/dev/null | grep -q ."
    grep -q done "$WORK/batch.out" || fail "batch job did not finish: $(cat "$WORK/batch.out")"
    note "a user of the option is told the site configuration is invalid"
    lease_claim
    srun -N1 --scimesh-lease="$ATTEMPT_DIR" true 2>"$WORK/err" && fail "srun ran a lease step under a broken config"
    grep -q "configuration is invalid (unknown argument 'colour'" "$WORK/err" || fail "unclear: $(cat "$WORK/err")"
    note "slurmd logged the refusal, and no node drained"
    grep -q "spank_scimesh: invalid plugstack arguments, plugin disabled: unknown argument 'colour'" \
      "$SCIMESH_CLUSTER_DIR"/log/slurmd-n*.log || fail "no log line in slurmd logs"
    wait_nodes_idle
    ;;

  required)
    # A site lists the plugin as `required`. Nothing the plugin meets is the
    # node's fault: after each of these, both nodes stay idle (not drained).
    coordinator_start --lease-ttl-ms 60000 --heartbeat-ms 10000
    note "required, bad plugstack arguments: steps and batch jobs without the option run"
    plugin_required grace_s=1 colour=blue
    srun -N2 -n2 true 2>"$WORK/err" || fail "srun failed under a misconfigured required plugin: $(cat "$WORK/err")"
    batch_runs
    wait_nodes_idle
    note "required, a lease step whose spool is missing: it runs unwatched, the nodes stay up"
    plugin_required grace_s=1
    srun -N2 -n2 --scimesh-lease="$WORK/no-such-spool/run/step/1" true 2>"$WORK/err" ||
      fail "a lease step with a missing spool failed: $(cat "$WORK/err")"
    # srun's stderr, not the slurmd logs: they hold earlier tests' lines too.
    grep -q 'spank_scimesh: step runs unwatched: attempt directory: does not exist' "$WORK/err" ||
      fail "nobody said the step runs unwatched: $(cat "$WORK/err")"
    wait_nodes_idle
    note "required, a dead coordinator: a scancelled lease job cannot be reported, the nodes stay up"
    plugin_required url="$SCIMESH_URL" grace_s=1 poll_ms=100 timeout_ms=500 exit_timeout_ms=2000
    lease_claim
    write_state n1 held 1 600000
    export SCIMESH_WORKER_ID=$WORKER_ID SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
    coordinator_stop
    lease_batch_job
    scancel_and_wait "$JOB"
    wait_for "the failed report to be logged" 15 \
      grep -q "spank_scimesh: cannot report lease $LEASE" "$SCIMESH_CLUSTER_DIR"/log/slurmd-n1.log
    wait_nodes_idle
    batch_runs
    ;;

  fenced)
    # Fencing does not wait: SIGTERM at once (the tasks die of it), though
    # the grace (SIGTERM -> SIGKILL, and a cancelled run's) is 30 s.
    coordinator_start --lease-ttl-ms 20000 --heartbeat-ms 5000
    plugin_config grace_s=30 poll_ms=50
    fenced_once fenced
    note "lease loss -> last rank dead on both nodes: $LAST_MS ms"
    any_task_alive && fail "a task survived"
    ((LAST_MS < 10000)) || fail "the fenced step lived $LAST_MS ms: it was not signalled at once"
    grep -q 'CANCELLED' "$WORK/srun.err" || fail "the step was not cancelled: $(cat "$WORK/srun.err")"
    note "no further writes for the lease: the plugin sent nothing after the loss"
    api GET "/runs/$RUN/journal" >"$WORK/journal.json"
    jq -e '[.events[] | select(.type == "attempt_failed")] | length == 0' "$WORK/journal.json" >/dev/null ||
      fail "something reported the lost lease: $(cat "$WORK/journal.json")"
    grep -q "cancelling the step of lease $LEASE: lease lost (fenced" "$SCIMESH_CLUSTER_DIR"/log/slurmd-n1.log ||
      fail "slurmd log does not say why the step was cancelled"
    wait_nodes_idle
    ;;

  owner_cancel_escalates)
    # A run cancelled by its owner whose tasks never poll cancelled(): no
    # signal for the grace (grace_s here: srun sets no SCIMESH_KILL_GRACE_MS),
    # then SIGTERM.
    coordinator_start --lease-ttl-ms 20000 --heartbeat-ms 5000
    plugin_config grace_s=3 poll_ms=50
    fenced_once run_terminal
    note "run cancelled -> last rank dead on both nodes: $LAST_MS ms (grace 3000 ms)"
    any_task_alive && fail "a task survived"
    ((LAST_MS >= 3000)) || fail "the step of a cancelled run was signalled after $LAST_MS ms, within its grace"
    grep -q "lease $LEASE: its run was cancelled (lease lost (run_terminal" "$SCIMESH_CLUSTER_DIR"/log/slurmd-n1.log ||
      fail "slurmd log does not say the step got its grace"
    grep -q "cancelling the step of lease $LEASE: still running 3000 ms after its run was cancelled" \
      "$SCIMESH_CLUSTER_DIR"/log/slurmd-n1.log || fail "slurmd log does not say why the step was signalled"
    wait_nodes_idle
    ;;

  hung)
    coordinator_start --lease-ttl-ms 20000 --heartbeat-ms 5000
    plugin_config grace_s=1 poll_ms=50
    lease_claim
    note "rank 0 hangs: the state file says held but is never renewed past its deadline"
    write_state n1 held 1 3000
    start=$SECONDS
    srun -N2 -n4 --scimesh-lease="$ATTEMPT_DIR" bash -c "$TASK" "$ATTEMPT_DIR" 2>"$WORK/srun.err" &&
      fail "the step of a hung lease completed"
    ((SECONDS - start < 25)) || fail "the step ran $((SECONDS - start)) s (deadline 3 s)"
    any_task_alive && fail "a task survived"
    grep -q "lease deadline passed" "$SCIMESH_CLUSTER_DIR"/log/slurmd-n1.log || fail "no reason logged"
    wait_nodes_idle
    ;;

  scancel)
    reported_lease 60000 10000
    note "a batch job holding the lease is scancelled"
    lease_batch_job
    scancel "$JOB"
    t0=$SECONDS
    error=$(attempt_error_within 15) || fail "no fail recorded 15 s after scancel"
    cls=$(jq -r .class <<<"$error")
    # The allocation ended (as the launcher classes it without the plugin):
    # requeued at once, no attempt spent.
    [[ $cls == preempted ]] || fail "recorded class '$cls', want preempted"
    note "fail recorded $((SECONDS - t0)) s after scancel (TTL 60 s)"
    api GET "/runs/$RUN/journal" | jq -e '[.events[] | select(.type == "attempt_failed")] | length == 1' >/dev/null ||
      fail "the fail was not recorded exactly once"
    wait_nodes_idle
    ;;

  time_limit)
    # SLURM's granularity is a minute, and slurmctld notices a passed limit
    # within its background period: the job ends 60 to 90 s after it starts.
    reported_lease 600000 60000
    note "a batch job holding the lease runs past its time limit (1 minute)"
    lease_batch_job -t 1
    # 150 s: the limit, slurmctld's background period, KillWait.
    error=$(attempt_error_within 150) || fail "no fail recorded 150 s after a 1-minute job started (lease TTL 600 s)"
    [[ $(jq -r .class <<<"$error") == preempted ]] || fail "recorded $error, want class preempted"
    jq -r .message <<<"$error" | grep -q "SLURM ended job $JOB (time limit)" || fail "the message does not say why: $error"
    note "recorded: $error"
    wait_for "job $JOB to end" 60 bash -c "[[ -z \$(squeue -h -j $JOB 2>/dev/null) ]]"
    wait_nodes_idle
    ;;

  planted_url)
    # lease.json names a listener of the user's choosing: the root plugin must
    # never send it the key, with url= (refused, logged) or without (no network).
    coordinator_start --lease-ttl-ms 60000 --heartbeat-ms 10000
    python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); open(sys.argv[2], "a").write("connection\n"); c.close()
' "$WORK/listener.port" "$WORK/listener.log" &
    LISTENER=$!
    wait_for "the listener" 10 test -s "$WORK/listener.port"
    : >"$WORK/listener.log"
    planted="http://127.0.0.1:$(<"$WORK/listener.port")"
    export SCIMESH_WORKER_ID=$WORKER_ID SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
    for config in "" "url=$SCIMESH_URL"; do
      rm -rf "$WORK/attempt"
      plugin_config $config grace_s=1 poll_ms=100 timeout_ms=1000 exit_timeout_ms=3000
      lease_claim
      (umask 077; jq --arg u "$planted" '. + {coordinator_url: $u}' "$ATTEMPT_DIR/lease.json" >"$WORK/planted.json")
      mv "$WORK/planted.json" "$ATTEMPT_DIR/lease.json"
      write_state n1 held 1 600000
      note "plugin '${config:-no url=}': a job whose lease.json names another coordinator is scancelled"
      lease_batch_job
      scancel_and_wait "$JOB"
      wait_nodes_idle
      [[ ! -s $WORK/listener.log ]] || fail "the plugin connected to the coordinator named in lease.json"
      cls=$(api GET "/runs/$RUN" | jq -r '.steps[0].attempts[0].error.class // empty')
      [[ -z $cls ]] || fail "a fail ($cls) was reported although the plugin must not report this lease"
      rm -rf "$ATTEMPT_DIR/pids"
    done
    grep -q "spank_scimesh: lease $LEASE not reported: lease.json names a coordinator other than the configured one" \
      "$SCIMESH_CLUSTER_DIR"/log/slurmd-*.log || fail "the refusal of the planted coordinator was not logged"
    kill "$LISTENER"
    ;;

  bench)
    coordinator_start --lease-ttl-ms 20000 --heartbeat-ms 5000
    plugin_config grace_s=2 poll_ms=50
    runs=${SCIMESH_BENCH_RUNS:-20}
    : >"$WORK/latency.txt"
    for i in $(seq "$runs"); do
      rm -rf "$WORK/attempt"
      fenced_once
      echo "$LAST_MS" >>"$WORK/latency.txt"
      wait_nodes_idle
    done
    sort -n "$WORK/latency.txt" | awk -v n="$runs" '{a[NR]=$1} END {
      printf "spank_scimesh lease loss -> last rank dead (2 nodes, 4 ranks), %d runs: p50 %d ms, max %d ms, min %d ms\n",
        n, a[int((NR+1)/2)], a[NR], a[1] }'
    ;;

  *) fail "unknown scenario '$scenario'" ;;
esac
note "ok: $scenario"
