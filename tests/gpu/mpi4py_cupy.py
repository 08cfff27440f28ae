"""An unmodified mpi4py program moving CuPy arrays with derived datatypes, point-to-point and by
an Alltoallw pencil transpose, run with gddt LD_PRELOADed. Two ranks, one GPU each where there
are two.

Skipped (a "skipped:" line, exit 0) when this Python's mpi4py was built for another MPI library than the one
gddt was built against (GDDT_EXPECT_MPI, the first line of that library's version string).
"""
import ctypes
import os
import sys

import cupy as cp
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
peer = 1 - rank


def first_line(text):
    return " ".join(text.splitlines()[0].split()) if text else ""


expected = first_line(os.environ.get("GDDT_EXPECT_MPI", ""))
found = first_line(MPI.Get_library_version())
if expected and not found.startswith(expected.split(",")[0]):
    if rank == 0:
        print(f"mpi4py_cupy: skipped: mpi4py uses '{found}', gddt was built for '{expected}'")
    sys.exit(0)
try:
    ctypes.CDLL(None).gddt_memory_keyval
except AttributeError:
    sys.exit("gddt is not loaded into this process: run with LD_PRELOAD=libgddt.so")
if comm.Get_size() != 2:
    sys.exit("run with 2 ranks")

cp.cuda.Device(rank % cp.cuda.runtime.getDeviceCount()).use()
failures = []


def check(name, got, want):
    got = cp.asnumpy(got) if isinstance(got, cp.ndarray) else got
    if not np.array_equal(got, want):
        bad = np.flatnonzero(got.ravel() != want.ravel())
        failures.append(f"{name}: {bad.size} wrong values, first at {bad[0]}: {got.ravel()[bad[0]]} != {want.ravel()[bad[0]]}")


n = 1 << 15
vector = MPI.FLOAT.Create_vector(n, 1, 2).Commit()  # every other float

# 1. Device vector to device vector: the gaps of the receiver stay untouched.
source = cp.arange(2 * n, dtype=cp.float32) + 1000 * rank
target = cp.full(2 * n, -1, dtype=cp.float32)
cp.cuda.Device().synchronize()
if rank == 0:
    comm.Send([source, 1, vector], dest=1, tag=1)
else:
    comm.Recv([target, 1, vector], source=0, tag=1)
    want = np.full(2 * n, -1, dtype=np.float32)
    want[::2] = np.arange(0, 2 * n, 2, dtype=np.float32)
    check("vector to vector", target, want)

# 2. The same signature with other datatypes and memories: a device vector into a contiguous
# host array, and a host vector into a contiguous device array; the status counts floats.
host = np.zeros(n, dtype=np.float32)
device = cp.zeros(n, dtype=cp.float32)
host_source = np.arange(2 * n, dtype=np.float32) + 7
cp.cuda.Device().synchronize()
if rank == 0:
    comm.Send([source, 1, vector], dest=1, tag=2)
    comm.Send([host_source, 1, vector], dest=1, tag=3)
else:
    status = MPI.Status()
    comm.Recv([host, n, MPI.FLOAT], source=0, tag=2, status=status)
    check("device vector to host floats", host, np.arange(0, 2 * n, 2, dtype=np.float32))
    if status.Get_count(MPI.FLOAT) != n:
        failures.append(f"status counts {status.Get_count(MPI.FLOAT)} floats, not {n}")
    comm.Recv([device, n, MPI.FLOAT], source=0, tag=3)
    check("host vector to device floats", device, np.arange(0, 2 * n, 2, dtype=np.float32) + 7)

# 3. A halo exchange of 3-D faces with Isend/Irecv/Waitall, both ranks at once.
shape = (16, 24, 32)
grid = cp.arange(np.prod(shape), dtype=cp.float64).reshape(shape) + 1e6 * rank
ghost = cp.full(shape, -1.0)
face = MPI.DOUBLE.Create_subarray(shape, (16, 1, 32), (0, 5, 0)).Commit()
cp.cuda.Device().synchronize()
requests = [comm.Irecv([ghost, 1, face], source=peer, tag=4), comm.Isend([grid, 1, face], dest=peer, tag=4)]
MPI.Request.Waitall(requests)
want = np.full(shape, -1.0)
want[:, 5, :] = (np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1e6 * peer)[:, 5, :]
check("subarray halo exchange", ghost, want)

# 4. Sendrecv_replace of a strided column of a 2-D device array.
matrix = cp.arange(64 * 48, dtype=cp.int32).reshape(64, 48) + 100000 * rank
column = MPI.INT.Create_vector(64, 1, 48).Commit()
cp.cuda.Device().synchronize()
comm.Sendrecv_replace([matrix, 1, column], dest=peer, sendtag=5, source=peer, recvtag=5)
want = np.arange(64 * 48, dtype=np.int32).reshape(64, 48) + 100000 * rank
want[:, 0] = (np.arange(64 * 48, dtype=np.int32).reshape(64, 48) + 100000 * peer)[:, 0]
check("column Sendrecv_replace", matrix, want)

# 5. A pencil transpose as mpi4py-fft does it: Alltoallw of subarray types of complex device
# arrays, from an x-split of a 3-D array to a y-split.
nx, ny, nz = 8, 12, 10
x_split = (cp.arange(nx // 2 * ny * nz, dtype=cp.float64) + 1000 * rank).astype(cp.complex128).reshape(nx // 2, ny, nz)
y_split = cp.full((nx, ny // 2, nz), -1, dtype=cp.complex128)
send_types = [MPI.C_DOUBLE_COMPLEX.Create_subarray((nx // 2, ny, nz), (nx // 2, ny // 2, nz), (0, j * ny // 2, 0)).Commit()
              for j in range(2)]
receive_types = [MPI.C_DOUBLE_COMPLEX.Create_subarray((nx, ny // 2, nz), (nx // 2, ny // 2, nz), (j * nx // 2, 0, 0)).Commit()
                 for j in range(2)]
cp.cuda.Device().synchronize()
comm.Alltoallw([x_split, [1, 1], [0, 0], send_types], [y_split, [1, 1], [0, 0], receive_types])
want = np.empty((nx, ny // 2, nz), dtype=np.complex128)
for j in range(2):
    theirs = (np.arange(nx // 2 * ny * nz, dtype=np.float64) + 1000 * j).astype(np.complex128).reshape(nx // 2, ny, nz)
    want[j * nx // 2:(j + 1) * nx // 2] = theirs[:, rank * ny // 2:(rank + 1) * ny // 2, :]
check("pencil transpose by Alltoallw of subarrays", y_split, want)

for datatype in (vector, face, column, *send_types, *receive_types):
    datatype.Free()
everything = comm.allgather(failures)
if rank == 0:
    for rank_failures in everything:
        for line in rank_failures:
            print("FAIL:", line)
    print("mpi4py + CuPy:", "all checks passed" if not any(everything) else "FAILED")
sys.exit(1 if any(everything) else 0)
