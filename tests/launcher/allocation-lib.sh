# Helpers for the launcher's dev-cluster tests (source after tests/lib/harness.sh
# and coordinator_start): allocations that run scimesh-launch, and a step whose
# first attempt runs long and later ones finish at once.

# write_slow_step: $WORK/slow.sh sleeps 300 s on attempt 1 and 1 s after; rank 0
# writes {"attempt", "host"} to output.json. Works as a 1-rank or multi-rank step.
write_slow_step() {
  cat >"$WORK/slow.sh" <<'SH'
#!/bin/sh
attempt=$(jq -r .attempt "$SCIMESH_ATTEMPT_DIR/lease.json")
if [ "$attempt" = 1 ]; then sleep "${SLOW_FIRST_S:-300}"; else sleep 1; fi
if [ "${SLURM_PROCID:-0}" = 0 ]; then
  printf '{"attempt":%s,"host":"%s"}\n' "$attempt" "$(hostname)" > "$SCIMESH_ATTEMPT_DIR/output.json"
fi
SH
  chmod +x "$WORK/slow.sh"
}

# submit_launcher NAME MINUTES [launcher flags...]: an sbatch -N2 allocation whose
# batch script is scimesh-launch (exec'd, so its signals and exit status are the
# job's); log in $WORK/NAME.log, events in $WORK/NAME.events.jsonl. Sets JOB to
# the job id (not printed: a $(...) subshell would lose the scancel at cleanup).
submit_launcher() {
  local name=$1 time=$2
  shift 2
  local job
  job=$(sbatch --parsable -N2 --ntasks-per-node=2 -t "$time" -o "$WORK/$name.log" -J "$name" \
    --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --events '$WORK/$name.events.jsonl' --wait-ms 1000 --kill-grace 2 --drain-margin 20 $*")
  [[ -n $job ]] || fail "sbatch refused allocation $name"
  CLEANUP_CMDS+=("scancel $job")
  JOB=$job
}

job_gone() { ! squeue -h -j "$1" 2>/dev/null | grep -q .; }
# exit_code JOB: SLURM's "status:signal" for an ended job (MinJobAge keeps it).
exit_code() { scontrol show job -o "$1" | grep -o 'ExitCode=[0-9:]*' | cut -d= -f2; }
# launcher_pid NAME: the launcher process of allocation NAME (the dev cluster's
# nodes share this host's PID namespace).
launcher_pid() { pgrep -f -- "--events $WORK/$1.events.jsonl" | head -n1; }
# started_count RUN: how many steps' latest attempts have started.
started_count() { api GET "/runs/$1" | jq '[.steps[].attempts[-1].started_at // empty] | length'; }
# run_when_registered WORKFLOW INPUT_JSON: starts a run as soon as a launcher has
# registered WORKFLOW (POST /runs answers 404 until then); prints the run id.
run_when_registered() {
  local body="{\"workflow\":\"$1\",\"input\":$2}" deadline=$((SECONDS + 90))
  until api POST /runs -o "$WORK/run-start.json" -w '%{http_code}' -d "$body" | grep -q 201; do
    ((SECONDS < deadline)) || fail "workflow $1 was never registered"
    sleep 0.2
  done
  jq -er .run_id "$WORK/run-start.json"
}

# write_deaf_step FILE WORKFLOW: definitions of one 2-node step whose ranks
# ignore SIGTERM and never poll, so only a SIGKILL ends them (the SPANK
# plugin's, or the launcher's after --kill-grace). Rank R writes its pid to
# pids.R in the attempt directory.
write_deaf_step() {
  cat >"$1" <<JSON
{"workflow": "$2", "version": "1", "steps": [
  {"id": "deaf", "max_attempts": 1, "walltime_s": 200, "resources": {"nodes": 2, "ranks_per_node": 1},
   "run": {"argv": ["sh", "-c", "trap '' TERM; echo \$\$ > pids.\$SLURM_PROCID; exec sleep 600"], "mpi": "none"}}]}
JSON
}

slurmd_logs() { cat "$SCIMESH_CLUSTER_DIR"/log/slurmd-n*.log; }

# deaf_step_watched RUN: waits until both ranks of RUN's deaf step run and a
# slurmd log says the plugin watches its lease; sets DEAF_DIR and DEAF_LEASE.
deaf_step_watched() {
  DEAF_DIR=$WORK/spool/$1/deaf/1
  two_ranks() { [[ -s $DEAF_DIR/pids.0 && -s $DEAF_DIR/pids.1 ]]; }
  wait_for "both ranks of the deaf step to run" 90 two_ranks
  DEAF_LEASE=$(api GET "/runs/$1" | jq -r '.steps[0].attempts[-1].lease_id // empty')
  [[ -n $DEAF_LEASE ]] || fail "no lease for run $1"
  watching() { grep -q "watching lease $DEAF_LEASE " <<<"$(slurmd_logs)"; }
  wait_for "the plugin to watch lease $DEAF_LEASE" 30 watching
}

# plugin_kills_deaf_step RUN: fences the lease of RUN's deaf step as a rank 0
# refused with 409 fenced would (rank 0's wrapper stopped, then lease.state
# rewritten `lost: fenced`): both deaf ranks must die long before the
# launcher's own grace, and a slurmd log must say the plugin cancelled the
# step at once. (A run cancelled by its owner is not fenced: the plugin gives
# it the launcher's grace, tests/plugin/owner-cancel.sh.)
plugin_kills_deaf_step() {
  local wrapper state=$DEAF_DIR/lease.state
  rank0_holds() { grep -q '"holder":"rank0"' "$state" 2>/dev/null; }
  wait_for "rank 0 of the deaf step to hold its lease" 30 rank0_holds
  wrapper=$(ps -o ppid= -p "$(<"$DEAF_DIR/pids.0")" | tr -d ' ')
  [[ -n $wrapper ]] || fail "no rank-0 wrapper above the deaf step's rank 0"
  kill -STOP "$wrapper"  # its heartbeats would rewrite lease.state
  jq -c '.state = "lost" | .reason = "fenced" | .seq += 1' "$state" >"$state.fenced" || fail "cannot read $state"
  mv "$state.fenced" "$state"
  ranks_gone() { ! kill -0 "$(<"$DEAF_DIR/pids.0")" 2>/dev/null && ! kill -0 "$(<"$DEAF_DIR/pids.1")" 2>/dev/null; }
  wait_for "the deaf ranks to be killed" 60 ranks_gone
  grep -q "cancelling the step of lease $DEAF_LEASE: lease lost (fenced" <<<"$(slurmd_logs)" ||
    fail "the plugin did not cancel the step of lease $DEAF_LEASE at once"
}
