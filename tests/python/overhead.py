"""The Python side of the step-overhead benchmark (tests/python/overhead-bench.sh):
the imports, then begin -> end with nothing in between, timed on rank 0."""

import time

t_start = time.perf_counter()
from mpi4py import MPI  # noqa: E402 (the import is what is timed)

import scimesh  # noqa: E402

t_imported = time.perf_counter()
comm = MPI.COMM_WORLD
comm.Barrier()
t0 = MPI.Wtime()
step = scimesh.Step(comm)
t1 = MPI.Wtime()
step.output = {}
step.end()
t2 = MPI.Wtime()
if comm.Get_rank() == 0:
    print(f"import_ms={(t_imported - t_start) * 1e3:.3f} begin_ms={(t1 - t0) * 1e3:.3f} end_ms={(t2 - t1) * 1e3:.3f}")
