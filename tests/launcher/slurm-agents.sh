#!/usr/bin/env bash
# System test on the dev cluster: the launcher's node agents (--agents yes,
# the default). In one allocation:
#  - a single-rank step is forked by its node's agent, not srun: the log says
#    so, it has no SLURM step of its own, and its cpus read back from
#    /proc/PID/status (Cpus_allowed_list) are exactly its placement's;
#  - a lost lease (the run cancelled) kills an agent-run step's whole process
#    group, a grandchild that ignores SIGTERM included, within the grace;
#  - a killed agent (SIGKILL) leaves no step process; the step's attempt
#    ends `retryable` and its second attempt completes;
#  - a killed launcher (SIGKILL) leaves no agent and no step.
# Then `--agents no`: the same single-rank step runs as an srun step.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-agents
use_dev_cluster
coordinator_start --lease-ttl-ms 4000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"
write_slow_step
cat >"$WORK/pin.sh" <<'SH'
#!/bin/sh
# Where this process may run, and whether it is a SLURM step of its own.
cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
printf '{"cpus":"%s","slurm_step":"%s"}\n' "$cpus" "${SLURM_STEP_ID:-none}" > "$SCIMESH_ATTEMPT_DIR/output.json"
SH
cat >"$WORK/deaf.sh" <<'SH'
#!/bin/sh
# Ignores SIGTERM, and so does the grandchild it leaves behind.
trap '' TERM
sh -c "trap '' TERM; echo \$\$ > '$SCIMESH_ATTEMPT_DIR/grandchild.pid'; exec sleep 600" &
echo $$ > "$SCIMESH_ATTEMPT_DIR/leader.pid"
while :; do sleep 1; done
SH
chmod +x "$WORK/pin.sh" "$WORK/deaf.sh"
cat >"$WORK/defs.json" <<JSON
{"workflows": [{"workflow": "pin", "version": "1", "steps": [
   {"id": "pin", "max_attempts": 1, "walltime_s": 60, "resources": {"cpus_per_rank": 2},
    "run": {"argv": ["$WORK/pin.sh"], "mpi": "none"}}]},
 {"workflow": "deaf", "version": "1", "steps": [
   {"id": "deaf", "max_attempts": 1, "walltime_s": 200, "run": {"argv": ["$WORK/deaf.sh"], "mpi": "none"}}]},
 {"workflow": "slow", "version": "1", "steps": [
   {"id": "slow", "max_attempts": 2, "walltime_s": 400, "run": {"argv": ["$WORK/slow.sh"], "mpi": "none"}}]}]}
JSON

# job_pids JOB [COMM]: processes of JOB (by their environment) on this host,
# optionally only those named COMM.
job_pids() {
  local f pid
  for f in /proc/[0-9]*/environ; do
    pid=${f#/proc/}; pid=${pid%/environ}
    grep -qx "SLURM_JOB_ID=$1" < <(tr '\0' '\n' <"$f" 2>/dev/null) || continue
    [[ -z ${2:-} || $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] && echo "$pid"
  done
  return 0
}
alive() { kill -0 "$1" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

submit_launcher agents 10 --idle-exit 120
job=$JOB
agents_up() { [[ $(grep -c "node agent of n[0-9] ready" "$WORK/agents.log") == 2 ]]; }
wait_for "both node agents to be ready in job $job" 90 agents_up

note "a single-rank step is forked by its node's agent, pinned to its placement"
run=$(run_when_registered pin '{}')
[[ $(wait_run "$run" 60) == completed ]] || fail "run $run: $(api GET "/runs/$run")"
grep -q "step pin, attempt 1): started on .* by its node agent" "$WORK/agents.log" ||
  fail "the pin step was not started by a node agent: $(grep 'step pin' "$WORK/agents.log")"
out=$(api GET "/runs/$run" | jq -c '.steps[0].output')
placed=$(jq -r '[.ranks[0].cpus[] | tostring] | join(",")' "$WORK/spool/$run/pin/1/placement.json")
got=$(jq -r .cpus <<<"$out")
# Cpus_allowed_list writes ranges: 0-1 for 0,1.
expand() { awk -F, '{for (i = 1; i <= NF; i++) { n = split($i, r, "-"); if (n == 2) for (c = r[1]; c <= r[2]; c++) printf "%s%d", s++ ? "," : "", c; else printf "%s%d", s++ ? "," : "", r[1] } }'; }
[[ $(expand <<<"$got") == "$placed" ]] || fail "the step ran on cpus '$got', placed on '$placed'"
[[ $(jq -r .slurm_step <<<"$out") == none ]] || fail "an agent-run step saw srun's step variables: $out"

note "a lost lease kills an agent-run step's whole process group within the grace"
run=$(run_when_registered deaf '{}')
dir=$WORK/spool/$run/deaf/1
both_pids() { [[ -s $dir/leader.pid && -s $dir/grandchild.pid ]]; }
wait_for "the deaf step and its grandchild to run" 60 both_pids
leader=$(<"$dir/leader.pid") grandchild=$(<"$dir/grandchild.pid")
api POST "/runs/$run/cancel" -d '{}' >/dev/null
gone() { ! alive "$leader" && ! alive "$grandchild"; }
# Heartbeat (1 s) + grace (2 s) + SIGTERM grace (2 s), with room for a busy host.
wait_for "the deaf step's group to be killed" 30 gone

note "a killed agent leaves no step process; the attempt is retried and completes"
run=$(run_when_registered slow '{}')
slow_started() { grep -q "step slow, attempt 1): started on" "$WORK/agents.log"; }
wait_for "the slow step to start" 60 slow_started
node=$(grep "step slow, attempt 1): started on" "$WORK/agents.log" | sed -E 's/.*started on ([^ ]+) .*/\1/')
agent=""
for p in $(job_pids "$job" scimesh-agent); do
  grep -qx "SLURMD_NODENAME=$node" < <(tr '\0' '\n' <"/proc/$p/environ") && agent=$p
done
[[ -n $agent ]] || fail "no scimesh-agent process of job $job on $node"
slow_pids=$(pgrep -f -- "$WORK/slow.sh" || true)
[[ -n $slow_pids ]] || fail "the slow step has no process"
kill -KILL "$agent"
no_slow() { ! pgrep -f -- "$WORK/slow.sh" >/dev/null; }
wait_for "the killed agent's step processes to be gone" 30 no_slow
[[ $(wait_run "$run" 90) == completed ]] || fail "run $run: $(api GET "/runs/$run")"
show=$(api GET "/runs/$run")
[[ $(jq -r '[.steps[0].attempts[].status] | join(",")' <<<"$show") == failed,completed ]] ||
  fail "the slow step's attempts are not [failed, completed]: $show"
[[ $(jq -r '.steps[0].attempts[0].error.class' <<<"$show") == retryable ]] || fail "attempt 1 not retryable: $show"

note "a killed launcher leaves no agent and no step"
run=$(run_when_registered deaf '{}')
dir=$WORK/spool/$run/deaf/1
wait_for "a second deaf step to run" 60 both_pids
leader=$(<"$dir/leader.pid") grandchild=$(<"$dir/grandchild.pid")
kill -KILL "$(launcher_pid agents)"
wait_for "allocation $job to end" 60 job_gone "$job"
nothing_left() { [[ -z $(job_pids "$job") ]] && gone; }
wait_for "every agent and step process of job $job to be gone" 60 nothing_left

note "--agents no: the same step is an srun step of its own"
submit_launcher noagents 5 --idle-exit 5 --agents no
run=$(run_when_registered pin '{}')
[[ $(wait_run "$run" 90) == completed ]] || fail "run $run: $(api GET "/runs/$run")"
out=$(api GET "/runs/$run" | jq -c '.steps[0].output')
[[ $(jq -r .slurm_step <<<"$out") != none ]] || fail "with --agents no the step should be an srun step: $out"
! grep -q "node agent" "$WORK/noagents.log" || fail "--agents no started node agents"
note "node agents: OK"
