#!/usr/bin/env bash
# System test on the dev cluster: scimesh-agent started as the launcher starts
# it in an allocation (srun --overlap -N1 -n1 -w NODE), driven through
# AgentChannel by the same tests as locally (scimesh_agent_test): exits,
# exec failures, hostile lines, a whole process group stopped, the launcher's
# srun killed or signalled, its stdin closed, pinning read back from /proc.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-agent
use_dev_cluster
: "${SCIMESH_AGENT_TEST_BIN:?set by CTest}"
# The nodes have private /tmp: the test's files go where every node sees them.
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
note "scimesh_agent_test with the agent behind srun --overlap in a 1-node allocation"
# The whole node, and every cpu of it to the agent's step: with cgroups
# (ConstrainCores) a step may only be pinned to cpus its job step holds.
salloc -N1 -w n1 --exclusive -t 5 --quiet -- bash -c \
  'SCIMESH_AGENT_PREFIX="srun --overlap -N1 -n1 -c ${SLURM_JOB_CPUS_PER_NODE%%(*} -w $SLURM_JOB_NODELIST --quiet" "$SCIMESH_AGENT_TEST_BIN"' \
  >"$WORK/agent-test.log" 2>&1 || { cat "$WORK/agent-test.log"; fail "scimesh_agent_test failed under srun"; }
grep -E '^\[  (PASSED|SKIPPED) ' "$WORK/agent-test.log"
