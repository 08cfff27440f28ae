#!/usr/bin/env bash
# Quick start, part one: installs what is missing, builds gddt, runs the halo demo on two ranks
# (GPU memory where a GPU is present, host memory otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
build=build/demo
cuda_flag=()
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_flag=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER=mpicc.openmpi \
  -DMPI_CXX_COMPILER=mpicxx.openmpi -DGDDT_BUILD_TESTS=OFF -DGDDT_BUILD_BENCH=OFF "${cuda_flag[@]}" >/dev/null
cmake --build "$build" --target gddt-demo gddt-info
"$build/tools/gddt-info" | sed -n '1p;/^MPI/,$p'  # sed reads it all: no SIGPIPE under pipefail
echo
mpiexec.openmpi --allow-run-as-root --oversubscribe -n 2 "$build/examples/gddt-demo" "${1:-128}"
