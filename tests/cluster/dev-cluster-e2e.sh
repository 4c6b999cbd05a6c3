#!/usr/bin/env bash
# System tests of scripts/dev-cluster on the running dev cluster. One
# scenario per run; each leaves the cluster up (the CTest fixture takes it
# down):
#   down_cancels_jobs  a running and a pending job: `down` cancels both (the
#                      running one gets its SIGTERM), the next `up` has none
#   up_after_kill      slurmctld killed -9 with a job running: `up` comes up
#                      idle, with no job and no job process left
#   up_after_slurmd_kill  n2's slurmd killed -9 with a job step on both nodes:
#                      the same
#   plugin_of_preset   `up` lists the plugin of the preset asked for, never
#                      another build's (a sanitizer build sorts first)
#   cgroup_subtrees    `up --cgroup`: each node's slurmd and its jobs live in
#                      the node's own subtree of every cgroup hierarchy, seen
#                      as the root inside; a job's cpuset and memory limit are
#                      SLURM's; node-freeze stops a node's every process at
#                      once; `down` kills them and removes the subtrees
#   plain_mode         the cluster without cgroups (task/none,
#                      proctrack/linuxproc), where the slurm label's default
#                      differs: a 2-node job step runs and `down` cleans up
set -euo pipefail
scenario=${1:?usage: dev-cluster-e2e.sh SCENARIO}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster=$repo/scripts/dev-cluster
# shellcheck source=../lib/harness.sh
source "$repo/tests/lib/harness.sh"
use_dev_cluster
harness_init "dev-cluster-$scenario"

both_idle() { [[ $(sinfo -h -N -o '%N %t' | sort -u | tr '\n' ' ') == "n1 idle n2 idle " ]]; }
no_jobs() { [[ -z $(squeue -h -o %A) ]]; }
alive() { [[ -d /proc/$1 && $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }
dead() { ! alive "$1"; }

case $scenario in
  cgroup_subtrees)
    for h in cpuset memory freezer; do
      awk '$3 == "cgroup"' /proc/self/mounts | grep -q ",$h " ||
        { echo "SKIP: no cgroup v1 $h hierarchy on this machine"; exit 77; }
    done
    SCIMESH_CLUSTER_CGROUP=1 "$cluster" up >"$WORK/up.log" 2>&1 || fail "up --cgroup failed: $(cat "$WORK/up.log")"
    CLEANUP_CMDS+=("'$cluster' up")
    port=${SCIMESH_CLUSTER_PORT:-16817}
    for n in n1 n2; do
      pid=$(<"$SCIMESH_CLUSTER_DIR/run/slurmd-$n.pid")
      for h in cpuset memory freezer; do
        grep -qx "$pid" "/sys/fs/cgroup/$h/scimesh-dev-$port/$n/cgroup.procs" ||
          fail "slurmd of $n is not in its own $h subtree: $(cat "/proc/$pid/cgroup")"
      done
      inside=$(nsenter -t "$pid" -C -- cat "/proc/$pid/cgroup")
      grep -q ':memory:/$' <<<"$inside" || fail "slurmd of $n does not see its subtree as the root: $inside"
    done
    job=$(sbatch --parsable -N2 -n2 -c1 --mem=100 -o /dev/null \
      --wrap "srun sh -c 'echo \$\$ > $WORK/pid.\$SLURM_PROCID; exec sleep 300'")
    CLEANUP_CMDS+=("scancel $job")
    two() { [[ -s $WORK/pid.0 && -s $WORK/pid.1 ]]; }
    wait_for "job $job's two tasks" 60 two
    p0=$(<"$WORK/pid.0") p1=$(<"$WORK/pid.1")
    grep -qx "$p0" <(cat /sys/fs/cgroup/freezer/scimesh-dev-$port/n1/slurm*/uid_0/job_$job/step_0/cgroup.procs) ||
      fail "task 0 is not in n1's job cgroup: $(cat "/proc/$p0/cgroup")"
    limit=$(cat /sys/fs/cgroup/memory/scimesh-dev-$port/n2/slurm*/uid_0/job_$job/memory.limit_in_bytes)
    [[ $limit == $((100 << 20)) ]] || fail "n2's job memory limit is $limit, not 100 MiB"
    [[ $(cat /sys/fs/cgroup/cpuset/scimesh-dev-$port/n1/slurm*/uid_0/job_$job/cpuset.cpus) != *[,-]* ]] ||
      fail "a 1-cpu job's cpuset holds more than one cpu"
    note "node-freeze n2: its every process stops"
    "$cluster" node-freeze n2
    [[ $(awk '{print $3}' "/proc/$p1/stat") == D || $(awk '{print $3}' "/proc/$p1/stat") == S ]] || true
    grep -q FROZEN "/sys/fs/cgroup/freezer/scimesh-dev-$port/n2/freezer.state" || fail "n2 is not frozen"
    alive "$p0" || fail "n1's task died when n2 froze"
    "$cluster" down >"$WORK/down.log" 2>&1 || note "down: $(cat "$WORK/down.log")"
    dead "$p0" && dead "$p1" || fail "a task survived down: $p0 $p1"
    for h in cpuset memory freezer; do
      [[ ! -d /sys/fs/cgroup/$h/scimesh-dev-$port ]] || fail "down left /sys/fs/cgroup/$h/scimesh-dev-$port"
    done
    "$cluster" up >/dev/null 2>&1
    ;;

  plain_mode)
    SCIMESH_CLUSTER_CGROUP=0 "$cluster" up >"$WORK/up.log" 2>&1 || fail "up (plain) failed: $(cat "$WORK/up.log")"
    CLEANUP_CMDS+=("'$cluster' up")
    grep -q '^TaskPlugin=task/none' "$SLURM_CONF" || fail "plain mode runs $(grep TaskPlugin "$SLURM_CONF")"
    out=$(srun -N2 -n2 hostname | sort | tr '\n' ' ')
    [[ $out == "n1 n2 " ]] || fail "a 2-node step ran on '$out'"
    job=$(sbatch --parsable -N2 -o /dev/null --wrap "srun sh -c 'echo \$\$ > $WORK/pid.\$SLURM_PROCID; exec sleep 300'")
    CLEANUP_CMDS+=("scancel $job")
    two() { [[ -s $WORK/pid.0 && -s $WORK/pid.1 ]]; }
    wait_for "job $job's two tasks" 60 two
    note "slurmd of n2 killed and started again beside its step (whatever SCIMESH_CLUSTER_CGROUP says)"
    kill -KILL "$(<"$SCIMESH_CLUSTER_DIR/run/slurmd-n2.pid")"
    SCIMESH_CLUSTER_CGROUP=1 "$cluster" slurmd-start n2 2>"$WORK/slurmd-start.log" ||
      fail "slurmd-start n2 failed: $(cat "$WORK/slurmd-start.log")"
    alive "$(<"$WORK/pid.1")" || fail "n2's task died when its slurmd was restarted"
    "$cluster" node-freeze n2
    [[ $(awk '{print $3}' "/proc/$(<"$WORK/pid.1")/stat") == T ]] || fail "n2's task is not stopped by node-freeze"
    "$cluster" down >"$WORK/down.log" 2>&1 || note "down: $(cat "$WORK/down.log")"
    dead "$(<"$WORK/pid.0")" && dead "$(<"$WORK/pid.1")" || fail "a task survived down"
    "$cluster" up >/dev/null 2>&1
    ;;

  down_cancels_jobs)
    running=$(sbatch --parsable -N2 --exclusive -o "$WORK/running.out" \
      --wrap "trap 'echo got-term >\"$WORK/term\"; exit 0' TERM; touch '$WORK/started'; sleep 300 & wait")
    pending=$(sbatch --parsable -N2 --exclusive -o /dev/null --wrap 'sleep 300')
    CLEANUP_CMDS+=("scancel $running $pending")
    wait_for "job $running running" 60 test -e "$WORK/started"
    [[ $(squeue -h -j "$pending" -o %T) == PENDING ]] || fail "job $pending is not pending: $(squeue)"
    note "down with job $running running and job $pending pending"
    "$cluster" down 2>"$WORK/down.log" || fail "down failed: $(cat "$WORK/down.log")"
    cat "$WORK/down.log"
    grep -E "cancelled jobs .*\b$running\b" "$WORK/down.log" | grep -qE "\b$pending\b" ||
      fail "down did not cancel both jobs"
    [[ -e $WORK/term ]] || fail "the running job was not cancelled (it never got SIGTERM)"
    note "up again: no job, both nodes idle"
    "$cluster" up
    no_jobs || fail "jobs survived down: $(squeue)"
    both_idle || fail "nodes not idle: $(sinfo -N)"
    ;;

  up_after_kill)
    job=$(sbatch --parsable -N2 --exclusive -o /dev/null \
      --wrap "sleep 300 & echo \$! >'$WORK/sleep.pid'; wait")
    CLEANUP_CMDS+=("scancel $job")
    wait_for "job $job running" 60 test -s "$WORK/sleep.pid"
    sleeper=$(<"$WORK/sleep.pid")
    note "kill -9 slurmctld while job $job runs (its sleep is pid $sleeper)"
    ctld=$(<"$SCIMESH_CLUSTER_DIR/run/slurmctld.pid")
    kill -KILL "$ctld"
    wait_for "slurmctld $ctld gone" 10 dead "$ctld"  # a zombie where nothing reaps it
    "$cluster" status >/dev/null && fail "status says up with slurmctld killed"
    start=$SECONDS
    "$cluster" up 2>"$WORK/up.log" || fail "up failed: $(cat "$WORK/up.log")"
    note "up took $((SECONDS - start)) s"
    both_idle || fail "nodes not idle: $(sinfo -N)"
    no_jobs || fail "a job came back: $(squeue)"
    alive "$sleeper" && fail "the job's process $sleeper survived"
    ;;

  up_after_slurmd_kill)
    # A job step on both nodes; n2's slurmd is killed -9 (its slurmstepd and
    # the step's processes live on, in n2's namespace).
    job=$(sbatch --parsable -N2 --exclusive -o /dev/null \
      --wrap "srun -N2 -n2 sh -c 'sleep 300 & echo \$! >\"$WORK/sleep-\$(hostname).pid\"; wait'")
    CLEANUP_CMDS+=("scancel $job")
    wait_for "job $job running on n1 and n2" 60 test -s "$WORK/sleep-n2.pid" -a -s "$WORK/sleep-n1.pid"
    sleepers="$(<"$WORK/sleep-n1.pid") $(<"$WORK/sleep-n2.pid")"
    note "kill -9 n2's slurmd while job $job runs (its sleeps are pids $sleepers)"
    slurmd=$(<"$SCIMESH_CLUSTER_DIR/run/slurmd-n2.pid")
    kill -KILL "$slurmd"
    wait_for "n2's slurmd $slurmd gone" 10 dead "$slurmd"
    "$cluster" status >/dev/null && fail "status says up with n2's slurmd killed"
    "$cluster" up 2>"$WORK/up.log" || fail "up failed: $(cat "$WORK/up.log")"
    both_idle || fail "nodes not idle: $(sinfo -N)"
    no_jobs || fail "a job came back: $(squeue)"
    for p in $sleepers; do alive "$p" && fail "the job's process $p survived"; done
    ;;

  plugin_of_preset)
    # A copy of the script in a fake checkout with two built plugins; asan
    # sorts before dev. The cluster is running, so `up` only rewrites its
    # configuration (plugstack.conf is read at each step); restored at exit.
    fake=$WORK/checkout
    mkdir -p "$fake/scripts" "$fake/build/asan/plugin" "$fake/build/dev/plugin"
    cp "$cluster" "$repo/scripts/build-slurm" "$fake/scripts/"
    export SCIMESH_SLURM_SOURCES=${SCIMESH_SLURM_SOURCES:-$(cd "$repo/.." && pwd)/shared/slurm}
    # The default preset is the one of the SLURM release the cluster runs.
    default=dev
    [[ -z ${SCIMESH_SLURM:-} || $SCIMESH_SLURM == 22.05* ]] || default=slurm-$SCIMESH_SLURM
    mkdir -p "$fake/build/$default/plugin"
    touch "$fake/build/asan/plugin/spank_scimesh.so" "$fake/build/$default/plugin/spank_scimesh.so"
    CLEANUP_CMDS+=("'$cluster' up")
    plugstack=$SCIMESH_CLUSTER_DIR/etc/plugstack.conf
    listed() { grep -v '^#' "$plugstack" | tr '\n' ' '; }
    (unset SCIMESH_PRESET SCIMESH_SPANK_PLUGIN; "$fake/scripts/dev-cluster" up)
    [[ $(listed) == "optional $fake/build/$default/plugin/spank_scimesh.so " ]] || fail "default preset: plugstack lists '$(listed)'"
    (unset SCIMESH_SPANK_PLUGIN; "$fake/scripts/dev-cluster" --preset asan up)
    [[ $(listed) == "optional $fake/build/asan/plugin/spank_scimesh.so " ]] || fail "--preset asan: plugstack lists '$(listed)'"
    (unset SCIMESH_SPANK_PLUGIN; SCIMESH_PRESET=release "$fake/scripts/dev-cluster" up 2>"$WORK/up.log")
    [[ -z $(listed) ]] || fail "an unbuilt preset: plugstack lists '$(listed)'"
    grep -q 'build/release/plugin/spank_scimesh.so is not built' "$WORK/up.log" || fail "no note: $(cat "$WORK/up.log")"
    "$fake/scripts/dev-cluster" --preset 'a b' up 2>/dev/null && fail "accepted a preset name with a space"
    ;;

  *) fail "unknown scenario '$scenario'" ;;
esac
note "ok: $scenario"
