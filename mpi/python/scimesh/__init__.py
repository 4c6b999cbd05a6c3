"""A Python step of a scimesh workflow, with or without MPI: scimesh_step(3) in Python.

SYNOPSIS
    from mpi4py import MPI
    import scimesh

    with scimesh.Step(MPI.COMM_WORLD) as step:     # collective: every rank
        n = step.input["n"]                         # the step's input, a dict
        mesh = step.previous["mesh"]                # outputs of the steps it needs
        for it in range(iterations):
            if step.cancelled():                    # the lease is lost: stop
                break
            ...
            step.progress(it / iterations, "solving")
        step.output = {"residual": r}               # rank 0's counts
        step.usage = {"iterations": it}
        step.add_artifact("field.npy", media_type="application/x-npy")

    with scimesh.Step() as step:                    # one process, no mpirun
        ...

DESCRIPTION
    A step is one lease, however many ranks run it. The launcher starts the
    step's processes with SCIMESH_ATTEMPT_DIR set; Step(comm) begins the step
    on every rank of the mpi4py communicator comm (collective): rank 0 takes
    the lease over and heartbeats it for the whole job on a thread of its
    own; every rank is pinned to the cores the launcher assigned it. Leaving
    the with block ends the step (collective): rank 0 hands the lease back and
    the launcher uploads the artifacts and reports the outcome.

    This package is ctypes over libscimesh_mpi, the library of the C, C++ and
    Fortran API (scimesh_step(3)): one implementation of the protocol and of
    rank 0's heartbeat, and no compiled extension to build for each Python.
    The communicator crosses as its Fortran handle (comm.py2f()).

    Step.input, Step.previous      parsed JSON (dicts)
    Step.rank, Step.size           this rank and the communicator's size
    Step.cancelled()               local poll; True once the lease is lost
    Step.cancelled_all()           collective: the same answer on every rank
    Step.progress(fraction, message, **fields)
    Step.output, .state_patch      dicts; set them before the end
    Step.usage                     a dict of numbers
    Step.add_artifact(path, name=None, media_type=None)
                                   a file, or a directory (a directory artifact)
    Step.inputs_dir, Step.input_path(step_id, name)
                                   where earlier steps' artifacts were put
    Step.attempt_dir               the attempt directory: write only in it
    Step.end()                     what leaving the with block does
    Step.lost                      after the end: True when the lease was lost

    numpy scalars and arrays in an output are sent as numbers and lists.

FAILURES
    raise scimesh.Retryable("why")         class retryable: run again while
                                           max_attempts allow
    raise scimesh.StepFailed(cls, "why")   cls: retryable, timeout,
                                           invalid_output, input_checksum, fatal
    any other exception                    class fatal, message
                                           "TypeName: message"; the traceback
                                           goes to the rank's stderr (step.err),
                                           never to the coordinator

    The first failure of any rank is the attempt's, sent as "rank R on HOST:
    message". With more than one rank the failing rank then aborts the job
    (MPI_Abort): the others may wait in a collective it will never join.

ERRORS
    NotInAStep      Step() without SCIMESH_ATTEMPT_DIR, or no lease there
    StepEnded       a call after the end
    LeaseLost       (a ScimeshError) the lease was lost
    ScimeshError    any other failure of the runtime; .code is its C code
    TypeError       an output, state patch or usage that is not JSON

SEE ALSO
    scimesh_step(3), scimesh-launch(1), docs/user-guide.md "Python steps"
"""

from .errors import LeaseLost, NotInAStep, Retryable, ScimeshError, StepEnded, StepFailed
from .step import Step

__all__ = ["Step", "Retryable", "StepFailed", "ScimeshError", "NotInAStep", "StepEnded", "LeaseLost"]
