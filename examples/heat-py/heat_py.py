#!/usr/bin/env python3
"""heat_py: the heat case of examples/heat-case in numpy and mpi4py, its solve a scimesh step.

    heat_py.py mesh CASE --points N --parts P   serial (run.setup): the mesh, cut in P parts
    heat_py.py solve CASE --steps S             MPI, one rank per part (the launch): the
                                                solve, the field gathered on rank 0 as the
                                                artifact field.npy, the output and usage
    heat_py.py check CASE                       serial (run.finish): the field against the
                                                exact solution; max_error into output.json,
                                                the field as artifacts/field.csv

The problem: u_t = u_xx on (0, 1), u = 0 at both ends, u(x, 0) = sin(pi x),
explicit Euler in time; the exact solution is sin(pi x) exp(-pi^2 t).
All three run in the attempt directory, so CASE is a directory in it.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


def mesh(case: Path, points: int, parts: int) -> int:
    """Serial: the interior points x_i = i h, i = 1..points, cut in `parts` contiguous parts."""
    if not 1 <= parts <= points:
        print("heat_py: mesh: need --points >= --parts >= 1", file=sys.stderr)
        return 1
    case.mkdir(parents=True, exist_ok=True)
    (case / "mesh.json").write_text(json.dumps({"points": points, "parts": parts}))
    x = np.arange(1, points + 1) / (points + 1)
    for k, xs in enumerate(np.array_split(x, parts)):
        np.save(case / f"part{k}.npy", np.sin(np.pi * xs))
    print(f"heat_py: {points} points in {parts} parts")
    return 0


def solve(case: Path, steps: int) -> int:
    """MPI: rank k time-steps part k, trading one halo value with each neighbour per step."""
    from mpi4py import MPI

    import scimesh

    comm = MPI.COMM_WORLD
    with scimesh.Step(comm) as step:  # collective: every rank
        cut = json.loads((case / "mesh.json").read_text())
        if cut["parts"] != step.size:  # every rank sees the same: each fails the same way
            raise scimesh.StepFailed("fatal", f"the case is cut in {cut['parts']} parts, not {step.size} "
                                              "(run mesh with --parts equal to the ranks)")
        u = np.load(case / f"part{step.rank}.npy")
        h = 1.0 / (cut["points"] + 1)
        dt = 0.25 * h * h
        left = step.rank - 1 if step.rank > 0 else MPI.PROC_NULL
        right = step.rank + 1 if step.rank + 1 < step.size else MPI.PROC_NULL
        lo, hi = np.zeros(1), np.zeros(1)  # halo values; 0 at the domain's ends
        t0 = time.perf_counter()
        done = 0
        while done < steps:
            # The halo exchange needs every rank at the same step: leave the
            # loop together (cancelled_all: one allreduce) every 100 steps.
            if done % 100 == 0 and step.cancelled_all():
                return 0  # the lease is lost: nothing more to report
            comm.Sendrecv(u[:1], dest=left, recvbuf=hi, source=right)
            comm.Sendrecv(u[-1:], dest=right, recvbuf=lo, source=left)
            u = u + dt / (h * h) * (np.concatenate((lo, u[:-1])) - 2 * u + np.concatenate((u[1:], hi)))
            done += 1
            if done % 500 == 0:
                step.progress(done / steps, "time stepping", step=done)  # rank 0's counts
        solve_s = time.perf_counter() - t0
        field = comm.gather(u, root=0)
        hosts = comm.gather(MPI.Get_processor_name(), root=0)
        if step.rank == 0:
            np.save("field.npy", np.concatenate(field))
            step.add_artifact("field.npy", media_type="application/x-npy")
            step.output = {"points": cut["points"], "parts": step.size, "time": steps * dt, "hosts": hosts}
            step.usage = {"points": cut["points"], "steps": steps, "solve_s": solve_s}
    return 0


def check(case: Path) -> int:
    """Serial, after the solve: adds max_error to the output the solve left."""
    launch = os.environ.get("SCIMESH_LAUNCH_EXIT", "0")
    if launch != "0":
        print(f"heat_py: the solve failed (exit status {launch}): nothing to check")
        return 0  # the step fails with the solve's own error
    output = json.loads(Path("output.json").read_text())
    u = np.load("artifacts/field.npy")
    points = json.loads((case / "mesh.json").read_text())["points"]
    if u.size != points:
        print(f"heat_py: check: the field has {u.size} points, the mesh {points}", file=sys.stderr)
        return 1
    x = np.arange(1, points + 1) / (points + 1)
    exact = np.sin(np.pi * x) * np.exp(-np.pi ** 2 * output["time"])
    output["max_error"] = float(np.max(np.abs(u - exact)))
    np.savetxt("artifacts/field.csv", np.column_stack((x, u)), delimiter=",", header="x,u", comments="")
    Path("output.json").write_text(json.dumps(output))
    print(f"heat_py: t = {output['time']:g}, max error {output['max_error']:.3g} over {output['parts']} parts")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="heat_py.py", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("mesh", help="serial: the mesh, cut in parts")
    p.add_argument("case", type=Path)
    p.add_argument("--points", type=int, default=200)
    p.add_argument("--parts", type=int, default=1)
    p = commands.add_parser("solve", help="MPI: one rank per part, as a scimesh step")
    p.add_argument("case", type=Path)
    p.add_argument("--steps", type=int, default=1000)
    p = commands.add_parser("check", help="serial: the field's error; output.json and field.csv")
    p.add_argument("case", type=Path)
    args = parser.parse_args()
    if args.command == "mesh":
        return mesh(args.case, args.points, args.parts)
    if args.command == "solve":
        return solve(args.case, args.steps)
    return check(args.case)


if __name__ == "__main__":
    sys.exit(main())
