#!/usr/bin/env bash
# System test: coordinator + scimesh-launch (local backend) + real mpirun.
# A 1-rank shell step, a 2-rank native MPI step that needs it, a step that
# exits non-zero and one killed by a signal: outcomes, outputs, artifacts,
# the events file and the timeline report are checked as a user sees them.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-local
lsan_without_tls_roots
coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 500 --grace-ms "$(scaled 1000)" --retry-base-ms 100
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "local-mix", "version": "1", "steps": [
    {"id": "hello", "input": {"name": "{{input.name}}"}, "max_attempts": 1,
     "run": {"argv": ["jq -c '{greeting: (\"hello \" + .input.name), traceparent: \$ENV.TRACEPARENT, trace_id, span_id}' lease.json > output.json && echo notes > artifacts/notes.txt"], "shell": true}},
    {"id": "pair", "needs": ["hello"], "input": {"terms": 1000}, "max_attempts": 1,
     "resources": {"nodes": 1, "ranks_per_node": 2},
     "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}}]},
  {"workflow": "broken", "version": "1", "steps": [
    {"id": "exit3", "max_attempts": 1, "run": {"argv": ["exit 3"], "shell": true}}]},
  {"workflow": "crash", "version": "1", "steps": [
    {"id": "segv", "max_attempts": 1, "run": {"argv": ["kill -SEGV \$\$"], "shell": true}}]}
]}
JSON

SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --events "$WORK/events.jsonl" --idle-exit 4 --wait-ms 1000 --kill-grace 2 \
  >"$WORK/launcher.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")

# The probe run itself must complete too: it is a real run.
start_first_run local-mix 20 '{"name":"probe"}' "the launcher registered its workflows"
r1=$(run_start local-mix '{"name":"world"}')
r2=$(run_start broken '{}')
r3=$(run_start crash '{}')

for r in "$r1" "$r2" "$r3"; do
  s=$(wait_run "$r" 90)
  note "run $r: $s"
  echo "$s" >"$WORK/status-$r"
done
[[ $(<"$WORK/status-$r1") == completed ]] || fail "local-mix run did not complete: $(api GET /runs/$r1)"
[[ $(<"$WORK/status-$r2") == failed ]] || fail "the exit-3 run should fail"
[[ $(<"$WORK/status-$r3") == failed ]] || fail "the SIGSEGV run should fail"

show=$(api GET "/runs/$r1")
[[ $(jq -r '.steps[] | select(.step_id=="hello") | .output.greeting' <<<"$show") == "hello world" ]] ||
  fail "hello's output is wrong: $show"
# The step saw its W3C trace context, made of the ids of the lease it ran.
hello=$(jq -c '.steps[] | select(.step_id=="hello") | .output' <<<"$show")
note "hello's trace context: $(jq -r .traceparent <<<"$hello")"
jq -e '.traceparent == "00-\(.trace_id)-\(.span_id)-01" and (.traceparent | test("^00-[0-9a-f]{32}-[0-9a-f]{16}-01$"))' \
  <<<"$hello" >/dev/null || fail "the step's TRACEPARENT is not its lease's trace context: $hello"
[[ $(jq -r '.steps[] | select(.step_id=="pair") | .output.sum' <<<"$show") == 500500 ]] || fail "pair's sum is wrong: $show"
[[ $(jq -r '.steps[] | select(.step_id=="pair") | .output.ranks' <<<"$show") == 2 ]] || fail "pair did not run 2 ranks"

# The artifact at the coordinator is the file the step wrote.
sha=$(jq -r '.steps[] | select(.step_id=="hello") | .artifacts[0].sha256' <<<"$show")
local_file=$(find "$WORK/spool/$r1/hello" -path '*/artifacts/notes.txt' | head -n1)
[[ -n $local_file && $sha == $(sha256sum "$local_file" | cut -d' ' -f1) ]] || fail "artifact checksum differs"

# The failures say what happened, without local paths.
msg2=$(api GET "/runs/$r2" | jq -r '.steps[0].attempts[-1].error.message')
msg3=$(api GET "/runs/$r3" | jq -r '.steps[0].attempts[-1].error.message')
[[ $msg2 == *"exit status 3"* ]] || fail "exit-3 message: $msg2"
[[ $msg3 == *"signal 11"* ]] || fail "SIGSEGV message: $msg3"
[[ $msg2 != *"$WORK"* && $msg3 != *"$WORK"* ]] || fail "a fail message holds a local path"

wait "$launcher" || fail "the launcher exited non-zero"
grep -q '"event":"outcome"' "$WORK/events.jsonl" || fail "no outcome events"
"$SCIMESH_LAUNCH_BIN" report "$WORK/events.jsonl" -o "$WORK/timeline.svg" | tee "$WORK/report.txt"
grep -q '^steps: ' "$WORK/report.txt" || fail "report printed no summary"
grep -q '<svg' "$WORK/timeline.svg" || fail "no SVG written"
! grep -q "$(<"$WORKER_TOKEN_FILE")" "$WORK/launcher.log" || fail "the token appears in the launcher's log"
note "launcher local end-to-end: OK"
