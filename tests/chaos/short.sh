#!/usr/bin/env bash
# ctest's chaos_short: the dev cluster (up by the slurm_cluster fixture) with
# 6 cpus per node for the campaign, back to its count at exit; then
# tests/chaos/run with the arguments given.
source "$(dirname "$0")/../lib/harness.sh"
harness_init chaos-short
use_dev_cluster
use_cluster_cpus 6
# --plain: the configuration this short campaign was validated in (no
# cgroups, no plugin, no node_death); the full campaign runs as sites do.
"$(dirname "$0")/run" --plain --work "$WORK/campaign" "$@"
