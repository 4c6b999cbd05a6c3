#!/usr/bin/env bash
# System test on the dev cluster with mixed node types: n1 declares 2 cpus and
# n2 6 (scripts/dev-cluster --cpus 2,6). Both "nodes" are this machine, so an
# lstopo-no-graphics first on PATH reports n2 as the 6-core machine its slurmd
# declares (hwloc's own synthetic input), n1 as this machine. The launcher,
# on n1, is given no --topology: it probes n2 once at start, and a 1-node
# step of 4 ranks -- which fits only n2 -- is claimed, placed on n2's own
# topology (4 distinct cpus) and completes. Assumed like n1, n2 would offer 2
# cpus and the step would never be claimed.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-mixed
use_dev_cluster
use_cluster_cpus 2,6
coordinator_start --lease-ttl-ms 10000 --heartbeat-ms 2000
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE

mkdir -p "$WORK/bin"
lstopo=$(command -v lstopo-no-graphics) || fail "lstopo-no-graphics is not installed (hwloc)"
cat >"$WORK/bin/lstopo-no-graphics" <<SH
#!/bin/sh
# n2 is a 6-core node (the dev cluster's nodes share this machine's hardware).
case \$(hostname) in
  n2) exec '$lstopo' --input 'pack:1 core:6 pu:1' "\$@" ;;
  *) exec '$lstopo' "\$@" ;;
esac
SH
chmod +x "$WORK/bin/lstopo-no-graphics"

cat >"$WORK/defs.json" <<JSON
{"workflow": "mixed", "version": "1", "steps": [
  {"id": "four", "max_attempts": 1, "walltime_s": 60, "resources": {"nodes": 1, "ranks_per_node": 4},
   "run": {"argv": ["sh", "-c", "[ \$SLURM_PROCID = 0 ] && echo '{\"host\":\"'\$(hostname)'\",\"ranks\":'\$SLURM_NTASKS'}' > output.json; true"],
           "mpi": "none"}}]}
JSON
# --exclusive: the job holds every cpu each node declares (2 on n1, 6 on n2).
job=$(PATH=$WORK/bin:$PATH sbatch --parsable -N2 --exclusive -t 5 -o "$WORK/launcher.log" -J mixed \
  --wrap "exec '$SCIMESH_LAUNCH_BIN' --definitions '$WORK/defs.json' --spool '$WORK/spool' --idle-exit 5 --wait-ms 1000 --drain-margin 20")
[[ -n $job ]] || fail "sbatch refused the allocation"
CLEANUP_CMDS+=("scancel $job")
start_first_run mixed 60 '{}' "the launcher registered"
run=$RUN_ID
[[ $(wait_run "$run" 90) == completed ]] || fail "the 4-rank step did not complete: $(api GET "/runs/$run")"
grep -q "node n2: 1 package.*6 cores" "$WORK/launcher.log" || fail "the launcher did not probe n2: $(cat "$WORK/launcher.log")"
if grep -q "topology probe:" "$WORK/launcher.log"; then fail "the probe had problems: $(grep 'topology probe:' "$WORK/launcher.log")"; fi
placement=$WORK/spool/$run/four/1/placement.json
jq -e '[.ranks[].node] | unique == ["n2"]' "$placement" >/dev/null || fail "the step is not on n2: $(cat "$placement")"
jq -e '[.ranks[].cpus[]] | length == 4 and (unique | length) == 4' "$placement" >/dev/null ||
  fail "the 4 ranks do not have 4 distinct cpus: $(cat "$placement")"
[[ $(api GET "/runs/$run" | jq -r '.steps[0].output.ranks') == 4 ]] || fail "the step did not run 4 ranks"
note "mixed node types: n2 probed as 6 cores; the 4-rank step ran there"
