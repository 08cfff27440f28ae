#!/usr/bin/env bash
# The device API's benchmarks on 2 ranks: the ping-pong (host MPI, host-initiated,
# stream-ordered, kernel-initiated) and Himeno in its three versions, their residuals checked
# against each other, and the line counts of the three versions. Tables go to $OUT (default
# ./device-api-bench-out).
#   scripts/device-api-bench.sh [build dir]       (default build/cuda; built here if needed)
# HIMENO_SIZE (XS, S, M, L; M), HIMENO_ITERATIONS (200), PINGPONG_ARGS ("iterations
# repetitions"), MPIEXEC (mpiexec) change what runs.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build/cuda}
out=${OUT:-$PWD/device-api-bench-out}
mkdir -p "$out"
cmake --build "$build" --target gddt-bench-device-pingpong gddt-bench-himeno-host gddt-bench-himeno-stream \
  gddt-bench-himeno-kernel
launcher=(${MPIEXEC:-mpiexec} -n 2)
# Unbound: Open MPI binds each of 2 ranks to one core, which the proxy thread then shares with
# the rank's own thread (docs/usage.md: give each rank a core for its proxy).
if ${MPIEXEC:-mpiexec} --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  launcher+=(--allow-run-as-root --oversubscribe --bind-to none)
fi
status=0

echo "== ping-pong" | tee "$out/pingpong.txt"
"${launcher[@]}" "$build/bench/gddt-bench-device-pingpong" ${PINGPONG_ARGS:-} 2>&1 | tee -a "$out/pingpong.txt" ||
  status=1

size=${HIMENO_SIZE:-M}
iterations=${HIMENO_ITERATIONS:-200}
{
  echo "== himeno $size, $iterations iterations"
  HIMENO_SIZE=$size HIMENO_ITERATIONS=$iterations bench/device_api/himeno_agree.sh "$build/bench" "${launcher[@]}"
} 2>&1 | tee "$out/himeno.txt" || status=1
"${launcher[@]}" "$build/bench/gddt-bench-himeno-stream" "$size" "$iterations" nograph 2>&1 | tee -a "$out/himeno.txt" ||
  status=1
echo "== lines of the three versions (and the header they share)" | tee -a "$out/himeno.txt"
(cd bench/device_api && wc -l himeno_host.cu himeno_stream.cu himeno_kernel.cu himeno_common.cuh) |
  tee -a "$out/himeno.txt"
exit $status
