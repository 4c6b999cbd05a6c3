"""ctypes bindings of libscimesh_mpi's C API (scimesh_step(3)): one function per C call, errors raised."""

from __future__ import annotations

import ctypes
from typing import Callable

from . import _library
from .errors import LeaseLost, NotInAStep, ScimeshError, StepEnded

_ERR_NO_LEASE, _ERR_TRUNCATED, _ERR_STATE, _ERR_LEASE_LOST = 2, 5, 6, 7

_lib: ctypes.CDLL | None = None


def lib() -> ctypes.CDLL:
    """libscimesh_mpi, loaded on first use (importing scimesh loads nothing)."""
    global _lib
    if _lib is None:
        try:
            loaded = ctypes.CDLL(_library.LIBRARY, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise ScimeshError(f"cannot load the scimesh runtime library {_library.LIBRARY}: {e}") from None
        _declare(loaded)
        _lib = loaded
    return _lib


def _declare(l: ctypes.CDLL) -> None:
    handle, out = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    text, size = ctypes.c_char_p, ctypes.c_size_t
    signatures: dict[str, list] = {
        "scimesh_step_begin_f": [ctypes.c_int, text, out],
        "scimesh_step_input": [handle, ctypes.c_char_p, size, ctypes.POINTER(size)],
        "scimesh_step_previous": [handle, ctypes.c_char_p, size, ctypes.POINTER(size)],
        "scimesh_step_cancelled": [handle, ctypes.POINTER(ctypes.c_int)],
        "scimesh_step_cancelled_all": [handle, ctypes.POINTER(ctypes.c_int)],
        "scimesh_step_progress": [handle, text],
        "scimesh_step_set_output": [handle, text],
        "scimesh_step_set_state_patch": [handle, text],
        "scimesh_step_set_usage": [handle, text],
        "scimesh_step_add_artifact": [handle, text, text, text],
        "scimesh_step_fail": [handle, text, text],
        "scimesh_step_end": [out],
    }
    for name, args in signatures.items():
        fn = getattr(l, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    l.scimesh_strerror.argtypes, l.scimesh_strerror.restype = [ctypes.c_int], ctypes.c_char_p
    l.scimesh_step_last_error.argtypes, l.scimesh_step_last_error.restype = [], ctypes.c_char_p


def check(code: int, what: str) -> None:
    """Raises the exception of a scimesh error code, with the library's reason."""
    if code == 0:
        return
    why = (lib().scimesh_step_last_error() or b"").decode("utf-8", "replace")
    why = why or lib().scimesh_strerror(code).decode()
    kind = {_ERR_NO_LEASE: NotInAStep, _ERR_STATE: StepEnded, _ERR_LEASE_LOST: LeaseLost}.get(code, ScimeshError)
    raise kind(f"{what}: {why}", code)


def begin(comm_f: int, attempt_dir: str) -> ctypes.c_void_p:
    step = ctypes.c_void_p()
    check(lib().scimesh_step_begin_f(comm_f, attempt_dir.encode(), ctypes.byref(step)), "cannot begin the step")
    return step


def read_text(fn: Callable, step: ctypes.c_void_p, what: str) -> str:
    """A JSON text the library copies out (input, previous): size first, then the text."""
    needed = ctypes.c_size_t(0)
    code = fn(step, None, 0, ctypes.byref(needed))
    if code not in (0, _ERR_TRUNCATED):
        check(code, what)
    buf = ctypes.create_string_buffer(needed.value)
    check(fn(step, buf, needed.value, ctypes.byref(needed)), what)
    return buf.value.decode("utf-8")


def flag(fn: Callable, step: ctypes.c_void_p, what: str) -> bool:
    value = ctypes.c_int(0)
    check(fn(step, ctypes.byref(value)), what)
    return value.value != 0


def end(step: ctypes.c_void_p) -> bool:
    """Ends the step (collective); True when the lease was lost."""
    code = lib().scimesh_step_end(ctypes.byref(step))
    if code == _ERR_LEASE_LOST:
        return True
    check(code, "cannot end the step")
    return False
