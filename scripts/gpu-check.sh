#!/usr/bin/env bash
# The GPU-machine check in one command: builds gddt against the system MPI and, when
# .devdeps/cuda-mpi is present, against the CUDA-aware Open MPI bundle; runs every test
# (the GPU ones included), the differential fuzzer on device, managed and pinned memory, the
# demo, and the pack benchmark. Logs go to $OUT (or ./gpu-check-out).
#   bash scripts/gpu-check.sh [tests] [bench] [cudampi]     (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
stages=${*:-tests bench cudampi}
jobs=$(nproc)
status=0
ompi_root_flags=(--allow-run-as-root --oversubscribe)

build() {  # build DIR MPICC MPICXX [extra cmake args]
  local dir=$1 cc=$2 cxx=$3; shift 3
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER="$cc" \
    -DMPI_CXX_COMPILER="$cxx" -DGDDT_CUDA_ARCHITECTURES=90 "$@" >"$dir.configure.log" 2>&1 &&
    cmake --build "$dir" -j "$jobs" >"$dir.build.log" 2>&1 ||
    { echo "BUILD FAILED in $dir"; tail -n 40 "$dir.configure.log" "$dir.build.log"; return 1; }
}

run_suite() {  # run_suite DIR LABEL MPIEXEC
  local dir=$1 label=$2 mpiexec=$3
  echo "=== [$label] ctest"
  (cd "$dir" && ctest --output-on-failure -j 4 2>&1 | tail -n 60) || status=1
  for mem in device managed pinned; do
    for ranks in 1 2; do
      echo "=== [$label] fuzzer --memory $mem, $ranks rank(s)"
      GDDT_PACK_HOST=gddt $mpiexec "${ompi_root_flags[@]}" -n $ranks "$dir/tests/mpi/gddt-fuzz-pack" \
        --memory "$mem" --types 3000 --quiet 2>&1 | tail -n 6 || status=1
    done
  done
  echo "=== [$label] demo"
  $mpiexec "${ompi_root_flags[@]}" -n 2 "$dir/examples/gddt-demo" 128 2>&1 || status=1
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if [[ $stages == *tests* || $stages == *bench* ]]; then
  build build/gpu-sysmpi mpicc mpicxx || exit 1
  build/gpu-sysmpi/tools/gddt-info | head -n 40
fi
if [[ $stages == *tests* ]]; then
  run_suite build/gpu-sysmpi system-openmpi mpiexec 2>&1 | tee "$out/tests-system-mpi.log"
fi
if [[ $stages == *cudampi* && -f .devdeps/cuda-mpi/env.sh ]]; then
  (
    source .devdeps/cuda-mpi/env.sh
    build build/gpu-cudampi "$(command -v mpicc)" "$(command -v mpicxx)" || exit 1
    build/gpu-cudampi/tools/gddt-info | grep -i -E "mpi|cuda" | head -n 10
    run_suite build/gpu-cudampi cuda-aware-openmpi "mpiexec -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx"
  ) 2>&1 | tee "$out/tests-cuda-mpi.log"
fi
if [[ $stages == *bench* ]]; then
  echo "=== pack benchmark"
  mpiexec "${ompi_root_flags[@]}" -n 1 build/gpu-sysmpi/bench/gddt-bench-pack --csv "$out/pack.csv" \
    2>&1 | tee "$out/pack-bench.txt"
fi
grep -h -E "FAILED|WRONG|failed|Error" "$out"/*.log 2>/dev/null | grep -v " 0 failed" | head -n 20
exit $status
