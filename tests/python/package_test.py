"""Unit tests of the scimesh package's pure-Python parts: no MPI job, no coordinator."""

import os
import subprocess
import sys
import unittest

import scimesh
from scimesh import step as step_module


class FailureClasses(unittest.TestCase):
    def test_step_failed_takes_the_classes_a_step_may_report(self):
        for cls in ("retryable", "timeout", "invalid_output", "input_checksum", "fatal"):
            self.assertEqual(scimesh.StepFailed(cls, "why").failure_class, cls)

    def test_a_class_of_the_launcher_or_the_scheduler_is_refused(self):
        for cls in ("preempted", "unservable", "node_failure", "cancelled", "storage_full", "Fatal", ""):
            with self.assertRaisesRegex(ValueError, "a step may fail with one of retryable"):
                scimesh.StepFailed(cls, "why")

    def test_retryable_is_retryable(self):
        self.assertEqual(scimesh.Retryable("why").failure_class, "retryable")


class JsonValues(unittest.TestCase):
    def test_numpy_values_become_numbers_and_lists(self):
        import numpy as np
        text = step_module._json_object({"a": np.int64(3), "b": np.float32(0.5), "c": np.arange(2)}, "x")
        self.assertEqual(text, '{"a": 3, "b": 0.5, "c": [0, 1]}')

    def test_not_a_dict_is_a_type_error(self):
        with self.assertRaisesRegex(TypeError, r"step.output must be a dict \(a JSON object\), not list"):
            step_module._json_object([1], "step.output")

    def test_not_serialisable_names_the_type(self):
        with self.assertRaisesRegex(TypeError, "must be JSON serialisable: Object of type object"):
            step_module._json_object({"x": object()}, "step.output")

    def test_nan_is_refused(self):
        with self.assertRaisesRegex(ValueError, "NaN and infinities"):
            step_module._json_object({"x": float("inf")}, "step.output")


class OutsideAStep(unittest.TestCase):
    def test_importing_loads_nothing_and_help_reads_like_a_man_page(self):
        doc = scimesh.__doc__
        for section in ("SYNOPSIS", "DESCRIPTION", "FAILURES", "ERRORS", "SEE ALSO"):
            self.assertIn(section, doc)
        self.assertIsNone(scimesh._native._lib)

    def test_step_without_an_attempt_directory_says_so(self):
        env = {k: v for k, v in os.environ.items() if k != "SCIMESH_ATTEMPT_DIR"}
        run = subprocess.run([sys.executable, "-c", "import scimesh; scimesh.Step()"], env=env,
                             capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("NotInAStep: not inside a scimesh step: SCIMESH_ATTEMPT_DIR is not set", run.stderr)

    def test_an_artifact_name_follows_the_protocols_rule(self):
        ok = step_module._ARTIFACT_NAME.fullmatch
        self.assertTrue(ok("field-1.vti") and ok("a" * 128) and ok("_x"))
        self.assertFalse(ok(".hidden") or ok("a/b") or ok("a" * 129) or ok("") or ok("x y"))


if __name__ == "__main__":
    unittest.main()
