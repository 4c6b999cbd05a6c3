"""The chaos campaign's fault schedule (seeded) and the faults themselves.
The schedule is a list of (second, kind, pick): the same seed gives the same
times, kinds and picks; `pick` chooses the target among the candidates alive
at that moment (sorted), so a replay hits the same kind of target at the
same point. Every injected fault is logged with its time and target."""

import json
import os
import random
import signal
import subprocess
import time

KINDS = ("launcher_kill", "coordinator_kill", "rank0_kill", "rank_kill", "rank0_stop",
         "scancel_step", "scancel_job", "time_limit",
         "proxy_lose_reply", "proxy_reset", "proxy_stall", "proxy_503", "store_full", "slurmd_kill",
         "node_death")
# The dev cluster's node faults (scripts/dev-cluster node-freeze, ...).
DEV_CLUSTER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "scripts", "dev-cluster")


def schedule(seed, count, horizon_s, start_s=8.0, kinds_allowed=KINDS):
    """`count` faults spread over [start_s, horizon_s], each of
    `kinds_allowed` at least once when count allows, in seeded order."""
    rng = random.Random("faults:%d" % seed)
    pool = list(kinds_allowed)
    kinds = pool * (count // len(pool)) + rng.sample(pool, count % len(pool))
    rng.shuffle(kinds)
    step = (horizon_s - start_s) / max(count, 1)
    return [(round(start_s + i * step + rng.uniform(0, step * 0.8), 2), k, rng.random())
            for i, k in enumerate(kinds)]


def _environ(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            pairs = f.read().split(b"\0")
    except OSError:
        return {}
    return dict(p.decode(errors="replace").split("=", 1) for p in pairs if b"=" in p)


def _procs(marks):
    out = []
    ps = subprocess.run(["ps", "-eo", "pid=,stat=,args="], capture_output=True, text=True).stdout
    for line in ps.splitlines():
        pid, stat, args = (line.strip().split(None, 2) + ["", ""])[:3]
        if any(m in args for m in marks):
            out.append((int(pid), stat, args))
    return out


class Injector:
    """Applies faults to one campaign (`c`: the driver's Campaign)."""

    def __init__(self, c):
        self.c = c
        self.log = []
        self.pending = []  # (due time, callable): a SIGCONT, a coordinator restart
        self.node_fault_until = 0.0  # one node fault at a time: a dead node's slurmd is not also killed

    def _record(self, kind, target, t):
        self.log.append({"t": round(t, 2), "kind": kind, "target": target})
        self.c.say("fault %6.1fs %-16s %s" % (t, kind, target))

    def _pick(self, candidates, pick):
        candidates = sorted(candidates)
        return candidates[int(pick * len(candidates))] if candidates else None

    def _ranks(self, rank0):
        """(pid, description) of step ranks: rank 0 heartbeats (the native
        program, or scimesh-rank around a wrapped one)."""
        out = []
        for pid, stat, args in _procs([self.c.native_bin, self.c.step_script]):
            exe = os.path.basename(args.split()[0])
            if exe not in (os.path.basename(self.c.native_bin), "scimesh-rank") or "T" in stat:
                continue
            env = _environ(pid)
            if not env.get("SCIMESH_ATTEMPT_DIR", "").startswith(self.c.work):
                continue
            if (env.get("SLURM_PROCID", "0") == "0") == rank0:
                where = "/".join(env["SCIMESH_ATTEMPT_DIR"].split("/")[-3:])
                out.append((pid, "%s rank %s of %s" % (exe, env.get("SLURM_PROCID", "0"), where)))
        return out

    def inject(self, kind, pick, t):
        """Injects one fault; returns False when no target exists now."""
        c = self.c
        if kind == "launcher_kill":
            target = self._pick(c.launcher_pids(), pick)
            if target is None:
                return False
            os.kill(target[0], signal.SIGKILL)
            self._record(kind, "launcher of job %s" % target[1], t)
        elif kind == "coordinator_kill":
            if c.coordinator is None:
                return False
            c.coordinator.kill()
            c.coordinator.wait()
            c.coordinator = None
            down = 0.5 + pick * 3
            self.pending.append((time.monotonic() + down, c.start_coordinator))
            self._record(kind, "coordinator (restart in %.1f s)" % down, t)
        elif kind in ("rank0_kill", "rank_kill", "rank0_stop"):
            target = self._pick(self._ranks(kind != "rank_kill"), pick)
            if target is None:
                return False
            pid, what = target
            if kind == "rank0_stop":
                os.kill(pid, signal.SIGSTOP)
                hold = c.stop_s
                self.pending.append((time.monotonic() + hold, lambda: _cont(pid)))
                self._record(kind, "%s for %.0f s" % (what, hold), t)
            else:
                os.kill(pid, signal.SIGKILL)
                self._record(kind, what, t)
        elif kind == "scancel_step":
            target = self._pick(c.job_steps(), pick)
            if target is None:
                return False
            subprocess.run(["scancel", target], capture_output=True)
            self._record(kind, "step %s" % target, t)
        elif kind in ("scancel_job", "time_limit"):
            target = self._pick(c.jobs(), pick)
            if target is None:
                return False
            if kind == "scancel_job":
                subprocess.run(["scancel", target], capture_output=True)
                self._record(kind, "job %s" % target, t)
            else:
                # The limit drops to 1 minute (SLURM's smallest), unforeseen by
                # the launcher, which planned with the limit it started with:
                # SLURM ends the job at its next limit check past that minute
                # (TERM, then KILL after KillWait).
                subprocess.run(["scontrol", "update", "JobId=" + target, "TimeLimit=1"], capture_output=True)
                self._record(kind, "job %s (limit set to 1 min)" % target, t)
        elif kind.startswith("proxy_"):
            fault = kind[len("proxy_"):]
            window, extra = {"lose_reply": (1.5, {}), "reset": (2.0, {}),
                             "stall": (1.0, {"stall_s": round(2 + pick * 18, 1)}),
                             "503": (2 + pick * 3, {})}[fault]
            tmp = c.proxy_control + ".tmp"
            with open(tmp, "w") as f:
                json.dump(dict(fault=fault, until=time.time() + window, **extra), f)
            os.rename(tmp, c.proxy_control)
            self._record(kind, "every worker call for %.1f s%s" % (
                window, " (each held %.1f s)" % extra["stall_s"] if extra else ""), t)
        elif kind == "slurmd_kill":
            # Only while a 2-node step runs: the node fails under it.
            if not c.two_node_steps() or time.monotonic() < self.node_fault_until:
                return False
            node = "n1" if pick < 0.5 else "n2"
            down = 3 + pick * 5
            if not _slurmd_kill(node):
                return False
            self.node_fault_until = time.monotonic() + down + 2
            self.pending.append((time.monotonic() + down, lambda: _dev_cluster("slurmd-start", node)))
            self._record(kind, "slurmd of %s during a 2-node step (back in %.1f s)" % (node, down), t)
        elif kind == "node_death":
            # A node dies under a 2-node step: every process of it stops at
            # once and stays silent past SlurmdTimeout, so slurmctld marks it
            # DOWN and ends its jobs (NODE_FAIL); then it is killed for good
            # and boots again, as a machine power-cycled by its admin.
            if c.args.plain or not c.two_node_steps() or time.monotonic() < self.node_fault_until:
                return False  # --plain: the older campaign, without node deaths
            node = "n1" if pick < 0.5 else "n2"
            try:
                _dev_cluster("node-freeze", node)
            except OSError as e:
                c.say("fault %6.1fs %-16s failed: %s" % (t, kind, e.strerror))
                return False
            silent = c.args.slurmd_timeout + 8
            self.node_fault_until = time.monotonic() + silent + 10
            self.pending.append((time.monotonic() + silent,
                                 lambda: _dev_cluster("node-kill", node) and _dev_cluster("node-start", node)))
            self._record(kind, "%s during a 2-node step: frozen %.0f s (SlurmdTimeout %d s), then killed and booted"
                         % (node, silent, c.args.slurmd_timeout), t)
        elif kind == "store_full":
            ballast = os.path.join(c.store, "ballast.%d" % len(self.log))  # windows may overlap
            st = os.statvfs(c.store)
            with open(ballast, "wb") as f:
                try:
                    f.write(b"\0" * (st.f_bavail * st.f_frsize))
                except OSError:
                    pass  # full: what we wanted
            hold = 3 + pick * 5
            self.pending.append((time.monotonic() + hold, lambda: os.unlink(ballast)))
            self._record(kind, "artifact store (tmpfs) full for %.1f s" % hold, t)
        return True

    def due(self):
        now = time.monotonic()
        for item in [p for p in self.pending if p[0] <= now]:
            self.pending.remove(item)
            try:
                item[1]()
            except OSError as e:  # the campaign goes on; the log says what was not undone
                self.c.say("fault end failed: %s" % e.strerror)

    def counts(self):
        out = {}
        for f in self.log:
            out[f["kind"]] = out.get(f["kind"], 0) + 1
        return out


def _cont(pid):
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


def _cluster_file(*parts):
    return os.path.join(os.environ["SCIMESH_CLUSTER_DIR"], *parts)


def _dev_cluster(command, node):
    """scripts/dev-cluster COMMAND NODE; True when it succeeded. A failure
    raises OSError, so that the campaign log says what was not undone."""
    out = subprocess.run([DEV_CLUSTER, command, node], capture_output=True, text=True)
    if out.returncode != 0:
        raise OSError(out.returncode, "dev-cluster %s %s: %s" % (command, node, out.stderr.strip()[-300:]))
    return True


def _slurmd_kill(node):
    """kill -9 of the node's slurmd alone (its slurmstepd processes and
    their steps live on); True when one was killed."""
    try:
        with open(_cluster_file("run", "slurmd-%s.pid" % node)) as f:
            pid = int(f.read())
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError):
        return False
    return True
