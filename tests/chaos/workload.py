"""The chaos campaign's workload (seeded): the definitions every launcher
serves and the runs to start, mixing 1-rank, 1-node multi-rank and 2-node
steps, native libscimesh_mpi steps (chaos_step, polls cancelled()) and
wrapped programs (step.sh under scimesh-rank, does not), `needs` chains with
artifacts checked by the consumer, at_least_once and at_most_once steps."""

import random

VERSION = "1"


def _native(bin_path, nodes, ranks_per_node):
    return {"argv": [bin_path], "native": True,
            "resources": {"nodes": nodes, "ranks_per_node": ranks_per_node}}


def _wrapped(script, ranks_per_node):
    return {"argv": [script], "mpi": "none",
            "resources": {"nodes": 1, "ranks_per_node": ranks_per_node}}


def _step(step_id, body, walltime_s, delivery="at_least_once", needs=()):
    s = {"id": step_id, "needs": list(needs), "input": {"ms": "{{input.%s}}" % step_id},
         "walltime_s": walltime_s, "max_attempts": 4, "delivery": delivery,
         "resources": body.pop("resources"), "run": body}
    if not s["needs"]:
        del s["needs"]
    return s


def definitions(native_bin, step_script, walltime_s=40):
    """The workflows (fixed; the runs' inputs carry the seeded durations)."""
    n1 = lambda: _native(native_bin, 1, 1)  # noqa: E731
    return [
        {"workflow": "chaos-chain", "version": VERSION, "steps": [
            _step("produce", n1(), walltime_s),
            _step("transform", _wrapped(step_script, 2), walltime_s, needs=["produce"]),
            _step("wide", _native(native_bin, 2, 1), walltime_s, needs=["transform"]),
        ]},
        {"workflow": "chaos-fan", "version": VERSION, "steps": [
            _step("left", _wrapped(step_script, 1), walltime_s),
            _step("right", _native(native_bin, 1, 2), walltime_s, delivery="at_most_once"),
            _step("join", _wrapped(step_script, 1), walltime_s, needs=["left", "right"]),
        ]},
        {"workflow": "chaos-solo", "version": VERSION, "steps": [
            _step("once", _wrapped(step_script, 1), walltime_s, delivery="at_most_once"),
        ]},
    ]


def step_count(defs, workflow):
    return next(len(d["steps"]) for d in defs if d["workflow"] == workflow)


def runs(seed, steps, defs, min_ms=200, max_ms=10000):
    """Runs totalling at least `steps` steps: [(workflow, input)], the same
    for the same seed. Durations lean short (most steps 0.2-2 s)."""
    rng = random.Random("workload:%d" % seed)
    out, total = [], 0
    names = [d["workflow"] for d in defs]
    weights = [4, 4, 1]
    while total < steps:
        wf = rng.choices(names, weights)[0]
        d = next(d for d in defs if d["workflow"] == wf)
        inp = {}
        for s in d["steps"]:
            long_one = rng.random() < 0.1
            hi = max_ms if long_one else min(max_ms, 2000)
            inp[s["id"]] = rng.randint(min_ms, hi)
        out.append((wf, inp))
        total += len(d["steps"])
    return out


def field_of(defs, field):
    """{(workflow, step_id): the step's `field`} for the checker."""
    return {(d["workflow"], s["id"]): s[field] for d in defs for s in d["steps"]}
