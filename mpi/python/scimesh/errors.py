"""The exceptions of the scimesh package: how a step fails, and what a wrong use raises."""

from __future__ import annotations

__all__ = ["ScimeshError", "NotInAStep", "StepEnded", "LeaseLost", "Retryable", "StepFailed", "STEP_CLASSES"]

# The classes a step may report (docs/protocol.md, the table under /fail).
STEP_CLASSES = ("retryable", "timeout", "invalid_output", "input_checksum", "fatal")


class ScimeshError(Exception):
    """A call of the step runtime failed; ``code`` is its scimesh error code
    (``scimesh_strerror(3)``: 1 invalid, 2 no lease, 3 I/O, 4 MPI, 6 out of
    order, 7 lease lost, 8 internal), 0 for a wrong use found in Python."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class NotInAStep(ScimeshError):
    """``Step()`` was called where no step runs: no attempt directory (the
    launcher sets ``SCIMESH_ATTEMPT_DIR``), or no lease in it."""


class StepEnded(ScimeshError):
    """A call on a step that has ended (after its ``with`` block or ``end()``)
    or has not begun."""


class LeaseLost(ScimeshError):
    """The lease was lost while the step ran (fenced, run cancelled, deadline
    passed): nothing more is reported for this attempt; leave the step."""


class Retryable(Exception):
    """Raise it in a step to fail the attempt with class ``retryable``: the
    coordinator runs the step again while its ``max_attempts`` allow.

    >>> raise scimesh.Retryable("the license server did not answer")
    """

    failure_class = "retryable"


class StepFailed(Exception):
    """Raise it in a step to fail the attempt with a class of your choice:
    ``retryable``, ``timeout``, ``invalid_output``, ``input_checksum`` or
    ``fatal`` (no retry; the run fails).

    >>> raise scimesh.StepFailed("fatal", "the mesh has 0 cells")
    """

    def __init__(self, failure_class: str, message: str) -> None:
        if failure_class not in STEP_CLASSES:
            raise ValueError(f"a step may fail with one of {', '.join(STEP_CLASSES)}, not {failure_class!r}")
        super().__init__(message)
        self.failure_class = failure_class
