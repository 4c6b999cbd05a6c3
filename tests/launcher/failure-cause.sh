#!/usr/bin/env bash
# System test: a failed step's message leads with its cause, and a program
# that cannot be started is not retried. MODE local: scimesh-launch with
# mpirun on this host (4 ranks on one node); MODE slurm: an sbatch -N2
# allocation on the dev cluster (4 ranks on n1 and n2, srun).
#   rank3    rank 3 exits 7, the others are stopped: "rank 3 ...: exit code 7" first
#   wrapped  a 2-rank step through scimesh-rank whose program does not exist
#   native   the same, started directly by mpirun/srun (no wrapper)
#   single   a 1-rank step whose program does not exist, started by the
#            launcher itself (local) or its node's agent (slurm)
# The missing-program steps allow 3 attempts and must fail `fatal` after one.
mode=${1:?usage: failure-cause.sh local|slurm}
source "$(dirname "$0")/../lib/harness.sh"
harness_init "failure-cause-$mode"
lsan_without_tls_roots
coordinator_start --lease-ttl-ms "$(scaled 6000)" --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 100
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE

if [[ $mode == slurm ]]; then shape='"nodes": 2, "ranks_per_node": 2'; else shape='"nodes": 1, "ranks_per_node": 4'; fi
missing='"max_attempts": 3, "walltime_s": 60, "resources": {"nodes": 1, "ranks_per_node": 2}'
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "cause", "version": "1", "steps": [
    {"id": "rank3", "max_attempts": 1, "walltime_s": 60, "resources": {$shape},
     "run": {"argv": ["if [ \"\${OMPI_COMM_WORLD_RANK:-\$SLURM_PROCID}\" = 3 ]; then exit 7; fi; sleep 30"],
             "shell": true, "mpi": "none"}}]},
  {"workflow": "missing-wrapped", "version": "1", "steps": [
    {"id": "wrapped", $missing, "run": {"argv": ["bin/solvr"], "mpi": "none"}}]},
  {"workflow": "missing-native", "version": "1", "steps": [
    {"id": "native", $missing, "run": {"argv": ["bin/solvr"], "native": true, "mpi": "none"}}]},
  {"workflow": "missing-single", "version": "1", "steps": [
    {"id": "single", "max_attempts": 3, "walltime_s": 60, "resources": {"nodes": 1, "ranks_per_node": 1},
     "run": {"argv": ["bin/solvr"], "mpi": "none"}}]}
]}
JSON
jq . "$WORK/defs.json" >/dev/null || fail "bad test definitions"
launch_args=(--definitions "$WORK/defs.json" --spool "$WORK/spool" --idle-exit 6 --wait-ms 1000 --kill-grace 2)
if [[ $mode == slurm ]]; then
  use_dev_cluster
  job=$(sbatch --parsable -N2 --ntasks-per-node=2 -t 5 -o "$WORK/launcher.log" \
    --wrap "exec '$SCIMESH_LAUNCH_BIN' ${launch_args[*]} --drain-margin 20")
  CLEANUP_CMDS+=("scancel $job")
  note "allocation: job $job"
else
  "$SCIMESH_LAUNCH_BIN" "${launch_args[@]}" --backend local --topology "synthetic:core:4 pu:1" \
    >"$WORK/launcher.log" 2>&1 &
  CLEANUP_PIDS+=("$!")
fi

start_first_run cause 60 '{}' "the launcher registered"
r_cause=$RUN_ID
declare -A run_of=([wrapped]=$(run_start missing-wrapped '{}') [native]=$(run_start missing-native '{}')
  [single]=$(run_start missing-single '{}'))
for r in "$r_cause" "${run_of[@]}"; do
  s=$(wait_run "$r" 120)
  [[ $s == failed ]] || fail "run $r ended '$s', not failed: $(api GET "/runs/$r")"
done

# attempts RUN STEP FIELD: the field of each attempt of STEP in RUN, one a line.
attempts() { api GET "/runs/$1" | jq -r --arg s "$2" ".steps[] | select(.step_id==\$s) | .attempts[] | $3"; }
msg=$(attempts "$r_cause" rank3 .error.message)
note "rank3: $msg"
if [[ $mode == slurm ]]; then want='the step failed: task 3 on n2: exit code 7; then srun ended with '
else want='the step failed: rank 3: exit code 7 '; fi
[[ $msg == "$want"* ]] || fail "rank 3's exit is not the message's first words: '$msg'"
if [[ $mode == slurm ]]; then
  # The user guide's failure table shows this message as it is printed.
  guide=$(dirname "$0")/../../docs/user-guide.md
  grep -qF "\`$msg\`" "$guide" || fail "docs/user-guide.md's failure table does not show '$msg'"
fi

# single: one rank, started by the launcher itself (local) or its node's
# agent (slurm): the same words, naming rank 0 and its node.
for step in wrapped native single; do
  classes=$(attempts "${run_of[$step]}" "$step" .error.class | tr '\n' ' ')
  msg=$(attempts "${run_of[$step]}" "$step" .error.message | head -n1)
  note "$step: [$classes] $msg"
  [[ $classes == "fatal " ]] || fail "$step: a missing program was tried more than once or not fatal: [$classes]"
  [[ $msg == "the step failed: 'solvr' not found ("* ]] || fail "$step: the message does not say what is missing: '$msg'"
  [[ $msg != *"$WORK"* ]] || fail "$step: the message holds a local path: '$msg'"
  [[ $step != single || $msg == *"(rank 0 on "*"a retry cannot help"* ]] ||
    fail "single: the message does not name the rank or say a retry cannot help: '$msg'"
done
note "failure causes ($mode): OK"
