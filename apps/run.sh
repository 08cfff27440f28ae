#!/usr/bin/env bash
# The apps of issue 45 on one MPI stack, both versions of each side by side: Stencil2D (a size
# sweep up to grids that fill an H100), Himeno S, M and L in its three versions (bench/device_api),
# the 3-D halo exchange and the FFT transposes on 2 and 4 ranks (4 ranks share 2 GPUs), and, with
# APPS_PYTHON=1, examples/fft_transpose.py with gddt preloaded. Every program checks its versions'
# results; their rows go to $OUT/apps-<label>.csv, then apps/summarize.py prints the tables with
# the speedups and the targets' PASS/MISS lines, and apps/count_lines.py the lines of
# communication code.
#   apps/run.sh BUILD LAUNCHER...     e.g. apps/run.sh build mpiexec --allow-run-as-root
# The launcher gets -n N; where it is Open MPI's, Himeno runs unbound (--bind-to none: its proxy
# thread needs a core beside the rank's). Environment (lists are space-separated):
#   OUT (./apps-out), APPS_LABEL (the build folder's name): where the CSV goes, the stack's name
#   APPS_QUICK=1       tiny sizes, a few seconds (how to try this on a machine without a GPU,
#                      with GDDT_P2P_HOST=gddt GDDT_COLLECTIVE_HOST=gddt exported)
#   STENCIL_CASES      precision:grid pairs ("float:1x2 double:1x2 float:2x1")
#   STENCIL_SIZES      interior rows = columns of a rank's block ("1024 8192 32768 65536")
#   HIMENO_SIZES (S M L), HIMENO_ITERATIONS (100); HALO_SIZES (64 128 256), HALO_RANKS (2 4);
#   FFT_MIBS (2 16 128 512), FFT_RANKS (2 4); ITERATIONS: overrides every app's iterations
#   APPS_RUN_TIMEOUT (300): seconds a run may take before it is killed and counted failed
# Exits non-zero where a program fails or a check does.
set -uo pipefail
cd "$(dirname "$0")/.."
build=$(cd "$1" && pwd)
shift
launcher=(timeout "${APPS_RUN_TIMEOUT:-300}" "$@")
out=${OUT:-$PWD/apps-out}
label=${APPS_LABEL:-$(basename "$build")}
csv=$out/apps-$label.csv
mkdir -p "$out"
rm -f "$csv"
status=0
open_mpi=false
"$1" --version 2>&1 | grep -q "Open MPI\|OpenRTE" && open_mpi=true

if [[ ${APPS_QUICK:-0} == 1 ]]; then
  : "${STENCIL_SIZES:=64 256}" "${HIMENO_SIZES:=XS}" "${HIMENO_ITERATIONS:=20}" "${HALO_SIZES:=8 16}"
  : "${FFT_MIBS:=0.1 1}" "${ITERATIONS:=10}"
fi
common=(--csv "$csv" --label "$label" --expect-gddt 1)

app() {  # app RANKS ITERATIONS PROGRAM ARGS...
  local ranks=$1 iterations=${ITERATIONS:-$2} program=$3
  shift 3
  local run=$out/last-run.log rc
  "${launcher[@]}" -n "$ranks" "$build/apps/$program" "$@" --iterations "$iterations" "${common[@]}" >"$run" 2>&1
  rc=$?
  cat "$run" >>"$out/$program-$label.log"
  # The table of this run: its title and rows (the log keeps the library's and gddt's messages too).
  grep -E "^(stencil2d|halo3d|fft) |^  " "$run"
  if ((rc != 0)); then
    echo "FAILED ($rc): $program $* on $ranks ranks"
    status=1
  fi
}

echo "=== Stencil2D ($label)"
for stencil_case in ${STENCIL_CASES:-float:1x2 double:1x2 float:2x1}; do
  for size in ${STENCIL_SIZES:-1024 8192 32768 65536}; do
    iterations=100
    ((size >= 16384)) && iterations=20
    app 2 $iterations gddt-app-stencil2d --precision "${stencil_case%%:*}" --grid "${stencil_case#*:}" \
      --rows "$size" --cols "$size"
  done
done

echo "=== Himeno ($label)"
himeno_launcher=("${launcher[@]}" -n 2)
$open_mpi && himeno_launcher+=(--bind-to none)
for size in ${HIMENO_SIZES:-S M L}; do
  log=$out/himeno-$size-$label.log
  HIMENO_SIZE=$size HIMENO_ITERATIONS=${ITERATIONS:-${HIMENO_ITERATIONS:-100}} \
    bench/device_api/himeno_agree.sh "$build/bench" "${himeno_launcher[@]}" >"$log" 2>&1
  case $? in
    0) ;;
    77) echo "himeno $size: skipped (no GPU)" ;;
    *) echo "FAILED: himeno $size"; status=1 ;;
  esac
  grep -E "^himeno " "$log"
  python3 apps/himeno_csv.py "$log" "$size" "$label" >>"$csv"
done

echo "=== 3-D halo exchange ($label)"
for ranks in ${HALO_RANKS:-2 4}; do
  for n in ${HALO_SIZES:-64 128 256}; do
    app "$ranks" 100 gddt-app-halo3d --points 27 --n "$n"
  done
  app "$ranks" 100 gddt-app-halo3d --points 7 --n "$(echo ${HALO_SIZES:-64 128 256} | awk '{print $NF}')"
done

echo "=== FFT pencil transposes ($label)"
for ranks in ${FFT_RANKS:-2 4}; do
  for mib in ${FFT_MIBS:-2 16 128 512}; do
    iterations=20
    [[ ${mib%.*} -ge 128 ]] && iterations=10
    app "$ranks" $iterations gddt-app-fft --mib "$mib"
  done
done

if [[ ${APPS_PYTHON:-0} == 1 ]]; then
  echo "=== FFT transposes from Python, gddt preloaded ($label)"
  preload=(env "LD_PRELOAD=$build/src/libgddt.so")
  $open_mpi && preload=(-x "LD_PRELOAD=$build/src/libgddt.so")
  for ranks in 2 4; do
    "${launcher[@]}" -n "$ranks" "${preload[@]}" "${APPS_PYTHON_INTERPRETER:-python3}" examples/fft_transpose.py 128 \
      2>&1 | grep -E "^(fft_transpose|FAIL|SKIP)" | sort -u
    rc=${PIPESTATUS[0]}
    ((rc == 0 || rc == 77)) || { echo "FAILED ($rc): examples/fft_transpose.py on $ranks ranks"; status=1; }
  done
fi

echo "=== Summary ($label; rows in $csv)"
python3 apps/summarize.py "$csv" || status=1
echo "=== Lines of communication code"
python3 apps/count_lines.py
exit $status
