#!/usr/bin/env bash
# `scripts/dev-cluster env` puts the cluster's SLURM release first on PATH and
# drops every other built release, so a shell that eval'd another release's
# env never runs that release's srun against this cluster. No daemon needed:
# the release a cluster runs is what `up` recorded in <dir>/etc/slurm-prefix.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/harness.sh
source "$repo/tests/lib/harness.sh"
harness_init dev-cluster-env-path
trap harness_cleanup EXIT
builds=$WORK/builds
export SCIMESH_SLURM_BUILDS=$builds SCIMESH_CLUSTER_DIR=$WORK/cluster
stale="$builds/23.11/bin:$builds/23.11/sbin"
path_after_env() { (export PATH="$stale:$PATH"; eval "$("$repo/scripts/dev-cluster" env)"; echo "$PATH"); }

note "Debian's SLURM: no built release left on PATH"
got=$(path_after_env)
[[ $got != *"$builds/"* ]] || fail "PATH keeps another release: $got"
[[ $got == *:/usr/bin:* || $got == /usr/bin:* || $got == *:/usr/bin ]] || fail "PATH lost /usr/bin: $got"

note "a built release: its bin and sbin first, the other release gone"
mkdir -p "$SCIMESH_CLUSTER_DIR/etc"
echo "$builds/25.11" >"$SCIMESH_CLUSTER_DIR/etc/slurm-prefix"
got=$(path_after_env)
[[ $got == "$builds/25.11/bin:$builds/25.11/sbin:"* ]] || fail "25.11 is not first: $got"
[[ $got != *"$builds/23.11"* ]] || fail "PATH keeps 23.11: $got"
note "ok"
