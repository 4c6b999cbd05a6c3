#!/usr/bin/env bash
# The packages as an admin installs them, on the dev cluster: all eight .debs
# installed into the system paths with dpkg; the plugstack snippet enabled
# with url= (this test's coordinator) in /etc/slurm/plugstack.conf.d; the
# cluster restarted to read the machine's /etc/slurm/plugstack.conf, as a
# site's does. Then, with the installed programs only (coordinator,
# scimesh-launch, scimesh-rank, spank_scimesh.so):
#   - srun --help lists --scimesh-lease, and the step's slurmstepd maps the
#     installed plugin, not the build tree's;
#   - the installed launcher, given no --spank, hands the step its lease; the
#     run is cancelled and the installed plugin cancels the step, whose ranks
#     ignore SIGTERM and never poll (the launcher's own grace is 300 s).
# Then the packages are purged (nothing of them left) and the cluster goes
# back to its own plugstack.conf -- also when the test fails (trap).
# Skips when any of the packages is installed already: never purges a real
# install. A run killed before its trap (a CTest timeout sends SIGKILL)
# leaves a marker; the next run purges what that run installed first.
source "$(dirname "$0")/../lib/harness.sh"
harness_init packaging-installed
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster=$repo/scripts/dev-cluster
source "$here/cpack-lib.sh"
[[ $(id -u) == 0 ]] || fail "must run as root (dpkg -i into the system, as the dev cluster does)"
SNIPPET=/etc/slurm/plugstack.conf.d/scimesh.conf
PLUGIN_DIR=$(sed -n 's/^SCIMESH_SLURM_PLUGIN_DIR:[A-Z]*=//p' "$SCIMESH_BUILD_DIR/CMakeCache.txt")
# dpkg's status of a package: empty or "... not-installed" when it is not there.
status_of() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true; }
absent() { local st; st=$(status_of "$1"); [[ -z $st || $st == *not-installed ]]; }
use_dev_cluster
MARKER=/var/lib/scimesh-packaging-test.installed
if [[ -f $MARKER ]]; then
  note "an earlier run was killed with the packages installed: purging them first"
  dpkg --purge "${SCIMESH_PACKAGES[@]}" >"$WORK/dpkg-leftover.log" 2>&1 || fail "cannot purge the leftover packages"
  env -u SCIMESH_SPANK_PLUGIN "$cluster" up >>"$WORK/dev-cluster.log" 2>&1 || fail "dev-cluster up failed"
  rm -f "$MARKER"
fi
for p in "${SCIMESH_PACKAGES[@]}"; do
  absent "$p" || { echo "SKIP: $p is on this machine already ($(status_of "$p")); this test never touches a real install"; exit 77; }
done
[[ ! -e $SNIPPET ]] || { echo "SKIP: $SNIPPET exists already"; exit 77; }
build_debs

# Whatever happens from here, the machine gets its state back.
restore_system() {
  dpkg --purge "${SCIMESH_PACKAGES[@]}" >>"$WORK/dpkg-purge.log" 2>&1 && rm -f "$MARKER"
  rm -f "$SNIPPET.dpkg-old" "$SNIPPET.dpkg-dist"
  env -u SCIMESH_SPANK_PLUGIN "$cluster" up >>"$WORK/dev-cluster.log" 2>&1 || true
}
CLEANUP_CMDS+=(restore_system)

note "dpkg -i the eight packages (system paths)"
echo "${SCIMESH_PACKAGES[*]}" >"$MARKER"
dpkg -i "${DEBS[@]}" >"$WORK/dpkg-install.log" 2>&1 || fail "dpkg -i failed: $(tail -n 5 "$WORK/dpkg-install.log")"
for b in /usr/bin/scimesh-coordinator /usr/bin/scimesh-launch /usr/bin/scimesh-rank "$PLUGIN_DIR/spank_scimesh.so"; do
  [[ -x $b || -f $b ]] || fail "$b is not installed"
done

# The coordinator is the installed one; its URL goes into the snippet.
export SCIMESH_COORDINATOR_BIN=/usr/bin/scimesh-coordinator SCIMESH_LAUNCH_BIN=/usr/bin/scimesh-launch
coordinator_start --lease-ttl-ms 4000 --heartbeat-ms 1000 --grace-ms 2000
export SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE

note "enable the snippet with url=, restart the cluster on /etc/slurm/plugstack.conf"
grep -qE '^# *optional +spank_scimesh\.so ' "$SNIPPET" || fail "the installed snippet has no commented plugin line"
sed -i -E "s|^# *(optional +spank_scimesh\.so) +url=[^ ]*|\1 url=$SCIMESH_URL|" "$SNIPPET"
grep -qE "^optional +spank_scimesh\.so url=$SCIMESH_URL " "$SNIPPET" || fail "cannot enable the snippet: $(cat "$SNIPPET")"
"$cluster" down >>"$WORK/dev-cluster.log" 2>&1 || fail "dev-cluster down failed"
SCIMESH_SPANK_PLUGIN=system "$cluster" up >>"$WORK/dev-cluster.log" 2>&1 || fail "dev-cluster up (system plugstack) failed"
grep -qx 'PlugStackConfig=/etc/slurm/plugstack.conf' "$SCIMESH_CLUSTER_DIR/etc/slurm.conf" || fail "the cluster does not read /etc/slurm/plugstack.conf"
grep -q -- '--scimesh-lease' <<<"$(srun --help)" || fail "srun --help does not list --scimesh-lease from the installed plugin"

source "$repo/tests/launcher/allocation-lib.sh"
write_deaf_step "$WORK/defs.json" installed
note "the installed launcher, no --spank; the lease is fenced"
submit_launcher installed 5 --idle-exit 60 --kill-grace 300
job=$JOB
run=$(run_when_registered installed '{}')
deaf_step_watched "$run"
grep -q "the SPANK plugin is loaded: steps get --scimesh-lease" "$WORK/installed.log" ||
  fail "the installed launcher did not find the plugin: $(cat "$WORK/installed.log")"
# The slurmstepd of the step has the installed .so mapped, not the build tree's.
maps=$(for p in $(pgrep -x slurmstepd); do cat "/proc/$p/maps" 2>/dev/null; done | awk '{print $6}' | sort -u)
grep -qxF "$PLUGIN_DIR/spank_scimesh.so" <<<"$maps" || fail "no slurmstepd maps $PLUGIN_DIR/spank_scimesh.so"
if grep -q "$repo/build/.*/spank_scimesh.so" <<<"$maps"; then fail "a slurmstepd maps the build tree's plugin"; fi
plugin_kills_deaf_step "$run"
scancel "$job"
wait_for "allocation $job to end" 60 job_gone "$job"
coordinator_stop

note "purge, and the cluster back on its own plugstack.conf"
dpkg --purge "${SCIMESH_PACKAGES[@]}" >"$WORK/dpkg-purge.log" 2>&1 || fail "dpkg --purge failed: $(tail -n 5 "$WORK/dpkg-purge.log")"
rm -f "$MARKER"
for p in "${SCIMESH_PACKAGES[@]}"; do
  absent "$p" || fail "$p is still known to dpkg: $(status_of "$p")"
done
left=$(find /usr/bin /usr/lib /usr/libexec /usr/share/doc /usr/share/man /etc /lib/systemd/system \
  \( -name 'scimesh*' -o -name 'spank_scimesh*' -o -name 'libscimesh*' \) 2>/dev/null || true)
[[ -z $left ]] || fail "left after purge: $left"
env -u SCIMESH_SPANK_PLUGIN "$cluster" up >>"$WORK/dev-cluster.log" 2>&1 || fail "dev-cluster up (own plugstack) failed"
grep -qx "PlugStackConfig=$SCIMESH_CLUSTER_DIR/etc/plugstack.conf" "$SCIMESH_CLUSTER_DIR/etc/slurm.conf" ||
  fail "the cluster is not back on its own plugstack.conf"
note "PASS: installed packages; the installed plugin cancelled the lost step; purged and restored"
