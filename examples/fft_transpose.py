"""The pencil transposes of a distributed 3-D FFT (gddt-app-fft's) from Python, the way
mpi4py-fft writes them: MPI.Comm.Alltoallw with subarray datatypes on CuPy arrays (NumPy arrays
where CuPy or a GPU is missing, or FFT_ARRAYS=numpy), x -> y -> z pencils and back, every pencil
compared with the reference transpose of the whole array. Run it with gddt preloaded:

    mpiexec -n 4 -x LD_PRELOAD=/opt/gddt/lib/libgddt.so python3 fft_transpose.py [n]

gddt hands NumPy (host) arrays to the MPI library untouched unless GDDT_COLLECTIVE_HOST=gddt; with
CuPy arrays, or with that setting, every transpose must have gone through gddt. Exits 77 (skipped)
where NumPy or mpi4py is missing, or where mpi4py was built for another MPI library than the one
EXPECT_MPI_LIBRARY ("Open MPI" or "MPICH": gddt's) names.
"""
import ctypes
import importlib.util
import os
import subprocess
import sys

SKIP = 77


def skip_unless_runnable():
    """mpi4py's MPI module loads the library it was built for; gddt built for another one cannot
    serve it (both libraries would land in one process), so look before importing it."""
    for module in ("numpy", "mpi4py"):
        if importlib.util.find_spec(module) is None:
            print(f"SKIP: no {module} for {sys.executable}")
            sys.exit(SKIP)
    expected = os.environ.get("EXPECT_MPI_LIBRARY", "")
    if not expected:
        return
    module = importlib.util.find_spec("mpi4py.MPI").origin
    # Without the preload, whose own MPI library ldd would list too.
    environment = {name: value for name, value in os.environ.items() if name != "LD_PRELOAD"}
    linked = subprocess.run(["ldd", module], capture_output=True, text=True, env=environment).stdout
    found = "MPICH" if "libmpich" in linked else "Open MPI" if "libmpi.so" in linked else "unknown"
    if found != expected:
        print(f"SKIP: mpi4py ({module}) uses {found}, gddt was built for {expected}")
        sys.exit(SKIP)


skip_unless_runnable()
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402


def array_module(rank):
    """CuPy on this rank's GPU where there is one, else NumPy."""
    if os.environ.get("FFT_ARRAYS") != "numpy" and importlib.util.find_spec("cupy") is not None:
        import cupy

        try:
            devices = cupy.cuda.runtime.getDeviceCount()
        except cupy.cuda.runtime.CUDARuntimeError:
            devices = 0
        if devices > 0:
            cupy.cuda.Device(rank % devices).use()
            return cupy
    return np


def pencils(cart, n):
    """(shape, offset) of this rank's x-, y- and z-pencil on the P1 x P2 process grid."""
    p1, p2 = cart.Get_topo()[0]
    c1, c2 = cart.Get_coords(cart.Get_rank())
    a, b = n // p1, n // p2
    return {"x": ((n, a, b), (0, c1 * a, c2 * b)), "y": ((a, n, b), (c1 * a, 0, c2 * b)),
            "z": ((a, b, n), (c1 * a, c2 * b, 0))}


def transpose_types(from_shape, to_shape, peers):
    """Peer j's subarray of the source and of the destination: the axis that shrinks is shared
    out among the peers, the one that grows gathered from them."""
    split = [axis for axis in range(3) if from_shape[axis] > to_shape[axis]]
    join = [axis for axis in range(3) if to_shape[axis] > from_shape[axis]]
    send, receive = [], []
    for j in range(peers):
        send_size, send_start = list(from_shape), [0, 0, 0]
        receive_size, receive_start = list(to_shape), [0, 0, 0]
        if split:
            send_size[split[0]], send_start[split[0]] = to_shape[split[0]], j * to_shape[split[0]]
            receive_size[join[0]], receive_start[join[0]] = from_shape[join[0]], j * from_shape[join[0]]
        send.append(MPI.C_DOUBLE_COMPLEX.Create_subarray(from_shape, send_size, send_start).Commit())
        receive.append(MPI.C_DOUBLE_COMPLEX.Create_subarray(to_shape, receive_size, receive_start).Commit())
    return send, receive


def reference(xp, shape, offset, n):
    """The pencil of the whole array whose element (i, j, k) is index + (index + 0.5)i, index its
    C-order place."""
    i, j, k = (xp.arange(offset[axis], offset[axis] + shape[axis]) for axis in range(3))
    index = ((i[:, None, None] * n + j[None, :, None]) * n + k[None, None, :]).astype(xp.float64)
    return index + 1j * (index + 0.5)


def gddt_counter(name):
    """gddt's counter, or None where gddt is not loaded into this process."""
    try:
        counter = ctypes.CDLL(None).gddt_counter
    except AttributeError:
        return None
    value = ctypes.c_longlong(0)
    return value.value if counter(name.encode(), ctypes.byref(value)) == 0 else None


def main():
    world = MPI.COMM_WORLD
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    cart = world.Create_cart(MPI.Compute_dims(world.Get_size(), 2))
    p1, p2 = cart.Get_topo()[0]
    if n % p1 or n % p2:
        sys.exit(f"n = {n} must be a multiple of the process grid's {p1} and {p2}")
    row, column = cart.Sub([True, False]), cart.Sub([False, True])
    xp = array_module(world.Get_rank())
    shapes = pencils(cart, n)
    arrays = {name: xp.full(shape, np.nan, dtype=xp.complex128) for name, (shape, _) in shapes.items()}
    arrays["x"][...] = reference(xp, *shapes["x"], n)
    steps = [("x", "y", row), ("y", "z", column), ("z", "y", column), ("y", "x", row)]
    types = [transpose_types(shapes[a][0], shapes[b][0], comm.Get_size()) for a, b, comm in steps]
    before = gddt_counter("collective.stand-ins")
    failures = []
    for (source, target, comm), (send, receive) in zip(steps, types):
        if xp is not np:
            xp.cuda.Device().synchronize()  # MPI reads the arrays once the GPU wrote them
        ones, zeros = [1] * comm.Get_size(), [0] * comm.Get_size()
        comm.Alltoallw([arrays[source], ones, zeros, send], [arrays[target], ones, zeros, receive])
        if not bool(xp.array_equal(arrays[target], reference(xp, *shapes[target], n))):
            failures.append(f"{source} -> {target} pencils differ from the reference transpose")
    staged = gddt_counter("collective.stand-ins")
    staged = None if staged is None else staged - before
    if (xp is not np or os.environ.get("GDDT_COLLECTIVE_HOST") == "gddt") and not staged:
        failures.append("gddt did not stage the transposes (is it preloaded?)")
    for send, receive in types:
        for datatype in send + receive:
            datatype.Free()
    everything = world.allgather(failures)
    if world.Get_rank() == 0:
        for line in sorted(set(sum(everything, []))):
            print("FAIL:", line)
        arrays_name = "CuPy" if xp is not np else "NumPy"
        print(f"fft_transpose: {n}^3 complex doubles, {world.Get_size()} ranks, pencils {p1}x{p2}, {arrays_name} "
              f"arrays, buffers gddt staged on rank 0: {staged if staged is not None else 'gddt not loaded'}: "
              f"{'FAILED' if any(everything) else 'matches the reference transpose'}")
    return 1 if any(everything) else 0


if __name__ == "__main__":
    sys.exit(main())
