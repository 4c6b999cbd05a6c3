"""Collects a chaos campaign's history for checker.py: the coordinator's
database (runs, steps, attempts, journal, artifacts) and artifact store, the
attempt directories' alive ticks and consumed-artifact records (written by
the step bodies), the launchers' events files, and what is left running."""

import glob
import hashlib
import json
import os
import sqlite3
import subprocess


def _rows(db, sql):
    db.row_factory = sqlite3.Row
    return [dict(r) for r in db.execute(sql)]


def from_database(db_path, delivery, max_attempts):
    """delivery, max_attempts: {(workflow, step_id): value} from the definitions."""
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True, timeout=30)
    try:
        runs = _rows(db, "SELECT run_id, workflow, status FROM runs")
        wf = {r["run_id"]: r["workflow"] for r in runs}
        steps = _rows(db, "SELECT run_id, step_id, status, attempts FROM steps")
        for s in steps:
            s["delivery"] = delivery[(wf[s["run_id"]], s["step_id"])]
            s["max_attempts"] = max_attempts[(wf[s["run_id"]], s["step_id"])]
        attempts = _rows(db, "SELECT run_id, step_id, attempt, lease_id, worker_id, status, error_class,"
                             " started_at, ended_at FROM attempts")
        journal = _rows(db, "SELECT run_id, seq, at, type, step_id, attempt, worker_id FROM journal")
        artifacts = _rows(db, "SELECT run_id, step_id, name, sha256 FROM step_artifacts")
    finally:
        db.close()
    return {"runs": runs, "steps": steps, "attempts": attempts, "journal": journal,
            "step_artifacts": artifacts}


def store_contents(artifact_dir, artifacts):
    """Re-hashes every stored artifact the steps' completions list."""
    out = []
    for sha in sorted({a["sha256"] for a in artifacts}):
        path = os.path.join(artifact_dir, sha[:2], sha)
        try:
            with open(path, "rb") as f:
                actual = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            actual = "missing"
        out.append({"sha256": sha, "actual": actual})
    return out


def from_spool(spool):
    """Alive windows and consumed artifacts from <spool>/<run>/<step>/<attempt>/."""
    alive, consumed = [], []
    for d in glob.glob(os.path.join(spool, "*", "*", "*")):
        run, step, attempt = d.split(os.sep)[-3:]
        if not attempt.isdigit():
            continue
        ticks = []
        for f in glob.glob(os.path.join(d, "alive.*")):
            with open(f) as fh:
                ticks += [int(x) for x in fh.read().split() if x.isdigit()]
        if ticks:
            alive.append({"run_id": run, "step_id": step, "attempt": int(attempt),
                          "first_ms": min(ticks), "last_ms": max(ticks)})
        path = os.path.join(d, "consumed.txt")
        if os.path.exists(path):
            with open(path) as fh:
                for line in fh:
                    producer, name, sha = line.split()
                    consumed.append({"run_id": run, "step_id": step, "attempt": int(attempt),
                                     "producer": producer, "name": name, "sha256": sha})
    return alive, consumed


def events(paths):
    """Outcome counts over the launchers' events files: {outcome: n}."""
    counts = {}
    for p in paths:
        with open(p) as fh:
            for line in fh:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue  # a line cut short by kill -9
                if e.get("event") == "outcome":
                    counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    return counts


def step_processes(marks):
    """Processes (any node: the dev cluster's nodes share this PID namespace)
    whose command line holds one of `marks` (the campaign's step programs,
    its srun and scimesh-rank processes)."""
    out = []
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    for line in ps.splitlines():
        pid, _, args = line.strip().partition(" ")
        if any(m in args for m in marks) and int(pid) != os.getpid():
            out.append({"pid": int(pid), "what": os.path.basename(args.split()[0])})
    return out


def bad_nodes():
    """Nodes not idle (drained, down, still allocated) per sinfo."""
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], capture_output=True, text=True).stdout
    seen = {}
    for line in out.splitlines():
        node, state = line.split()
        seen[node] = state
    return [{"node": n, "state": s} for n, s in sorted(seen.items()) if s != "idle"]


def resource_counts(pid):
    """(open descriptors, threads) of a live process."""
    return len(os.listdir("/proc/%d/fd" % pid)), len(os.listdir("/proc/%d/task" % pid))
