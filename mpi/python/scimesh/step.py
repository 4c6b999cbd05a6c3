"""scimesh.Step: one rank's handle of a running step, over libscimesh_mpi (scimesh_step(3))."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import traceback
from pathlib import Path
from typing import Any, Optional

from . import _native
from .errors import NotInAStep, Retryable, ScimeshError, StepEnded, StepFailed

__all__ = ["Step"]

_ARTIFACT_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


def _plain(value: Any) -> Any:
    """json.dumps' fallback: numpy scalars and arrays become numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_object(value: Any, what: str) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict (a JSON object), not {type(value).__name__}")
    try:
        return json.dumps(value, default=_plain, allow_nan=False)
    except ValueError:
        raise ValueError(f"{what}: NaN and infinities cannot be sent as JSON") from None
    except TypeError as e:
        raise TypeError(f"{what} must be JSON serialisable: {e}") from None


def _world(comm: Any) -> Any:
    if comm is not None:
        return comm
    try:
        from mpi4py import MPI
    except ImportError:
        raise ScimeshError("scimesh.Step() needs mpi4py, even for one process "
                           "(Debian: apt-get install python3-mpi4py)") from None
    return MPI.COMM_SELF


class Step:
    """One rank's handle of the running step; see help(scimesh).

    ``Step(comm)`` begins the step on every rank of ``comm`` (an mpi4py
    communicator; collective); ``Step()`` begins a single-process step.
    Use it as a context manager: leaving the ``with`` block ends the step
    (collective), and an exception raised in it fails the attempt.
    """

    def __init__(self, comm: Any = None, attempt_dir: Optional[str] = None) -> None:
        where = attempt_dir or os.environ.get("SCIMESH_ATTEMPT_DIR", "")
        if not where:
            raise NotInAStep("not inside a scimesh step: SCIMESH_ATTEMPT_DIR is not set (the launcher sets it "
                             "for a step's processes; pass attempt_dir= to run a step by hand)")
        self._comm = _world(comm)
        self.rank: int = self._comm.Get_rank()
        self.size: int = self._comm.Get_size()
        self.attempt_dir = Path(where)
        self._handle = _native.begin(self._comm.py2f(), where)
        lib = _native.lib()
        self.input: dict = json.loads(_native.read_text(lib.scimesh_step_input, self._handle, "input"))
        self.previous: dict = json.loads(_native.read_text(lib.scimesh_step_previous, self._handle, "previous"))
        self.lost = False
        self._output: Optional[dict] = None
        self._state_patch: Optional[dict] = None
        self._usage: Optional[dict] = None

    # --- where things are -------------------------------------------------
    @property
    def inputs_dir(self) -> Path:
        """``inputs/`` of the attempt directory: the verified input artifacts
        of earlier steps, ``inputs/<step_id>/<name>`` (a directory artifact is
        unpacked there as a directory)."""
        return self.attempt_dir / "inputs"

    def input_path(self, step_id: str, name: str) -> Path:
        """The input artifact ``name`` of the earlier step ``step_id``;
        FileNotFoundError naming both when that step declared none of that name."""
        path = self.inputs_dir / step_id / name
        if not path.exists():
            raise FileNotFoundError(f"no input artifact {name!r} of step {step_id!r} (inputs/{step_id}/{name})")
        return path

    # --- cancellation -----------------------------------------------------
    def cancelled(self) -> bool:
        """True once the lease is lost (cheap, local: poll it every iteration).
        Every rank sees it within one poll after the news reaches rank 0."""
        return _native.flag(_native.lib().scimesh_step_cancelled, self._live(), "cancelled")

    def cancelled_all(self) -> bool:
        """Collective: the same answer on every rank (one allreduce); use it
        where all ranks must leave a loop at the same iteration."""
        return _native.flag(_native.lib().scimesh_step_cancelled_all, self._live(), "cancelled_all")

    # --- what the step reports --------------------------------------------
    def progress(self, fraction: Optional[float] = None, message: Optional[str] = None, **fields: Any) -> None:
        """Sends ``{"fraction": ..., "message": ..., **fields}`` (<= 4 KiB) with
        rank 0's next heartbeat; ``scimesh-coordinator run show`` shows the last."""
        body: dict = dict(fields)
        if fraction is not None:
            if not 0.0 <= float(fraction) <= 1.0:
                raise ValueError(f"progress fraction must be in [0, 1], not {fraction}")
            body["fraction"] = float(fraction)
        if message is not None:
            body["message"] = str(message)
        text = _json_object(body, "progress")
        _native.check(_native.lib().scimesh_step_progress(self._live(), text.encode()), "progress")

    @property
    def output(self) -> Optional[dict]:
        """The step's output (a dict; rank 0's counts). Set it before the end."""
        return self._output

    @output.setter
    def output(self, value: dict) -> None:
        self._write("scimesh_step_set_output", value, "step.output")
        self._output = value

    @property
    def state_patch(self) -> Optional[dict]:
        """Merged into the run's state when the step completes (top-level keys replace)."""
        return self._state_patch

    @state_patch.setter
    def state_patch(self, value: dict) -> None:
        self._write("scimesh_step_set_state_patch", value, "step.state_patch")
        self._state_patch = value

    @property
    def usage(self) -> Optional[dict]:
        """What the step measured: a dict of numbers (``{"cells": 1e6, "solver_s": 12.5}``)."""
        return self._usage

    @usage.setter
    def usage(self, value: dict) -> None:
        bad = [k for k, v in value.items() if isinstance(v, bool) or not isinstance(v, (int, float))] \
            if isinstance(value, dict) else []
        if bad:
            raise TypeError(f"step.usage holds numbers only; not a number: {', '.join(map(str, bad))}")
        self._write("scimesh_step_set_usage", value, "step.usage")
        self._usage = value

    def add_artifact(self, path: "str | os.PathLike[str]", name: Optional[str] = None,
                     media_type: Optional[str] = None) -> str:
        """Copies the file (or the directory, as a directory artifact) at
        ``path`` into the attempt's ``artifacts/`` as ``name`` (default: its
        base name; 1-128 of [A-Za-z0-9._-], not starting with '.'). Any rank
        may add; the launcher uploads them when the step completes. Returns
        the name."""
        source = Path(path)
        name = name or source.name
        handle = self._live()
        if not source.is_dir():
            media = media_type.encode() if media_type else None
            rc = _native.lib().scimesh_step_add_artifact(handle, name.encode(), os.fsencode(source), media)
            _native.check(rc, f"artifact {name}")
            return name
        if not _ARTIFACT_NAME.fullmatch(name):
            raise ValueError(f"artifact name {name!r}: 1-128 of [A-Za-z0-9._-], not starting with '.'")
        if media_type is not None:
            raise ValueError("a directory artifact has the directory media type; do not give one")
        dest = self.attempt_dir / "artifacts" / name
        dest.parent.mkdir(exist_ok=True)
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        shutil.copytree(source, dest)
        return name

    # --- the end ----------------------------------------------------------
    def end(self) -> None:
        """Ends the step (collective). Rank 0 hands the lease back to the
        launcher, which uploads the artifacts and reports the outcome. When the
        lease was lost meanwhile, ``lost`` becomes True and nothing is reported."""
        handle = self._live()
        self._handle = None
        self.lost = _native.end(handle)

    def __enter__(self) -> "Step":
        return self

    def __exit__(self, kind: Any, error: Optional[BaseException], tb: Any) -> bool:
        if self._handle is None:
            return False
        if error is None or (isinstance(error, SystemExit) and error.code in (0, None)):
            self.end()
            if self.lost:
                print(f"scimesh: rank {self.rank}: the lease was lost while the step ran; "
                      "nothing is reported for this attempt", file=sys.stderr)
            return False
        if not isinstance(error, Exception) and not isinstance(error, SystemExit):
            return False  # KeyboardInterrupt and the like: the job is being stopped
        return self._fail(error)

    def _fail(self, error: BaseException) -> bool:
        expected = isinstance(error, (StepFailed, Retryable))
        failure_class = error.failure_class if expected else "fatal"
        if isinstance(error, SystemExit):
            message = f"the step exited with status {error.code}"
        elif expected:
            message = str(error)
        else:
            message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        # The library keeps the first line and cuts paths (the protocol's message rules).
        rc = _native.lib().scimesh_step_fail(self._handle, failure_class.encode(), message.encode("utf-8", "replace"))
        if rc != 0:
            print(f"scimesh: rank {self.rank}: the failure could not be recorded: "
                  f"{_native.lib().scimesh_step_last_error().decode('utf-8', 'replace')}", file=sys.stderr)
        if expected or self.size > 1:
            print(f"scimesh: rank {self.rank}: the step failed ({failure_class}): {message}", file=sys.stderr)
        if self.size > 1:
            # Other ranks may wait in a collective this rank will never join.
            if not expected:
                traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
            self._comm.Abort(1)
        self.end()
        if expected:
            raise SystemExit(1)
        return False

    def _write(self, function: str, value: dict, what: str) -> None:
        """One of the C setters of a JSON object (output, state patch, usage)."""
        text = _json_object(value, what)
        _native.check(getattr(_native.lib(), function)(self._live(), text.encode()), what)

    def _live(self) -> Any:
        if self._handle is None:
            raise StepEnded("the step has ended: calls go inside its with block (or before end())")
        return self._handle
