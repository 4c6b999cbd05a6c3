"""Unit tests of checker.py: a clean history passes, and each doctored
history (one violation planted) is caught by the invariant it breaks."""

import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402

SHA_A = "a" * 64
SHA_B = "b" * 64


def clean():
    """Run r1: produce (attempt 1 expired, attempt 2 completed) then consume."""
    j = [
        (1, "run_started", None, None),
        (2, "attempt_leased", "produce", 1), (3, "attempt_started", "produce", 1),
        (4, "attempt_expired", "produce", 1), (5, "step_requeued", "produce", 1),
        (6, "attempt_leased", "produce", 2), (7, "attempt_started", "produce", 2),
        (8, "attempt_completed", "produce", 2),
        (9, "attempt_leased", "consume", 1), (10, "attempt_started", "consume", 1),
        (11, "attempt_completed", "consume", 1), (12, "run_completed", None, None),
    ]
    return {
        "runs": [{"run_id": "r1", "status": "completed"}],
        "steps": [
            {"run_id": "r1", "step_id": "produce", "status": "completed", "delivery": "at_least_once",
             "max_attempts": 1},
            {"run_id": "r1", "step_id": "consume", "status": "completed", "delivery": "at_least_once",
             "max_attempts": 1},
        ],
        "attempts": [
            {"run_id": "r1", "step_id": "produce", "attempt": 1, "status": "expired", "error_class": "lease_expired"},
            {"run_id": "r1", "step_id": "produce", "attempt": 2, "status": "completed", "error_class": None},
            {"run_id": "r1", "step_id": "consume", "attempt": 1, "status": "completed", "error_class": None},
        ],
        "journal": [{"run_id": "r1", "seq": s, "type": t, "step_id": st, "attempt": a} for s, t, st, a in j],
        "alive": [
            {"run_id": "r1", "step_id": "produce", "attempt": 1, "first_ms": 1000, "last_ms": 3000},
            {"run_id": "r1", "step_id": "produce", "attempt": 2, "first_ms": 9000, "last_ms": 10000},
        ],
        "overlap_allowed_ms": 500,
        "step_artifacts": [{"run_id": "r1", "step_id": "produce", "name": "out.bin", "sha256": SHA_A}],
        "consumed": [{"run_id": "r1", "step_id": "consume", "attempt": 1, "producer": "produce",
                      "name": "out.bin", "sha256": SHA_A}],
        "store": [{"sha256": SHA_A, "actual": SHA_A}],
        "leftovers": {"processes": [], "nodes": [], "resources": {"coordinator fds": (12, 12)}},
    }


class CheckerTest(unittest.TestCase):
    def assertCaughtBy(self, h, invariant, text):
        got = checker.check(h)
        self.assertEqual([v["invariant"] for v in got], [invariant], got)
        self.assertIn(text, got[0]["what"])

    def test_clean_history_holds(self):
        self.assertEqual(checker.check(clean()), [])
        self.assertTrue(all(line.endswith("held") for line in checker.summary(clean(), [])))

    def test_a_run_that_never_ended(self):
        h = clean()
        h["runs"][0]["status"] = "running"
        self.assertCaughtBy(h, "runs_end", "still running")

    def test_two_completed_attempts(self):
        h = clean()
        h["attempts"][0].update(status="completed", error_class=None)
        got = checker.check(h)
        self.assertIn("one_completed_attempt", [v["invariant"] for v in got])
        self.assertIn("completed attempts [1, 2]", got[0]["what"])

    def test_two_completions_in_the_journal(self):
        h = clean()
        h["journal"].append({"run_id": "r1", "seq": 13, "type": "attempt_completed", "step_id": "consume", "attempt": 1})
        self.assertCaughtBy(h, "one_completed_attempt", "completed attempts [1, 1]")

    def test_complete_accepted_for_an_expired_attempt(self):
        h = clean()
        h["journal"].insert(5, {"run_id": "r1", "seq": 5.5, "type": "attempt_failed", "step_id": "produce", "attempt": 1})
        self.assertCaughtBy(h, "no_outcome_after_fence", "attempt_failed accepted for attempt 1 after it expired")

    def test_complete_accepted_for_a_fenced_attempt(self):
        h = clean()
        # attempt 1 reports after attempt 2 was leased, without an expiry in between
        h["journal"] = [e for e in h["journal"] if e["type"] != "attempt_expired"]
        h["journal"].append({"run_id": "r1", "seq": 6.5, "type": "attempt_completed", "step_id": "produce", "attempt": 1})
        got = checker.check(h)
        self.assertIn("after attempt 2 was leased", " ".join(v["what"] for v in got))

    def test_overlapping_live_attempts(self):
        h = clean()
        h["alive"][1].update(first_ms=2000)  # attempt 2 alive while attempt 1 still ticks
        self.assertCaughtBy(h, "no_overlapping_attempts", "alive together for 1000 ms")

    def test_overlap_within_the_allowed_window_is_not_a_violation(self):
        h = clean()
        h["alive"][1].update(first_ms=2600)
        self.assertEqual(checker.check(h), [])

    def test_artifact_bytes_mismatch(self):
        h = clean()
        h["consumed"][0]["sha256"] = SHA_B
        self.assertCaughtBy(h, "artifact_bytes", "read produce/out.bin with sha256 bbbbbbbbbbbb")

    def test_artifact_read_that_no_step_uploaded(self):
        h = clean()
        h["consumed"][0]["producer"] = "ghost"
        self.assertCaughtBy(h, "artifact_bytes", "which no completed step uploaded")

    def test_store_holding_other_bytes(self):
        h = clean()
        h["store"][0]["actual"] = SHA_B
        self.assertCaughtBy(h, "artifact_bytes", "other bytes")

    def test_leftover_process(self):
        h = clean()
        h["leftovers"]["processes"].append({"pid": 4242, "what": "chaos_step"})
        self.assertCaughtBy(h, "nothing_left_behind", "step process still alive")

    def test_drained_node_and_leaked_descriptors(self):
        h = clean()
        h["leftovers"]["nodes"].append({"node": "n2", "state": "drained"})
        h["leftovers"]["resources"]["coordinator fds"] = (12, 40)
        got = checker.check(h)
        self.assertEqual(sorted(v["what"] for v in got), ["12 at start, 40 at the end", "node is drained"])

    def test_at_least_once_step_failed_with_a_wrong_class(self):
        h = clean()
        h["runs"][0]["status"] = "failed"
        h["steps"][1]["status"] = "failed"
        h["attempts"][2].update(status="failed", error_class="invalid_output")
        self.assertCaughtBy(h, "at_least_once_completes", "class invalid_output")

    def test_at_least_once_step_whose_budget_faults_spent(self):
        h = clean()
        h["runs"][0]["status"] = "failed"
        h["steps"][1]["status"] = "failed"
        h["attempts"][2].update(status="expired", error_class="lease_expired")
        self.assertEqual(checker.check(h), [])

    def test_at_least_once_step_failed_with_budget_left(self):
        h = clean()
        h["runs"][0]["status"] = "failed"
        h["steps"][1].update(status="failed", max_attempts=3)
        h["attempts"][2].update(status="expired", error_class="lease_expired")
        self.assertCaughtBy(h, "at_least_once_completes", "after 1 of 3 attempts")

    def test_at_most_once_step_may_fail(self):
        h = clean()
        h["steps"][1].update(status="failed", delivery="at_most_once")
        h["attempts"][2].update(status="failed", error_class="fatal")
        self.assertEqual(checker.check(h), [])


if __name__ == "__main__":
    unittest.main()
