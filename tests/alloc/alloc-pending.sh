#!/usr/bin/env bash
# System test on the dev cluster: scimesh-alloc's pending jobs.
#  1. While a blocking job holds both nodes, scimesh-alloc's submission stays
#     pending; a second scimesh-alloc of the same name, or of another name
#     for the same workflow, refuses to run.
#  2. The coordinator stops, and scimesh-alloc is SIGKILLed and restarted
#     while it is down: it changes nothing while it cannot see the queue;
#     the coordinator back, it adopts its pending job, submits nothing more.
#  3. The queue empties (the run is cancelled) while the job is pending: the
#     job is cancelled, never having run.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/alloc-lib.sh"
alloc_test_init alloc-pending
one_step_defs "$WORK/defs.json" pend one 1

note "1. a pending submission, and one instance per name"
block_cluster
alloc_start p --workflow pend --shape nodes=1,time=5
first=$ALLOC_PID
alloc_registered p
run=$(run_start pend '{}')
one_job() { [[ $(our_jobs p | wc -l) == 1 ]]; }
wait_for "scimesh-alloc to submit" 30 one_job
read -r job state _ < <(our_jobs p)
[[ $state == PENDING ]] || fail "job $job is $state, not PENDING, behind the blocker"
if "$SCIMESH_ALLOC_BIN" --name p --state-dir "$WORK/state-p" --definitions "$WORK/defs.json" --workflow pend \
  --shape nodes=1,time=5 --once >"$WORK/second.log" 2>&1; then
  fail "a second scimesh-alloc of the same name ran: $(cat "$WORK/second.log")"
fi
grep -q "another scimesh-alloc (pid $first) uses" "$WORK/second.log" ||
  fail "the second instance did not say why: $(cat "$WORK/second.log")"
if "$SCIMESH_ALLOC_BIN" --name other --state-dir "$WORK/state-other" --definitions "$WORK/defs.json" --workflow pend \
  --shape nodes=1,time=5 --once >"$WORK/other.log" 2>&1; then
  fail "a second scimesh-alloc for the same workflow ran under another name: $(cat "$WORK/other.log")"
fi
grep -q "another scimesh-alloc (pid $first) serves workflow pend" "$WORK/other.log" ||
  fail "the instance under another name did not say why: $(cat "$WORK/other.log")"

note "2. the coordinator stops; scimesh-alloc is SIGKILLed and restarted while it is down"
port=$(<"$WORK/port")
coordinator_stop
kill -KILL "$first"
wait "$first" 2>/dev/null || true
: >"$WORK/alloc-p.log"
alloc_start p --workflow pend --shape nodes=1,time=5
blind() { grep -q "coordinator: .*; nothing submitted or cancelled until it answers" "$WORK/alloc-p.log"; }
wait_for "the restarted scimesh-alloc to say it cannot see the queue" 60 blind
[[ $(our_jobs p) == "$job PENDING 1" ]] || fail "jobs while the coordinator is down: $(our_jobs p)"
note "   the coordinator is back: the pending job is adopted"
COORDINATOR_LISTEN=127.0.0.1:$port coordinator_start "${ALLOC_COORDINATOR_FLAGS[@]}"
decided() { grep -q "jobs pending=1 running=0" "$WORK/alloc-p.log"; }
wait_for "the restarted scimesh-alloc to see its pending job" 60 decided
sleep 3  # three more decisions
[[ $(submitted_count p) == 0 ]] || fail "the restarted scimesh-alloc submitted again: $(cat "$WORK/alloc-p.log")"
[[ $(our_jobs p | wc -l) == 1 ]] || fail "jobs after the restart: $(our_jobs p)"

note "3. the queue empties while the job is pending: it is cancelled"
api POST "/runs/$run/cancel" -d '{}' >/dev/null
wait_for "scimesh-alloc to cancel its pending job" 30 no_jobs_of p
grep -q "cancelled $job (no demand left for them)" "$WORK/alloc-p.log" || fail "the cancellation is not logged"
[[ $(scontrol show job -o "$job" | grep -o 'JobState=[A-Z]*') == JobState=CANCELLED ]] ||
  fail "job $job: $(scontrol show job -o "$job" | grep -o 'JobState=[A-Z]*')"
scontrol show job -o "$job" | grep -q 'StartTime=Unknown\|RunTime=00:00:00' || fail "job $job ran before it was cancelled"
echo PASS
