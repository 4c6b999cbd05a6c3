#!/usr/bin/env bash
# System test on the dev cluster: an `sbatch -N2` allocation runs
# scimesh-launch, and a queue of 1-rank steps and a 2-node MPI step fills both
# nodes at once; every step completes, the 2-node step ran on n1 and n2 with
# rank 0 heartbeating, and the events show steps overlapping on both nodes.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-slurm
use_dev_cluster
coordinator_start --lease-ttl-ms 6000 --heartbeat-ms 1000 --grace-ms 2000 --retry-base-ms 200

cat >"$WORK/one.sh" <<'SH'
#!/bin/sh
# A 1-rank step: takes a moment, then says where it ran.
sleep 2
printf '{"host":"%s"}\n' "$(hostname)" > output.json
SH
chmod +x "$WORK/one.sh"
one_rank="\"max_attempts\": 1, \"walltime_s\": 60, \"run\": {\"argv\": [\"$WORK/one.sh\"], \"mpi\": \"none\"}"
cat >"$WORK/defs.json" <<JSON
{"workflow": "fill", "version": "1", "steps": [
  {"id": "wide", "input": {"terms": 100000}, "max_attempts": 1, "walltime_s": 60,
   "resources": {"nodes": 2, "ranks_per_node": 1},
   "run": {"argv": ["$SCIMESH_STEP_C_BIN"], "native": true}},
  {"id": "s1", $one_rank}, {"id": "s2", $one_rank}, {"id": "s3", $one_rank}, {"id": "s4", $one_rank}
]}
JSON
jq . "$WORK/defs.json" >/dev/null || fail "bad test definitions"

export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE
job=$(sbatch --parsable -N2 --ntasks-per-node=2 -t 5 -o "$WORK/job.log" \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --events '$WORK/events.jsonl' --idle-exit 6 --wait-ms 2000 --kill-grace 2 --drain-margin 20")
note "allocation: job $job"
CLEANUP_CMDS+=("scancel $job")

start_first_run fill 60 '{}' "the launcher in job $job registered"
run=$RUN_ID
status=$(wait_run "$run" 120)
[[ $status == completed ]] || fail "run $run ended '$status': $(api GET /runs/$run)"

show=$(api GET "/runs/$run")
[[ $(jq -r '.steps[] | select(.step_id=="wide") | .output.ranks' <<<"$show") == 2 ]] || fail "wide did not run 2 ranks"
[[ $(jq -r '.steps[] | select(.step_id=="wide") | .output.sum' <<<"$show") == 5000050000 ]] || fail "wide's sum is wrong"
hosts=$(jq -r '.steps[] | select(.step_id|startswith("s")) | .output.host' <<<"$show" | sort -u | tr '\n' ' ')
note "1-rank steps ran on: $hosts"
[[ $hosts == *n1* && $hosts == *n2* ]] || fail "1-rank steps did not use both nodes"

for _ in $(seq 100); do squeue -h -j "$job" | grep -q . || break; sleep 0.3; done
ev=$WORK/events.jsonl
[[ $(jq -r 'select(.event=="place" and .step_id=="wide") | [.nodes[].name] | join(",")' "$ev") == "n1,n2" ]] ||
  fail "wide was not placed on n1,n2"
# Some two steps ran at the same time (the allocation was filled, not serialised).
overlap=$(jq -s '[.[] | select(.event=="start" or .event=="end")] | sort_by(.t) |
  reduce .[] as $e ({n:0,max:0}; .n += (if $e.event=="start" then 1 else -1 end) | .max = ([.max,.n]|max)) | .max' "$ev")
note "most steps running at once: $overlap"
(( overlap >= 2 )) || fail "steps never overlapped"
# One heartbeat stream: the launcher paused while rank 0 held the wide step's lease.
grep -q "rank 0 holds the lease now" "$WORK/job.log" || fail "rank 0 never took the lease over"
"$SCIMESH_LAUNCH_BIN" report "$ev"
note "launcher on the dev cluster: OK"
