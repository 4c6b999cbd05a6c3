#!/usr/bin/env bash
# System test: run.setup and run.finish around a step's launch, on the local
# backend (`local`: coordinator + scimesh-launch + mpirun, a 2-rank step) or
# on the dev cluster (`slurm`: an sbatch -N2 allocation, a 2-node step).
# Order, node and environment; finish after a failed launch with its exit
# status; each part's failure named; the walltime covering setup and finish;
# a run cancelled during setup stops it and the launch never starts; a
# drain during setup (local) stops it and fails the attempt `preempted`.
source "$(dirname "$0")/../lib/harness.sh"
mode=${1:?local or slurm}
harness_init "launcher-setup-finish-$mode"
lsan_without_tls_roots
if [[ $mode == slurm ]]; then
  use_dev_cluster
  coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200
  ordered_resources='{"nodes": 2, "ranks_per_node": 1}'
else
  coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 500 --grace-ms "$(scaled 1000)" --retry-base-ms 100
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
  ordered_resources='{"nodes": 1, "ranks_per_node": 2}'
fi

# one ID RUN_FIELDS [WALLTIME_S]: a workflow of one step, one attempt (a
# walltime that fits the allocation, or it is never claimed).
one() { echo "{\"workflow\": \"$1\", \"version\": \"1\", \"steps\": [{\"id\": \"s\", \"max_attempts\": 1, \"walltime_s\": ${3:-60}, \"run\": $2}]}"; }
cat >"$WORK/defs.json" <<JSON
{"workflows": [
  {"workflow": "ordered", "version": "1", "steps": [
    {"id": "s", "max_attempts": 1, "walltime_s": 60, "resources": $ordered_resources,
     "run": {"argv": ["test -d case && echo launch \$(hostname) >> order.log"], "shell": true, "mpi": "none",
             "env": {"RUN_VAR": "r"},
             "setup": {"argv": ["sh", "-c", "echo setup \$(hostname) \$RUN_VAR \$PART_VAR > order.log && mkdir case"],
                       "env": {"PART_VAR": "p"}},
             "finish": {"argv": ["echo finish \$(hostname) \$SCIMESH_LAUNCH_EXIT \$RUN_VAR >> order.log && jq -n --rawfile log order.log '{log: \$log}' > output.json"],
                        "shell": true}}}]},
  $(one launch-fails '{"argv": ["exit 5"], "shell": true, "finish": {"argv": ["echo $SCIMESH_LAUNCH_EXIT > finish-saw"], "shell": true}}'),
  $(one setup-fails '{"argv": ["touch launched"], "shell": true, "setup": {"argv": ["sh", "-c", "echo no mesh >&2; exit 4"]}}'),
  $(one finish-fails '{"argv": ["echo {} > output.json"], "shell": true, "finish": {"argv": ["exit 6"], "shell": true}}'),
  $(one setup-walltime '{"argv": ["touch launched"], "shell": true, "setup": {"argv": ["sleep", "60"]}}' 2),
  $(one finish-walltime '{"argv": ["echo {} > output.json"], "shell": true, "finish": {"argv": ["sleep", "60"]}}' 2),
  $(one cancelled '{"argv": ["touch launched"], "shell": true, "setup": {"argv": ["echo $$ > setup.pid; exec sleep 60"], "shell": true}}')
]}
JSON

jq . "$WORK/defs.json" >/dev/null || fail "bad test definitions"
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
flags=(--definitions "$WORK/defs.json" --spool "$WORK/spool" --events "$WORK/events.jsonl" --wait-ms 1000 --kill-grace 2)
if [[ $mode == slurm ]]; then
  job=$(sbatch --parsable -N2 --ntasks-per-node=2 -t 5 -o "$WORK/launcher.log" \
    --wrap "exec '$SCIMESH_LAUNCH_BIN' ${flags[*]} --idle-exit 8 --drain-margin 20")
  note "allocation: job $job"
  CLEANUP_CMDS+=("scancel $job")
  first_node=n1
else
  "$SCIMESH_LAUNCH_BIN" "${flags[@]}" --backend local --idle-exit 4 >"$WORK/launcher.log" 2>&1 &
  launcher=$!
  CLEANUP_PIDS+=("$launcher")
  first_node=$(hostname)
fi
registered() { grep -q ' registered ' "$WORK/launcher.log"; }
wait_for "the launcher registered its workflows" 60 registered

message() { api GET "/runs/$1" | jq -r '.steps[0].attempts[-1].error.message'; }
attempt_dir() { find "$WORK/spool/$1/s" -mindepth 1 -maxdepth 1 -type d | head -n1; }

declare -A run
for w in ordered launch-fails setup-fails finish-fails setup-walltime finish-walltime cancelled; do
  run[$w]=$(run_start "$w" '{}')
done

# Cancelled while its setup runs: the setup process is stopped, the launch never starts.
setup_pid() { local d; d=$(attempt_dir "${run[cancelled]}") && [[ -s $d/setup.pid ]]; }
wait_for "the cancelled step's setup started" 30 setup_pid
pid=$(<"$(attempt_dir "${run[cancelled]}")/setup.pid")
api POST "/runs/${run[cancelled]}/cancel" -d '{}' -f >/dev/null || fail "the cancel call failed"
setup_gone() { ! kill -0 "$pid" 2>/dev/null; }
wait_for "the cancelled step's setup process was stopped" 30 setup_gone
[[ ! -e $(attempt_dir "${run[cancelled]}")/launched ]] || fail "the launch ran after a cancelled setup"

for w in "${!run[@]}"; do
  s=$(wait_run "${run[$w]}" 60)
  note "$w: $s: $(message "${run[$w]}")"
  echo "$s" >"$WORK/status-$w"
done
[[ $(<"$WORK/status-ordered") == completed ]] || fail "the ordered step did not complete: $(api GET "/runs/${run[ordered]}")"
# Setup first on the first node, both ranks, then finish there with the
# launch's exit status; finish wrote the result.
log=$(api GET "/runs/${run[ordered]}" | jq -r '.steps[0].output.log')
note "order.log: $(tr '\n' '|' <<<"$log")"
[[ $(sed -n 1p <<<"$log") == "setup $first_node r p" ]] || fail "setup did not run first, on $first_node, with its environment: $log"
[[ $(sed -n 4p <<<"$log") == "finish $first_node 0 r" && $(wc -l <<<"$log") == 4 ]] ||
  fail "finish did not run last, on $first_node, with SCIMESH_LAUNCH_EXIT=0: $log"
launched_on=$(sed -n 2,3p <<<"$log" | sort | tr '\n' ' ')
if [[ $mode == slurm ]]; then
  [[ $launched_on == "launch n1 launch n2 " ]] || fail "the launch did not run on n1 and n2: $log"
else
  [[ $launched_on == "launch $first_node launch $first_node " ]] || fail "the launch did not run 2 ranks: $log"
fi
d=$(attempt_dir "${run[ordered]}")
for f in setup.out setup.err finish.out finish.err; do [[ -f $d/$f ]] || fail "no $f in the attempt directory"; done

[[ $(<"$WORK/status-launch-fails") == failed ]] || fail "launch-fails did not fail"
# Locally the launch is the one process (exit status 5); under srun the
# cause comes first (task 0 on n1: exit code 5).
[[ $(message "${run[launch-fails]}") == *"the step failed: "*@(exit status 5|exit code 5)* ]] || fail "launch-fails: $(message "${run[launch-fails]}")"
[[ $(<"$(attempt_dir "${run[launch-fails]}")/finish-saw") == 5 ]] || fail "finish did not run after the failed launch with SCIMESH_LAUNCH_EXIT=5"

[[ $(message "${run[setup-fails]}") == "the step's setup failed: exit status 4 (see setup.err in its attempt directory)" ]] ||
  fail "setup-fails: $(message "${run[setup-fails]}")"
[[ ! -e $(attempt_dir "${run[setup-fails]}")/launched ]] || fail "the launch ran after a failed setup"
grep -q "no mesh" "$(attempt_dir "${run[setup-fails]}")/setup.err" || fail "setup.err does not hold the setup's stderr"

[[ $(message "${run[finish-fails]}") == "the step's finish failed: exit status 6 (see finish.err in its attempt directory)" ]] ||
  fail "finish-fails: $(message "${run[finish-fails]}")"

for w in setup-walltime finish-walltime; do
  [[ $(message "${run[$w]}") == *"past its walltime of 2 s and was stopped in its ${w%-walltime}" ]] || fail "$w: $(message "${run[$w]}")"
  [[ $(api GET "/runs/${run[$w]}" | jq -r '.steps[0].attempts[-1].error.class') == timeout ]] || fail "$w: not class timeout"
done
[[ ! -e $(attempt_dir "${run[setup-walltime]}")/launched ]] || fail "the launch ran after the setup timed out"

[[ $(<"$WORK/status-cancelled") == cancelled ]] || fail "the cancelled run is $(<"$WORK/status-cancelled")"
if [[ $mode == local ]]; then
  wait "$launcher" || fail "the launcher exited non-zero"
  # A drain (SIGTERM) while a setup runs: past --drain-grace the setup is
  # stopped and the attempt fails `preempted`, naming the setup.
  echo "{\"workflows\": [$(one drained '{"argv": ["touch launched"], "shell": true, "setup": {"argv": ["echo $$ > setup.pid; exec sleep 60"], "shell": true}}')]}" \
    >"$WORK/defs-drain.json"
  "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs-drain.json" --spool "$WORK/spool" --backend local --wait-ms 1000 \
    --kill-grace 2 --drain-grace 1 --idle-exit 30 >"$WORK/launcher-drain.log" 2>&1 &
  drainer=$!
  CLEANUP_PIDS+=("$drainer")
  wait_for "the second launcher registered" 20 grep -q ' registered ' "$WORK/launcher-drain.log"
  run[drained]=$(run_start drained '{}')
  drained_setup() { local d; d=$(attempt_dir "${run[drained]}") && [[ -s $d/setup.pid ]]; }
  wait_for "the drained step's setup started" 30 drained_setup
  pid=$(<"$(attempt_dir "${run[drained]}")/setup.pid")
  kill -TERM "$drainer"
  wait "$drainer" || fail "the draining launcher exited non-zero"
  setup_gone || fail "the setup process survived the drain"
  error=$(api GET "/runs/${run[drained]}" | jq -r '.steps[0].attempts[-1].error | "\(.class): \(.message)"')
  note "drained: $error"
  [[ $error == "preempted: the allocation is ending; the step was stopped in its setup" ]] || fail "drained: $error"
  [[ ! -e $(attempt_dir "${run[drained]}")/launched ]] || fail "the launch ran after a drained setup"
fi
! grep -q "$(<"$WORKER_TOKEN_FILE")" "$WORK/launcher.log" || fail "the token appears in the launcher's log"
note "setup and finish, $mode backend: OK"
