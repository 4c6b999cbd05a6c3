# Helpers for scimesh-alloc's dev-cluster tests (source after tests/lib/harness.sh).

# The coordinator's settings in every test (and at a restart).
ALLOC_COORDINATOR_FLAGS=(--lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000)

# alloc_test_init NAME: the harness in $WORK, the dev cluster's environment,
# a coordinator, and its worker key for scimesh-alloc and its allocations.
alloc_test_init() {
  harness_init "$1"
  use_dev_cluster
  coordinator_start "${ALLOC_COORDINATOR_FLAGS[@]}"
  export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
}

# alloc_registered NAME: waits until scimesh-alloc NAME has registered its definitions.
alloc_registered() {
  _alloc_registered() { grep -q "registered 1 workflow definition" "$WORK/alloc-$1.log"; }
  wait_for "scimesh-alloc $1 to register the definitions" 30 _alloc_registered "$1"
}

# alloc_start NAME [flags...]: scimesh-alloc in the background, state in
# $WORK/state-NAME, log in $WORK/alloc-NAME.log; sets ALLOC_PID. Its jobs are
# scancelled at cleanup (by name).
alloc_start() {
  local name=$1
  shift
  "$SCIMESH_ALLOC_BIN" --name "$name" --state-dir "$WORK/state-$name" --definitions "$WORK/defs.json" \
    --spool "$WORK/spool" --interval 1 --drain-margin 20 --idle-exit 10 \
    --launcher-arg --wait-ms --launcher-arg 1000 --launcher-arg --kill-grace --launcher-arg 2 \
    "$@" >>"$WORK/alloc-$name.log" 2>&1 &
  ALLOC_PID=$!
  CLEANUP_PIDS+=("$ALLOC_PID")
  CLEANUP_CMDS+=("scancel --name=scimesh-alloc-$name")
}

# our_jobs NAME: "id state nodes" per job of scimesh-alloc NAME, as squeue shows them.
our_jobs() { squeue -h --name="scimesh-alloc-$1" -o "%i %T %D"; }
no_jobs_of() { [[ -z $(our_jobs "$1") ]]; }
submitted_count() { grep -c "submitted job" "$WORK/alloc-$1.log" || true; }

# block_cluster: a job holding both nodes (sleep), so that what scimesh-alloc
# submits stays pending; sets BLOCKER.
block_cluster() {
  BLOCKER=$(sbatch --parsable -N2 --exclusive -t 10 -J blocker -o /dev/null --wrap "sleep 600")
  [[ -n $BLOCKER ]] || fail "sbatch refused the blocking job"
  CLEANUP_CMDS+=("scancel $BLOCKER")
  running() { [[ $(squeue -h -j "$BLOCKER" -o %T) == RUNNING ]]; }
  wait_for "the blocking job to run" 60 running
}

# one_step_defs FILE WORKFLOW STEP NODES: a workflow of one step of NODES nodes (1 rank each, 1 s).
one_step_defs() {
  cat >"$1" <<JSON
{"workflows": [{"workflow": "$2", "version": "1", "steps": [
  {"id": "$3", "max_attempts": 1, "walltime_s": 30, "resources": {"nodes": $4, "ranks_per_node": 1},
   "run": {"argv": ["sh", "-c", "sleep 1; if [ \"\${SLURM_PROCID:-0}\" = 0 ]; then echo '{}' > output.json; fi"], "mpi": "none"}}]}]}
JSON
}
