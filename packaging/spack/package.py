# Spack recipe for gddt. Put it in a package repository of your own (`spack repo create`) as
# packages/gddt/package.py and build a checkout of gddt with `spack develop` (README.md,
# "Installing on a cluster"), e.g. gddt@0.1.0 +cuda cuda_arch=90 ^openmpi.
#
# libgddt always holds the OpenCL backend (it opens the ICD loader at run time) and the entry points
# for Fortran callers (generated from the MPI library's own symbols); the variants choose the CUDA
# backend and what is built around the library: its tests, the OpenCL ones among them, and the
# Fortran tests and example.
from spack.package import *

try:  # Spack 1.0 and later keep the build systems in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # earlier Spack exports them from spack.package
    pass


class Gddt(CMakePackage, CudaPackage):
    """GPU-aware MPI derived datatypes: an interposer library that makes the standard MPI calls
    work on CUDA device memory under any MPI, linked or LD_PRELOADed."""

    # No archive or repository address is published yet: `spack develop` builds a checkout.
    version("0.1.0")

    variant("opencl", default=False, description="Build the OpenCL tests (needs +tests)")
    variant("fortran", default=False, description="Build the Fortran tests and example")
    variant("tests", default=False, description="Build the tests (ctest; `spack install --test=root` runs them)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("cmake@3.24:", type="build")
    # entry_points.py generates the MPI entry points from the library's mpi.h at configure time.
    depends_on("python@3:", type="build")
    depends_on("mpi")
    # Thread block clusters (the resident kernel) and the CUDA 12 driver interfaces.
    depends_on("cuda@12:", when="+cuda")
    depends_on("opencl", when="+opencl")
    depends_on("googletest", when="+tests")

    conflicts("cuda_arch=none", when="+cuda", msg="name the GPUs to build kernels for, e.g. cuda_arch=90")
    conflicts("+opencl", when="~tests", msg="+opencl builds the OpenCL tests; the backend is always in libgddt")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            self.define_from_variant("GDDT_ENABLE_CUDA", "cuda"),
            self.define_from_variant("GDDT_ENABLE_FORTRAN", "fortran"),
            self.define_from_variant("GDDT_BUILD_TESTS", "tests"),
            # The benchmarks are not installed.
            self.define("GDDT_BUILD_BENCH", False),
            # The tests look for OpenCL's headers and loader; without the variant they must not find
            # one of the system's.
            self.define("CMAKE_DISABLE_FIND_PACKAGE_OpenCL", spec.satisfies("~opencl")),
        ]
        if spec.satisfies("+fortran"):
            args.append(self.define("MPI_Fortran_COMPILER", spec["mpi"].mpifc))
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CUDA_COMPILER", join_path(spec["cuda"].prefix.bin, "nvcc")))
            args.append(self.define("GDDT_CUDA_ARCHITECTURES", list(spec.variants["cuda_arch"].value)))
        return args
