"""Unit tests of the seeded workload and fault schedule: a seed replays the
same runs and schedule, other seeds differ, and the mix holds what the
campaign promises (every fault kind, both deliveries, 2-node and native steps)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faults  # noqa: E402
import workload  # noqa: E402


class WorkloadTest(unittest.TestCase):
    defs = workload.definitions("/bin/native", "/bin/step.sh")

    def test_a_seed_replays_the_same_runs(self):
        self.assertEqual(workload.runs(7, 150, self.defs), workload.runs(7, 150, self.defs))
        self.assertNotEqual(workload.runs(7, 150, self.defs), workload.runs(8, 150, self.defs))

    def test_runs_reach_the_step_count_with_short_and_long_bodies(self):
        plan = workload.runs(3, 1000, self.defs)
        self.assertGreaterEqual(sum(workload.step_count(self.defs, wf) for wf, _ in plan), 1000)
        ms = [v for _, inp in plan for v in inp.values()]
        self.assertGreaterEqual(min(ms), 200)
        self.assertLessEqual(max(ms), 10000)
        self.assertGreater(max(ms), 2000)

    def test_the_mix(self):
        steps = [s for d in self.defs for s in d["steps"]]
        self.assertEqual({s["delivery"] for s in steps}, {"at_least_once", "at_most_once"})
        self.assertTrue(any(s["resources"]["nodes"] == 2 for s in steps))
        self.assertTrue(any(s["resources"]["ranks_per_node"] > 1 and s["resources"]["nodes"] == 1 for s in steps))
        self.assertEqual({s["run"].get("native", False) for s in steps}, {True, False})
        self.assertTrue(any(s.get("needs") for s in steps))

    def test_a_seed_replays_the_same_fault_schedule(self):
        self.assertEqual(faults.schedule(5, 40, 200), faults.schedule(5, 40, 200))
        self.assertNotEqual(faults.schedule(5, 40, 200), faults.schedule(6, 40, 200))

    def test_the_schedule_holds_every_kind_in_order(self):
        sched = faults.schedule(1, 30, 120)
        self.assertEqual(len(sched), 30)
        self.assertEqual({k for _, k, _ in sched}, set(faults.KINDS))
        times = [t for t, _, _ in sched]
        self.assertEqual(times, sorted(times))
        self.assertLessEqual(times[-1], 120)

    def test_a_kind_left_out_is_never_scheduled(self):
        kinds = tuple(k for k in faults.KINDS if k != "node_death")
        sched = faults.schedule(1, 36, 120, kinds_allowed=kinds)
        self.assertEqual(len(sched), 36)
        self.assertEqual({k for _, k, _ in sched}, set(kinds))


if __name__ == "__main__":
    unittest.main()
