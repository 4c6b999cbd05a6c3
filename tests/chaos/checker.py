"""The chaos campaign's invariant checker: judges one history (history.py)
and returns every violation found, each naming the invariant, the run and
step it concerns and what was seen. Pure: no I/O, so checker_test.py can feed
it doctored histories."""

from collections import defaultdict

TERMINAL_RUN = {"completed", "failed", "timed_out", "cancelled"}
# Classes a step may end with when the campaign's faults spent its budget.
FAULT_CLASSES = {"lease_expired", "node_failure", "cancelled", "timeout", "retryable", "preempted"}
INVARIANTS = (
    "runs_end",
    "at_least_once_completes",
    "one_completed_attempt",
    "no_outcome_after_fence",
    "no_overlapping_attempts",
    "artifact_bytes",
    "nothing_left_behind",
)


def _v(invariant, where, what):
    return {"invariant": invariant, "where": where, "what": what}


def runs_end(h):
    return [_v("runs_end", r["run_id"], "run is still " + r["status"])
            for r in h["runs"] if r["status"] not in TERMINAL_RUN]


def at_least_once_completes(h):
    out = []
    attempts = defaultdict(list)
    for a in h["attempts"]:
        attempts[(a["run_id"], a["step_id"])].append(a)
    for s in h["steps"]:
        key = (s["run_id"], s["step_id"])
        if s["delivery"] != "at_least_once" or s["status"] == "completed":
            continue
        where = "%s/%s" % key
        if s["status"] == "cancelled":
            continue  # a run ended by another step's failure cancels the rest
        tried = sorted(attempts[key], key=lambda a: a["attempt"])
        last = tried[-1] if tried else None
        if s["status"] != "failed" or last is None:
            out.append(_v("at_least_once_completes", where, "step ended " + s["status"]))
        elif last["error_class"] not in FAULT_CLASSES:
            out.append(_v("at_least_once_completes", where,
                          "failed with class %s, which no injected fault causes" % last["error_class"]))
        elif len(tried) < s["max_attempts"]:
            out.append(_v("at_least_once_completes", where, "failed (%s) after %d of %d attempts"
                          % (last["error_class"], len(tried), s["max_attempts"])))
    return out


def one_completed_attempt(h):
    out = []
    done = defaultdict(list)
    for a in h["attempts"]:
        if a["status"] == "completed":
            done[(a["run_id"], a["step_id"])].append(a["attempt"])
    for e in h["journal"]:
        if e["type"] == "attempt_completed":
            done[(e["run_id"], e["step_id"], "journal")].append(e["attempt"])
    for key, got in done.items():
        if len(got) > 1:
            out.append(_v("one_completed_attempt", "%s/%s" % key[:2],
                          "completed attempts %s" % sorted(got)))
    return out


def no_outcome_after_fence(h):
    """An outcome (complete or fail) journaled for attempt a after a was
    expired, or after a later attempt of its step was leased."""
    out = []
    by_step = defaultdict(list)
    for e in h["journal"]:
        if e.get("step_id") is not None:
            by_step[(e["run_id"], e["step_id"])].append(e)
    for key, events in by_step.items():
        expired, newest_leased = set(), 0
        for e in sorted(events, key=lambda e: e["seq"]):
            a = e.get("attempt")
            if e["type"] == "attempt_expired":
                expired.add(a)
            elif e["type"] == "attempt_leased":
                newest_leased = max(newest_leased, a)
            elif e["type"] in ("attempt_completed", "attempt_failed"):
                if a in expired:
                    out.append(_v("no_outcome_after_fence", "%s/%s" % key,
                                  "%s accepted for attempt %d after it expired" % (e["type"], a)))
                elif a < newest_leased:
                    out.append(_v("no_outcome_after_fence", "%s/%s" % key,
                                  "%s accepted for attempt %d after attempt %d was leased"
                                  % (e["type"], a, newest_leased)))
    return out


def no_overlapping_attempts(h):
    """Two attempts of one step whose bodies were seen alive (ticks) at the
    same time for longer than the allowed window."""
    out = []
    allowed = h["overlap_allowed_ms"]
    by_step = defaultdict(list)
    for w in h["alive"]:
        by_step[(w["run_id"], w["step_id"])].append(w)
    for key, windows in by_step.items():
        windows.sort(key=lambda w: w["first_ms"])
        for i, a in enumerate(windows):
            for b in windows[i + 1:]:
                overlap = min(a["last_ms"], b["last_ms"]) - max(a["first_ms"], b["first_ms"])
                if overlap > allowed:
                    out.append(_v("no_overlapping_attempts", "%s/%s" % key,
                                  "attempts %d and %d alive together for %d ms (allowed %d)"
                                  % (a["attempt"], b["attempt"], overlap, allowed)))
    return out


def artifact_bytes(h):
    out = []
    produced = {(p["run_id"], p["step_id"], p["name"]): p["sha256"] for p in h["step_artifacts"]}
    for c in h["consumed"]:
        where = "%s/%s" % (c["run_id"], c["step_id"])
        want = produced.get((c["run_id"], c["producer"], c["name"]))
        if want is None:
            out.append(_v("artifact_bytes", where, "read %s/%s, which no completed step uploaded"
                          % (c["producer"], c["name"])))
        elif want != c["sha256"]:
            out.append(_v("artifact_bytes", where, "attempt %d read %s/%s with sha256 %s, uploaded %s"
                          % (c["attempt"], c["producer"], c["name"], c["sha256"][:12], want[:12])))
    for s in h["store"]:
        if s["actual"] != s["sha256"]:
            out.append(_v("artifact_bytes", s["sha256"][:12], "the store holds other bytes under this sha256"))
    return out


def nothing_left_behind(h):
    left = h["leftovers"]
    out = [_v("nothing_left_behind", p["pid"], "step process still alive: " + p["what"])
           for p in left["processes"]]
    out += [_v("nothing_left_behind", n["node"], "node is " + n["state"]) for n in left["nodes"]]
    for who, (before, after) in sorted(left["resources"].items()):
        if after > before:
            out.append(_v("nothing_left_behind", who, "%d at start, %d at the end" % (before, after)))
    return out


CHECKS = (runs_end, at_least_once_completes, one_completed_attempt, no_outcome_after_fence,
          no_overlapping_attempts, artifact_bytes, nothing_left_behind)


def check(h):
    """Every violation in history `h`; an empty list when every invariant holds."""
    out = []
    for c in CHECKS:
        out += c(h)
    return out


def summary(h, violations):
    """One line per invariant: held, or how many violations."""
    count = defaultdict(int)
    for v in violations:
        count[v["invariant"]] += 1
    return ["%-26s %s" % (i, "held" if count[i] == 0 else "VIOLATED x%d" % count[i]) for i in INVARIANTS]
