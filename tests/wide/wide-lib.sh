# Shared by the wide-step tests and benchmarks (source after harness_init):
# the dev cluster at 32 cpus per node, a coordinator, the test workflows,
# launchers in 2 x 32-cpu allocations, and the processes of an attempt.

# wide_setup RANKS: sets ranks, per_node, port, plugstack; writes
# $WORK/cancel.json (workflows native, wrapped) and $WORK/deaf.json (deaf).
wide_setup() {
  ranks=$1
  per_node=$((ranks / 2))
  use_dev_cluster
  : "${SCIMESH_SPANK_PLUGIN_BIN:?}" "${SCIMESH_WIDE_NATIVE_BIN:?}" "${SCIMESH_WIDE_PLAIN_BIN:?}" "${SCIMESH_RANK_BIN:?}"
  use_cluster_cpus 32
  # The plugin of this build, quick to act; the launcher waits longer, so a
  # lost lease's ranks that never poll are the plugin's to kill.
  plugstack=$SCIMESH_CLUSTER_DIR/etc/plugstack.conf
  echo "optional $(plugin_under_test) grace_s=1 poll_ms=50" >"$plugstack"
  # Leases live 30 s: starting 64 ranks on CI's 2 cores holds every process
  # up for seconds (below), the launcher's heartbeats too (4 s apart where
  # they go every 500 ms, seen in CI), and these tests end leases by
  # cancelling them, never by expiry.
  coordinator_start --lease-ttl-ms 30000 --heartbeat-ms 500 --grace-ms 2000 --retry-base-ms 100 --log-level debug
  port=$(<"$WORK/port")

  # More ranks than cores (64 on CI's 2): OpenMPI's MPI_Init waits for its
  # PMIx fence in a loop of 100 us sleeps, and 64 such loops starve
  # slurmstepd's PMIx server -- which must finish the fence -- and every
  # other process on the machine. Measured with 64 ranks under srun: no rank
  # out of MPI_Init after 170 s, a sleeping probe held up 6.4 s; without the
  # fence (asynchronous modex, no data collected up front): all 64 up in
  # 4.4 s, the probe held up 0.32 s at worst. The step sets it in run.env
  # (docs/user-guide.md, Troubleshooting: more ranks than cores). Without the
  # fence a rank may look for a peer's address before the peer has published
  # it, and MPI_Init fails ("PML add procs failed", seen once in 4 starts of
  # 64 ranks): a retryable failure, so each step has 3 attempts and start()
  # follows the newest.
  local mpi_env='{"OMPI_MCA_pmix_base_async_modex": "1", "OMPI_MCA_pmix_base_collect_data": "0"}'
  step() {  # workflow, program, native, mode
    echo "{\"workflow\": \"$1\", \"version\": \"1\", \"steps\": [{\"id\": \"wide\", \"walltime_s\": 600,
      \"max_attempts\": 3, \"input\": {\"mode\": \"$4\"}, \"resources\": {\"nodes\": 2, \"ranks_per_node\": $per_node},
      \"run\": {\"argv\": [\"$2\"], \"native\": $3, \"env\": $mpi_env}}]}"
  }
  echo "{\"workflows\": [$(step native "$SCIMESH_WIDE_NATIVE_BIN" true cancel),
    $(step wrapped "$SCIMESH_WIDE_PLAIN_BIN" false cancel)]}" >"$WORK/cancel.json"
  echo "{\"workflows\": [$(step deaf "$SCIMESH_WIDE_NATIVE_BIN" true ignore)]}" >"$WORK/deaf.json"
  jq . "$WORK/cancel.json" "$WORK/deaf.json" >/dev/null || fail "bad test definitions"
}

# launcher NAME DEFS [flags]: scimesh-launch in a 2 x 32-cpu allocation, which
# places on 32 cores per node as SLURM declares them; sets JOB. It exits after
# 4 s idle unless the flags (which come last, and win) say otherwise.
launcher() {
  local name=$1 defs=$2 regs
  shift 2
  regs=$(grep -c "POST /v1/api/workers/register -> 200" "$WORK/coordinator.log" || true)
  JOB=$(SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE sbatch --parsable -N2 --ntasks-per-node=32 -t 30 -o "$WORK/launcher-$name.log" \
    --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$defs' --spool '$WORK/spool' \
      --scimesh-rank '$SCIMESH_RANK_BIN' --topology 'synthetic:core:32 pu:1' --idle-exit 4 --wait-ms 2000 \
      --drain-margin 20 $*")
  CLEANUP_CMDS=("scancel $JOB" "${CLEANUP_CMDS[@]}")
  registered() { (( $(grep -c "POST /v1/api/workers/register -> 200" "$WORK/coordinator.log") > regs )); }
  wait_for "the launcher in job $JOB registered" 120 registered
}
job_gone() { [[ -z $(squeue -h -j "$JOB" 2>/dev/null) ]]; }

# step_processes DIR: pids of every process whose environment names this
# attempt directory (srun, scimesh-rank, the ranks), on either node.
step_processes() {
  local p
  for p in /proc/[0-9]*; do
    # Not `tr | grep -q` (pipefail: tr killed by SIGPIPE once grep has matched).
    grep -qx "SCIMESH_ATTEMPT_DIR=$1" < <(tr '\0' '\n' <"$p/environ" 2>/dev/null) && echo "${p#/proc/}"
  done
  return 0
}

# rank_pids: each rank's pid (from pids/), and its scimesh-rank when wrapped.
rank_pids() {
  local f pid ppid
  for f in "$DIR"/pids/*; do
    pid=$(<"$f")
    echo "$pid"
    ppid=$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null) || continue
    [[ $(cat "/proc/$ppid/comm" 2>/dev/null) == scimesh-rank ]] && echo "$ppid"
  done
  return 0
}
alive() { [[ -d /proc/$1 && $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

# start WORKFLOW: starts a run and waits until rank 0 holds its lease and all
# ranks are up; sets RUN, DIR (attempt directory), LEASE.
start() {
  RUN=$(run_start "$1" '{}')
  local t0=$SECONDS
  attempt() {  # the newest attempt's directory
    local n
    n=$(ls "$WORK/spool/$RUN/wide" 2>/dev/null | sort -n | tail -n1)
    [[ -n $n ]] && DIR=$WORK/spool/$RUN/wide/$n
  }
  wait_for "run $RUN's attempt directory" 120 attempt
  ranks_up() { attempt && (( $(ls "$DIR/pids" 2>/dev/null | wc -l) == ranks )); }
  wait_for "$ranks ranks of $1 up" 600 ranks_up
  held() { attempt && jq -e '.holder=="rank0" and .state=="held"' "$DIR/lease.state" >/dev/null 2>&1; }
  wait_for "rank 0 holds the lease of $1" 120 held
  LEASE=$(jq -r .lease_id "$DIR/lease.json")
  note "$1: $ranks ranks up on n1+n2 after $((SECONDS - t0)) s"
}

# none_left: no rank, no scimesh-rank, nothing started for the attempt.
none_left() {
  local pid
  for pid in $(rank_pids) $(cat "$WORK/step-pids.txt" 2>/dev/null); do alive "$pid" && return 1; done
  [[ -z $(step_processes "$DIR") ]]
}
