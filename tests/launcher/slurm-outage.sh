#!/usr/bin/env bash
# System test on the dev cluster: the coordinator is killed (-9) for 20 s while
# an allocation runs a 2-node step (rank 0 heartbeats through the outage) and a
# 1-rank step that ends during it (its `complete` is retried until the
# coordinator is back). Nothing is lost: the run completes with exactly one
# attempt per step, none expired, and the step that needs the early one runs
# after the restart.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-outage
use_dev_cluster
# Leases outlive the outage (TTL 30 s, as a real site would set well above it).
serve_flags=(--lease-ttl-ms 30000 --heartbeat-ms 1000 --grace-ms 10000 --retry-base-ms 200)
coordinator_start "${serve_flags[@]}"
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
source "$(dirname "$0")/allocation-lib.sh"

cat >"$WORK/defs.json" <<JSON
{"workflow": "outage", "version": "1", "steps": [
  {"id": "wide", "max_attempts": 1, "walltime_s": 120, "resources": {"nodes": 2, "ranks_per_node": 1},
   "run": {"argv": ["sh", "-c", "sleep 30; [ \$SLURM_PROCID = 0 ] && echo '{\"ranks\":'\$SLURM_NTASKS'}' > output.json; true"], "shell": false}},
  {"id": "early", "max_attempts": 1, "walltime_s": 60,
   "run": {"argv": ["sh", "-c", "sleep 4; echo '{\"early\":true}' > output.json"], "mpi": "none"}},
  {"id": "after", "needs": ["early"], "max_attempts": 1, "walltime_s": 60,
   "run": {"argv": ["sh", "-c", "echo '{\"after\":true}' > output.json"], "mpi": "none"}}
]}
JSON
jq . "$WORK/defs.json" >/dev/null || fail "bad test definitions"

submit_launcher outage 5 --idle-exit 10
job=$JOB
run=$(run_when_registered outage '{}')
both_started() { [[ $(started_count "$run") == 2 ]]; }
wait_for "wide and early to start in job $job" 90 both_started

port=$(<"$WORK/port")
note "coordinator down for 20 s (kill -9, port $port)"
kill -KILL "$COORDINATOR_PID"
wait "$COORDINATOR_PID" 2>/dev/null || true
sleep 20  # the outage itself, not a synchronisation
squeue -h -j "$job" | grep -q . || fail "the allocation ended while the coordinator was down"
COORDINATOR_LISTEN=127.0.0.1:$port coordinator_start "${serve_flags[@]}"
note "coordinator back"

status=$(wait_run "$run" 120)
show=$(api GET "/runs/$run")
[[ $status == completed ]] || fail "run $run ended '$status' after the outage: $show"
for s in wide early after; do
  [[ $(jq -r --arg s "$s" '.steps[] | select(.step_id==$s) | [.attempts[].status] | join(",")' <<<"$show") == completed ]] ||
    fail "step $s does not have exactly one completed attempt: $show"
done
[[ $(jq -r '.steps[] | select(.step_id=="wide") | .output.ranks' <<<"$show") == 2 ]] || fail "wide's output is wrong: $show"
! api GET "/runs/$run/journal" | jq -e '.events[] | select(.type=="attempt_expired" or .type=="attempt_orphaned")' >/dev/null ||
  fail "an attempt was orphaned or expired during a 20 s outage"
# The outage was seen and lived through: some call failed and was retried.
grep -qiE "retry|unreachable|connect" "$WORK/outage.log" || fail "the launcher's log shows no failed call during the outage"
note "coordinator outage: OK"
