"""The Python steps of tests/python: one program, what it does chosen by its input's "do"."""

import json
import os
import sys
import time

import numpy as np
from mpi4py import MPI

import scimesh

DO = json.load(open(os.path.join(os.environ["SCIMESH_ATTEMPT_DIR"], "lease.json")))["input"]["do"]
comm = None if DO in ("retry", "named", "serial") else MPI.COMM_WORLD


def calls(step):
    """Every call: input and previous as dicts, progress, output, patch, usage, artifacts."""
    assert step.input["n"] == 7 and step.previous == {}, (step.input, step.previous)
    step.progress(0.5, "halfway", rank_count=step.size)
    time.sleep(1.0)  # the progress leaves with rank 0's next heartbeat (300 ms)
    total = comm.allreduce(step.rank + 1)
    errors = {}
    try:
        step.output = {"bad": {1, 2}}
    except TypeError as e:
        errors["set"] = str(e)
    try:
        step.output = {"nan": float("nan")}
    except ValueError as e:
        errors["nan"] = str(e)
    try:
        step.usage = {"cells": "many"}
    except TypeError as e:
        errors["usage"] = str(e)
    try:
        step.add_artifact("data.txt", name=".hidden")
    except scimesh.ScimeshError as e:
        errors["name"] = str(e)
    if step.rank == 0:
        with open("data.txt", "w") as f:
            f.write("from python\n")
        step.add_artifact("data.txt", media_type="text/plain")
        os.makedirs("tree/sub", exist_ok=True)
        with open("tree/sub/a.txt", "w") as f:
            f.write("in a directory\n")
        step.add_artifact("tree")
    step.output = {"sum": total, "ranks": step.size, "mean": np.float64(2.5), "count": np.int64(3),
                   "vector": np.arange(3), "errors": errors}
    step.state_patch = {"python": True}
    step.usage = {"cells": 1000, "solver_s": 0.25}


def check(step):
    """Reads what the C++ relay made of this program's artifacts, and the directory artifact."""
    relayed = step.input_path("relay", "relayed.txt").read_text()
    tree = (step.input_path("make", "tree") / "sub" / "a.txt").read_text()
    try:
        step.input_path("relay", "missing.txt")
        missing = "found"
    except FileNotFoundError as e:
        missing = str(e)
    step.output = {"relayed": relayed, "tree": tree, "missing": missing, "previous": sorted(step.previous)}


def fail_rank3(step):
    """Rank 3 raises while the others wait in a collective it never joins."""
    if step.rank == 3:
        raise ValueError("bad mesh: 0 cells\nsecond line is not sent")
    comm.Barrier()


def wait_cancel(step):
    """Every rank polls until the lease is lost, then says so on stdout."""
    while not step.cancelled():
        time.sleep(0.05)
    # One write: print() writes the line and its newline apart when stdout is
    # unbuffered (PYTHONUNBUFFERED), and the ranks' lines then interleave.
    sys.stdout.write(f"rank {step.rank} cancelled=1\n")
    sys.stdout.flush()


def retry(step):
    raise scimesh.Retryable("the license server did not answer")


def named(step):
    raise scimesh.StepFailed("invalid_output", "no convergence after 100 iterations")


def serial(step):
    step.output = {"size": step.size, "where": os.path.basename(step.attempt_dir)}


with scimesh.Step(comm) as step:
    {"calls": calls, "check": check, "fail_rank3": fail_rank3, "wait_cancel": wait_cancel, "retry": retry,
     "named": named, "serial": serial, "make": calls}[DO](step)

# After the end: every call is a clear error, and the end happened.
try:
    step.progress(1.0)
    print("after end: no error", flush=True)
except scimesh.StepEnded as e:
    print(f"after end: StepEnded: {e}", flush=True)
sys.exit(0)
