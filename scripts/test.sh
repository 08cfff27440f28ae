#!/usr/bin/env bash
# Builds gddt and runs every test in three configurations:
#   openmpi  Open MPI (build/openmpi), with the CUDA backend when nvcc is found
#   mpich    MPICH (build/mpich), likewise
#   asan     Open MPI with AddressSanitizer and UBSan, no CUDA (build/asan)
# Usage: scripts/test.sh [openmpi] [mpich] [asan]   (default: all three)
# Environment: JOBS (parallel compile jobs, default: all cores), TEST_JOBS (ctest -j, default 2).
# Exits non-zero when any configuration fails to configure, build or pass its tests.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
root=$PWD
configs=("$@")
((${#configs[@]})) || configs=(openmpi mpich asan)
jobs=${JOBS:-$(nproc)}
test_jobs=${TEST_JOBS:-2}

# CUDA is built where a compiler is present; the GPU tests skip themselves without a GPU.
nvcc=$(command -v nvcc || true)
[[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
if [[ -n $nvcc ]]; then
  cuda_args=(-DGDDT_ENABLE_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc")
else
  cuda_args=(-DGDDT_ENABLE_CUDA=OFF)
fi

summary=()
failed=0

# run_config NAME MPICC MPICXX MPIFORT MPIEXEC EXCLUDED_TESTS [extra cmake arguments...]
# EXCLUDED_TESTS is a ctest -E regular expression ("" for none).
run_config() {
  local name=$1 mpicc=$2 mpicxx=$3 mpifort=$4 mpiexec=$5 excluded=$6
  shift 6
  local dir=build/$name started=$SECONDS result
  local ctest_args=(--output-on-failure -j "$test_jobs")
  [[ -n $excluded ]] && ctest_args+=(-E "$excluded")
  echo "=== [$name] configure"
  if ! cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DMPI_C_COMPILER=$mpicc" "-DMPI_CXX_COMPILER=$mpicxx" "-DMPI_Fortran_COMPILER=$mpifort" \
      "-DMPIEXEC_EXECUTABLE=$mpiexec" "$@"; then
    result="configure FAILED"
  else
    echo "=== [$name] build"
    if ! cmake --build "$dir" -j "$jobs"; then
      result="build FAILED"
    else
      echo "=== [$name] test"
      local log=$dir/ctest-summary.log
      (cd "$dir" && ctest "${ctest_args[@]}") 2>&1 | tee "$log"
      if ((PIPESTATUS[0] == 0)); then
        result="passed: $(grep -E 'tests passed' "$log" | tail -n 1)"
      else
        result="tests FAILED: $(grep -E 'tests passed' "$log" | tail -n 1)"
      fi
    fi
  fi
  [[ $result == passed* ]] || failed=1
  summary+=("$(printf '%-8s %4ds  %s' "$name" $((SECONDS - started)) "$result")")
}

for config in "${configs[@]}"; do
  case $config in
    openmpi)
      run_config openmpi mpicc.openmpi mpicxx.openmpi mpif90.openmpi /usr/bin/mpiexec.openmpi "" "${cuda_args[@]}"
      ;;
    mpich)
      run_config mpich mpicc.mpich mpicxx.mpich mpifort.mpich /usr/bin/mpiexec.mpich "" "${cuda_args[@]}"
      ;;
    asan)
      # Open MPI's own allocations at MPI_Init are never freed; leak checking would fail every
      # MPI test on the library's leaks, so it is off. UBSan stops at the first report so
      # undefined behaviour fails the test that hit it. install_package builds a program
      # without the sanitizers against the instrumented library, which ASan refuses to load;
      # the other configurations run it.
      ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_config asan mpicc.openmpi mpicxx.openmpi mpif90.openmpi /usr/bin/mpiexec.openmpi '^install_package$' \
        -DGDDT_ENABLE_CUDA=OFF -DGDDT_SANITIZE=address,undefined
      ;;
    *)
      echo "unknown configuration '$config' (openmpi, mpich, asan)" >&2
      exit 2
      ;;
  esac
done

echo
echo "=== summary (CUDA compiler: ${nvcc:-none})"
printf '%s\n' "${summary[@]}"
exit $failed
