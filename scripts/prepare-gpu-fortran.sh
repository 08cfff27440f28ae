#!/usr/bin/env bash
# The GPU machine has the MPI library's Fortran bindings but no Fortran compiler, so its
# scripts/gpu-check.sh builds no Fortran programs. This builds them here (gfortran, the CUDA
# toolkit and Open MPI 4.1 needed; no GPU): the Fortran test programs unlinked from gddt (the GPU
# check preloads its own build of gddt) and the Fortran halo example (which finds that build
# through LD_LIBRARY_PATH), into .devdeps/fortran, which the device tool carries with .devdeps.
#   bash scripts/prepare-gpu-fortran.sh
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cmake -S . -B build/cuda-fortran -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDDT_ENABLE_CUDA=ON \
  "-DCMAKE_CUDA_COMPILER=$nvcc" -DGDDT_CUDA_ARCHITECTURES=90 -DMPI_C_COMPILER=mpicc.openmpi \
  -DMPI_CXX_COMPILER=mpicxx.openmpi -DMPI_Fortran_COMPILER=mpif90.openmpi \
  -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.openmpi >/dev/null
programs=(fortran_p2p_mpif_h_unlinked fortran_p2p_use_mpi_unlinked fortran_p2p_f08_unlinked gddt-halo-fortran)
cmake --build build/cuda-fortran -j "$(nproc)" --target "${programs[@]}"
mkdir -p .devdeps/fortran
cp build/cuda-fortran/tests/fortran/fortran_p2p_*_unlinked build/cuda-fortran/examples/gddt-halo-fortran .devdeps/fortran/
ls -l .devdeps/fortran
