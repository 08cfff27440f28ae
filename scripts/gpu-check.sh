#!/usr/bin/env bash
# The GPU-machine check in one command. Builds gddt against the system MPI and, when
# .devdeps/cuda-mpi is present (scripts: ../shared/device/prepare-cuda-mpi.sh), against that
# CUDA-aware Open MPI too; runs the GPU tests (CUDA pack kernels, core GPU tests, the
# differential fuzzer and the point-to-point suite on device, managed, pinned and mixed
# memory) against each, the demo, and the benchmarks. Logs and CSVs go to $OUT (or
# ./gpu-check-out).
#   bash scripts/gpu-check.sh [tests] [fuzz] [bench] [collectives] [fortran] [peers] [staged] [nodes] [opencl] [devapi] [onesided] [apps]
# (default: the first four; tests includes fortran, the Fortran programs on every memory kind)
# fuzz: the differential pack fuzzer with every buffer of a random memory kind, FUZZ_TYPES
# types (default 100000) spread over FUZZ_RANKS ranks (default 4) on each MPI stack, seed printed.
# peers: the point-to-point suite on device, managed, pinned and mixed memory with CUDA IPC on
# (GDDT_IPC=on: the direct plane where a send lends its buffer, else the sender's scratch; one
# rank per GPU where there are two), then the point-to-point benchmark's vector and 3-D subarray cases and the
# halo exchange with the peer protocol and CUDA IPC (GDDT_PEERS=auto GDDT_IPC=on) and with the
# raw format (GDDT_PEERS=off), on each stack, with the device copy as ceiling (cudaMemcpyPeer
# across two GPUs) and the time of each stage of the peer protocol (GDDT_STATS=1).
# staged: staging with CUDA IPC off through the system MPI: the raw format against the contiguous
# staged transfer, then the staged plane (GDDT_P2P_HOST=gddt) in parts of 1 and 4 MiB, with the
# pinned pool's and the plane's counters (GDDT_STATS=1); then the same through the CUDA-aware
# bundle, where the parts go GPU to GPU, against the contiguous device transfer.
# nodes: two GPUs as two nodes of one GPU each (GDDT_NODE_SPLIT=1), the MPI library kept off shared
# memory (scripts/nodes-bench.sh): the staged pipeline against contig-staged through the system MPI
# on TCP, packed device bytes against contig-device through the bundle on UCX's TCP transport (and
# on its shared memory and CUDA IPC as the control), PASS/MISS for gddt >= 90% from 1 MiB, and what
# gddt-tune picks for the chunk.
# opencl: the OpenCL fuzzer, the OpenCL MPI test and the OpenCL pack and point-to-point benchmarks (system MPI) on
# NVIDIA's OpenCL platform and on PoCL, each alone in the ICD loader's view.
# devapi: the device API's benchmarks (scripts/device-api-bench.sh: ping-pong and Himeno) on the
# system MPI with the two ranks' kernels time-sliced on the GPU, then under MPS, which runs them
# side by side, its tests on both stacks (one log per test in devapi-tests-<stack>/, a stuck test's
# thread stacks in its log) and the benchmarks again. DEVAPI_TEST_TIMEOUT (300) bounds a test
# without a time limit of its own and DEVAPI_BENCH_TIMEOUT (240) each benchmark pass, in seconds.
# onesided: the one-sided suite on device, managed, pinned and mixed memory (windows through CUDA
# IPC, and over public copies with GDDT_RMA_IPC=0), then the halo exchange by one-sided
# communication (fence, PSCW, subarray puts into a window over device memory, one contiguous put of
# packed faces) against point-to-point, on each stack.
# apps: the applications of issue 45 (apps/README.md) through apps/run.sh on each stack: Stencil2D
# (def against gddt, a size sweep up to grids that fill an H100), Himeno S, M and L (host-driven,
# stream-ordered, kernel-initiated), the 3-D halo exchange (hand-fused against subarrays by
# point-to-point and MPI_Neighbor_alltoallw) and the FFT pencil transposes (pack kernels +
# MPI_Alltoallv against MPI_Alltoallw) on 2 ranks (one a GPU) and 4 (two a GPU), and
# examples/fft_transpose.py with CuPy arrays (system MPI); tables with speedups, the targets'
# PASS/MISS lines and the lines of communication code; CSVs $OUT/apps-<stack>.csv for
# apps/plot_apps.py. Run alone, it builds only what it runs. APPS_STACKS ("system-mpi cuda-mpi")
# picks the stacks; apps/run.sh's variables (APPS_QUICK, STENCIL_SIZES, ...) pass through.
# PACK_BENCH_ARGS and P2P_BENCH_ARGS pass options to the pack and point-to-point benchmarks
# (default: full sweeps); the halo exchange benchmark runs with its defaults. GPU_CHECK_TARGETS
# builds only the targets named (default: all).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
stages=${*:-tests fuzz bench collectives}
# The apps stage alone needs gddt, the apps and Himeno only (and gddt-info, printed below).
[[ $stages == apps ]] && : "${GPU_CHECK_TARGETS:=gddt gddt-info gddt-apps}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The random-type point-to-point test on host memory too: the time to compare with.
gpu_tests='cuda|Gpu|device|managed|pinned|mixed|random_types|resident'
status=0

build() {  # build DIR JOBS [cmake args]
  local dir=$1 jobs=$2
  shift 2
  { cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDDT_CUDA_ARCHITECTURES=90 "$@" &&
    cmake --build "$dir" -j "$jobs" ${GPU_CHECK_TARGETS:+--target $GPU_CHECK_TARGETS}; } >"$dir.log" 2>&1 || { echo "BUILD FAILED: $dir"; tail -n 40 "$dir.log"; return 1; }
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
mkdir -p build
build build/gpu-sysmpi "$(nproc)" -DMPI_C_COMPILER=mpicc -DMPI_CXX_COMPILER=mpicxx &
sys_build=$!
if [[ -f .devdeps/cuda-mpi/env.sh ]]; then
  (source .devdeps/cuda-mpi/env.sh &&
    build build/gpu-cudampi "$(nproc)" "-DMPI_C_COMPILER=$(command -v mpicc)" \
      "-DMPI_CXX_COMPILER=$(command -v mpicxx)" "-DMPIEXEC_EXECUTABLE=$(command -v mpiexec)" \
      "-DMPIEXEC_PREFLAGS=-x;LD_LIBRARY_PATH;-x;UCX_MODULE_DIR;--mca;pml;ucx") &
  cuda_build=$!
fi
wait $sys_build || exit 1
cuda_built=false
if [[ -n ${cuda_build:-} ]] && wait $cuda_build; then cuda_built=true; fi
build/gpu-sysmpi/tools/gddt-info | sed -n '/^MPI/,$p'

# The Fortran programs on every memory kind, through the system MPI (the bundle has no Fortran layer).
fortran_callers() {
  echo "=== Fortran callers on every memory kind (system MPI; the bundle has no Fortran layer)"
  # Programs built here, or, where this machine has no Fortran compiler, built on one that has by
  # scripts/prepare-gpu-fortran.sh into .devdeps/fortran (unlinked: gddt preloaded; the example
  # finds this build's libgddt through LD_LIBRARY_PATH).
  # Host-memory kinds (pinned) are routed through gddt as in CI, so its counters show the work.
  fortran_dir=build/gpu-sysmpi/tests/fortran example_dir=build/gpu-sysmpi/examples suffix=""
  fortran_env=(-x GDDT_P2P_HOST=gddt -x GDDT_PACK_HOST=gddt -x GDDT_COLLECTIVE_HOST=gddt)
  if [[ ! -x $fortran_dir/fortran_p2p_mpif_h && -d .devdeps/fortran ]]; then
    fortran_dir=.devdeps/fortran example_dir=.devdeps/fortran suffix=_unlinked
    fortran_env+=(-x "LD_PRELOAD=$PWD/build/gpu-sysmpi/src/libgddt.so")
  fi
  for program in "$fortran_dir"/fortran_p2p_{mpif_h,use_mpi,f08}$suffix; do
    [[ -x $program ]] || { echo "not built: $program (no Fortran compiler or bindings)"; continue; }
    for memory in device managed pinned; do
      local log="$out/fortran-$(basename "$program")-$memory.log"
      timeout 120 mpiexec "${fortran_env[@]}" -n 2 "$program" "$memory" >"$log" 2>&1 ||
        { echo "FAILED: $program $memory"; tail -n 4 "$log"; status=1; }
      grep -E "^(FAIL|fortran|SKIP)" "$log" | head -n 5
    done
  done
  if [[ -x $example_dir/gddt-halo-fortran ]]; then
    timeout 120 env LD_LIBRARY_PATH="$PWD/build/gpu-sysmpi/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      mpiexec -x LD_LIBRARY_PATH -n 2 \
      "$example_dir/gddt-halo-fortran" 2>&1 | tail -n 1 || status=1
  fi
}

if [[ $stages == *tests* ]]; then
  echo "=== system Open MPI: GPU tests"
  (cd build/gpu-sysmpi && ctest -j 4 --timeout 300 -R "$gpu_tests" --output-on-failure) >"$out/tests-system-mpi.log" 2>&1 || status=1
  grep -E "tests passed|\*\*\*|fuzz: [0-9]+ passed" "$out/tests-system-mpi.log" | tail -n 25
  echo "=== demo"
  mpiexec -n 2 build/gpu-sysmpi/examples/gddt-demo 256 2>&1 | tail -n 8
  fortran_callers
  if $cuda_built; then
    echo "=== CUDA-aware Open MPI (bundle): GPU tests"
    (source .devdeps/cuda-mpi/env.sh && build/gpu-cudampi/tools/gddt-info | grep -A1 "^MPI" &&
      cd build/gpu-cudampi && ctest -j 4 --timeout 300 -R "$gpu_tests" --output-on-failure) \
      >"$out/tests-cuda-mpi.log" 2>&1 || status=1
    grep -E "CUDA-aware|tests passed|\*\*\*|fuzz: [0-9]+ passed" "$out/tests-cuda-mpi.log" | tail -n 25
  fi
fi
[[ $stages == *fortran* && $stages != *tests* ]] && fortran_callers
if [[ $stages == *fuzz* ]]; then
  fuzz() {  # fuzz NAME BUILD LAUNCHER...
    local name=$1 dir=$2 rc=0
    shift 2
    echo "=== differential fuzzer, mixed memory ($name)"
    "$@" "$dir/tests/mpi/gddt-fuzz-pack" --types "${FUZZ_TYPES:-100000}" --memory mixed --quiet \
      >"$out/fuzz-$name.log" 2>&1 || rc=1
    # A fuzzer that could not run here (no GPU) says so and exits 0: on a GPU machine that fails.
    grep -q "^fuzz: skipped:" "$out/fuzz-$name.log" && rc=1
    grep -E "^fuzz: (seed|skipped|[0-9]+ passed)|FAIL" "$out/fuzz-$name.log" | head -n 12
    return $rc
  }
  ranks=${FUZZ_RANKS:-4}
  fuzz system-mpi build/gpu-sysmpi mpiexec --allow-run-as-root -n "$ranks" env GDDT_PACK_HOST=gddt || status=1
  if $cuda_built; then
    (source .devdeps/cuda-mpi/env.sh &&
      fuzz cuda-mpi build/gpu-cudampi mpiexec --allow-run-as-root -n "$ranks" -x LD_LIBRARY_PATH -x UCX_MODULE_DIR \
        --mca pml ucx env GDDT_PACK_HOST=gddt) || status=1
  fi
fi
if [[ $stages == *peers* ]]; then
  # peer_bench NAME BUILD LAUNCHER...
  peer_bench() {
    local name=$1 dir=$2 rc=0
    shift 2
    echo "=== point-to-point suite on GPU memory ($name)"
    (cd "$dir" && GDDT_IPC=on ctest -j 4 --timeout 240 -R '^p2p_.*_(device|managed|pinned|mixed)_' --output-on-failure) \
      >"$out/peers-tests-$name.log" 2>&1 || rc=1
    grep -E "tests passed|\*\*\*|Failed|Timeout" "$out/peers-tests-$name.log" | tail -n 12
    for peers in auto off; do
      echo "=== peer protocol $peers ($name)"
      "$@" -x GDDT_PEERS=$peers -x GDDT_IPC=on -x GDDT_STATS=1 "$dir/bench/gddt-bench" --types vector,subarray3d --blocks 4,64 \
        --sizes 16,256,4K,64K,1M,4M --iterations 40 --warmup 5 --methods gddt,contig-device,contig-staged,d2d-copy \
        --child-launcher "$* -x GDDT_PEERS=$peers -x GDDT_IPC=on" --csv "$out/peers-$peers-$name.csv" \
        >"$out/peers-$peers-$name.txt" 2>&1 || rc=1
      grep -v "stats:" "$out/peers-$peers-$name.txt" | tail -n 45
      # Every rank's counters of the peer protocol, summed over the benchmark's processes.
      awk '/stats: (p2p.peer|peer\.)/ { sum[$4] += $5 } END { for (n in sum) print "  " n, sum[n] }' \
        "$out/peers-$peers-$name.txt" | sort
      echo "=== halo exchange, peer protocol $peers ($name)"
      "$@" -x GDDT_PEERS=$peers -x GDDT_IPC=on "$dir/bench/gddt-bench-halo" 2>&1 | tail -n 12 || rc=1
    done
    echo "=== host 8-byte ping-pong without and with gddt ($name)"
    "$@" "$dir/bench/gddt-bench-nolink" --host-pingpong 2>&1 | tail -n 1
    "$@" -x LD_PRELOAD="$PWD/$dir/src/libgddt.so" "$dir/bench/gddt-bench-nolink" --host-pingpong 2>&1 | tail -n 1
    return $rc
  }
  peer_bench system-mpi build/gpu-sysmpi mpiexec --allow-run-as-root -n 2 || status=1
  if [[ -f .devdeps/cuda-mpi/env.sh ]]; then
    (source .devdeps/cuda-mpi/env.sh &&
      peer_bench cuda-mpi build/gpu-cudampi mpiexec -n 2 -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx) || status=1
  fi
fi
if [[ $stages == *staged* ]]; then
  staged_args=(--types vector,subarray3d --blocks 4,64 --sizes 1M,4M,16M --iterations 30 --warmup 5 --point-time 0.15)
  counters() { awk '/stats: (pool|p2p|peer\.)/ { sum[$4] += $5 } END { for (n in sum) print "  " n, sum[n] }' "$1" | sort; }
  echo "=== staging with CUDA IPC off: raw format and contig-staged (system MPI)"
  mpiexec --allow-run-as-root -n 2 -x GDDT_IPC=off -x GDDT_STATS=1 build/gpu-sysmpi/bench/gddt-bench "${staged_args[@]}" \
    --methods gddt,contig-staged,d2d-copy --csv "$out/staged-raw.csv" >"$out/staged-raw.txt" 2>&1 || status=1
  grep -v "stats:" "$out/staged-raw.txt" | sed -n '/^== /,/^gddt\/cpy2d/p'
  counters "$out/staged-raw.txt"
  for part in 1M 4M; do
    echo "=== staged plane in parts of $part (system MPI)"
    mpiexec --allow-run-as-root -n 2 -x GDDT_IPC=off -x GDDT_P2P_HOST=gddt -x GDDT_STAGING_CHUNK=$part -x GDDT_STATS=1 \
      build/gpu-sysmpi/bench/gddt-bench "${staged_args[@]}" --methods gddt --csv "$out/staged-$part.csv" \
      >"$out/staged-$part.txt" 2>&1 || status=1
    grep -v "stats:" "$out/staged-$part.txt" | sed -n '/^== /,/^gddt\/cpy2d/p'
    counters "$out/staged-$part.txt"
  done
  if $cuda_built; then
    # Through a CUDA-aware library the staged plane's parts go GPU to GPU: the raw format and the
    # contiguous device transfer are its baselines.
    (source .devdeps/cuda-mpi/env.sh
      bundle=(mpiexec -n 2 -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx -x GDDT_IPC=off -x GDDT_STATS=1)
      echo "=== staging with CUDA IPC off: raw format and contig-device (CUDA-aware bundle)"
      "${bundle[@]}" build/gpu-cudampi/bench/gddt-bench "${staged_args[@]}" --methods gddt,contig-device,d2d-copy \
        --csv "$out/staged-raw-cuda.csv" >"$out/staged-raw-cuda.txt" 2>&1 || exit 1
      grep -v "stats:" "$out/staged-raw-cuda.txt" | sed -n '/^== /,/^gddt\/cpy2d/p'
      for part in 1M 4M; do
        echo "=== staged plane in parts of $part, GPU to GPU (CUDA-aware bundle)"
        "${bundle[@]}" -x GDDT_P2P_HOST=gddt -x GDDT_STAGING_CHUNK=$part build/gpu-cudampi/bench/gddt-bench \
          "${staged_args[@]}" --methods gddt --csv "$out/staged-cuda-$part.csv" >"$out/staged-cuda-$part.txt" 2>&1 || exit 1
        grep -v "stats:" "$out/staged-cuda-$part.txt" | sed -n '/^== /,/^gddt\/cpy2d/p'
        counters "$out/staged-cuda-$part.txt"
      done) || status=1
  fi
fi
if [[ $stages == *nodes* ]]; then
  echo "=== one machine as two nodes of one GPU each"
  OUT=$out/nodes bash scripts/nodes-bench.sh build/gpu-sysmpi $($cuda_built && echo build/gpu-cudampi) || status=1
fi

if [[ $stages == *bench* ]]; then
  echo "=== how soon the host learns that a small kernel finished (us)"
  build/gpu-sysmpi/bench/completion_probe || status=1
  profile=build/gpu-sysmpi/bench/libcuda_api_profile.so
  if [[ -f $profile ]]; then
    # Issue 44.6's stage budget: each rank's CUDA calls and the GPU's time a 4 MiB message.
    for type in vector subarray3d; do
      echo "=== CUDA calls by thread and GPU time, 4 MiB $type messages, both ranks on GPU 0 (CUPTI)"
      mpiexec -n 2 -x CUDA_VISIBLE_DEVICES=0 -x CUDA_INJECTION64_PATH="$PWD/$profile" -x CUDA_API_PROFILE_GPU=1 \
        build/gpu-sysmpi/bench/gddt-bench --types $type --blocks 4 --sizes 4M --tests bandwidth --iterations 30 \
        --warmup 5 --point-time 0.1 --methods gddt >"$out/cuda-profile-$type.txt" 2>&1 || status=1
      grep -E '^ +4M |cuda_api_profile|thread|Synchronize|LaunchKernel|GPU:|kernel' "$out/cuda-profile-$type.txt" | cut -c1-120
    done
  fi
  echo "=== 44.6's layouts at 4 MiB on GPU 0: the simplest kernels, gddt's and the copy (what the sectors allow)"
  build/gpu-sysmpi/bench/sector_probe || status=1
  echo "=== a small window by each way the CUDA backend moves it, and a piece table's upload (us)"
  build/gpu-sysmpi/bench/resident_probe || status=1
  echo "=== pack benchmark"
  mpiexec -n 1 build/gpu-sysmpi/bench/gddt-bench-pack ${PACK_BENCH_ARGS:-} --csv "$out/pack.csv" >"$out/pack-bench.txt" 2>&1 || status=1
  tail -n 60 "$out/pack-bench.txt"
  # p2p_bench NAME BUILD LAUNCHER...: the point-to-point benchmark and the host ping-pong
  # without and with gddt preloaded; one rank per GPU where there are two.
  p2p_bench() {
    local name=$1 dir=$2 rc=0
    shift 2
    echo "=== point-to-point benchmark ($name)"
    "$@" "$dir/bench/gddt-bench" ${P2P_BENCH_ARGS:-} --child-launcher "$*" --csv "$out/p2p-$name.csv" \
      >"$out/p2p-bench-$name.txt" 2>&1 || rc=1
    grep -A14 -E "^Targets" "$out/p2p-bench-$name.txt"
    echo "=== host 8-byte ping-pong without and with gddt ($name)"
    "$@" "$dir/bench/gddt-bench-nolink" --host-pingpong 2>&1 | tail -n 1
    "$@" -x LD_PRELOAD="$PWD/$dir/src/libgddt.so" "$dir/bench/gddt-bench-nolink" --host-pingpong 2>&1 | tail -n 1
    echo "=== how many messages the MPI library alone takes to settle ($name)"
    "$@" "$dir/bench/gddt-bench-settling" 4096 pinned 2>&1 | tail -n 1
    return $rc
  }
  # halo_bench NAME BUILD LAUNCHER...: the halo exchange of six device faces, with the packs
  # of messages posted together sharing launches and with one launch each.
  halo_bench() {
    local name=$1 dir=$2 sets
    shift 2
    for sets in 1 0; do
      echo "=== halo exchange ($name, GDDT_PACK_SETS=$sets)"
      "$@" -x GDDT_PACK_SETS=$sets "$dir/bench/gddt-bench-halo" || return 1
    done
  }
  p2p_bench system-mpi build/gpu-sysmpi mpiexec --allow-run-as-root -n 2 || status=1
  halo_bench system-mpi build/gpu-sysmpi mpiexec --allow-run-as-root -n 2 || status=1
  if $cuda_built; then
    bundle=(mpiexec --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx)
    (source .devdeps/cuda-mpi/env.sh && p2p_bench cuda-mpi build/gpu-cudampi "${bundle[@]}") || status=1
    (source .devdeps/cuda-mpi/env.sh && halo_bench cuda-mpi build/gpu-cudampi "${bundle[@]}") || status=1
  fi
fi

# collectives: the FFT transpose (MPI_Alltoallw of subarrays) and MPI_Allreduce on device buffers
# against the user's workaround, and a 26-neighbour halo by MPI_Neighbor_alltoallw against
# point-to-point, two ranks on the GPU.
if [[ $stages == *collectives* ]]; then
  echo "=== collectives (system MPI)"
  mpiexec --allow-run-as-root -n 2 build/gpu-sysmpi/bench/gddt-bench-collectives 2>&1 | tee "$out/collectives-system-mpi.txt" || status=1
  mpiexec --allow-run-as-root -n 2 build/gpu-sysmpi/bench/gddt-bench-neighbor-halo 2>&1 | tee -a "$out/collectives-system-mpi.txt" || status=1
  if $cuda_built; then
    echo "=== collectives (CUDA-aware bundle)"
    (source .devdeps/cuda-mpi/env.sh &&
      mpiexec --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx \
        build/gpu-cudampi/bench/gddt-bench-collectives 2>&1 | tee "$out/collectives-cuda-mpi.txt" &&
      mpiexec --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx \
        build/gpu-cudampi/bench/gddt-bench-neighbor-halo 2>&1 | tee -a "$out/collectives-cuda-mpi.txt") || status=1
  fi
fi
if [[ $stages == *onesided* ]]; then
  # The system MPI's default one-sided component (osc/ucx) makes no window on the GPU machine, and
  # osc/pt2pt hangs; osc/rdma over shared memory with CMA does (docs/usage.md, library faults).
  echo "=== one-sided suite on GPU memory: windows through CUDA IPC (default) and public copies (system MPI)"
  (cd build/gpu-sysmpi && OMPI_MCA_pml=ob1 OMPI_MCA_osc=rdma OMPI_MCA_btl_vader_single_copy_mechanism=cma \
    ctest -j 2 --timeout 300 -R '^onesided_.*(device|managed|pinned|mixed)' --output-on-failure) \
    >"$out/onesided-tests-system-mpi.log" 2>&1 || status=1
  grep -E "tests passed|\*\*\*|Failed|Skipped" "$out/onesided-tests-system-mpi.log" | tail -n 12
  if $cuda_built; then
    echo "=== one-sided suite on GPU memory (CUDA-aware bundle)"
    (source .devdeps/cuda-mpi/env.sh && cd build/gpu-cudampi &&
      ctest -j 2 --timeout 300 -R '^onesided_.*(device|managed|pinned|mixed)' --output-on-failure) \
      >"$out/onesided-tests-cuda-mpi.log" 2>&1 || status=1
    grep -E "tests passed|\*\*\*|Failed|Skipped" "$out/onesided-tests-cuda-mpi.log" | tail -n 12
  fi
  echo "=== one-sided halo exchange (system MPI)"
  mpiexec --allow-run-as-root -n 2 --mca pml ob1 --mca osc rdma --mca btl_vader_single_copy_mechanism cma \
    build/gpu-sysmpi/bench/gddt-bench-onesided-halo 2>&1 | tee "$out/onesided-system-mpi.txt" || status=1
  if $cuda_built; then
    echo "=== one-sided halo exchange (CUDA-aware bundle)"
    (source .devdeps/cuda-mpi/env.sh &&
      mpiexec --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx \
        build/gpu-cudampi/bench/gddt-bench-onesided-halo 2>&1 | tee "$out/onesided-cuda-mpi.txt") || status=1
  fi
fi
if [[ $stages == *devapi* ]]; then
  echo "=== device API benchmarks, kernels of the two ranks time-sliced (system MPI)"
  OUT=$out/devapi-timesliced timeout ${DEVAPI_BENCH_TIMEOUT:-240} bash scripts/device-api-bench.sh build/gpu-sysmpi 2>&1 | tail -n 60 || status=1
  mps=false
  if command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
    nvidia-cuda-mps-control -d && mps=true
  fi
  # One log per test; a test stuck past its limit prints every thread's stack (scripts/run-case.sh).
  echo "=== device API tests (system MPI$($mps && echo ', under MPS'))"
  python3 scripts/run-ctest-cases.py build/gpu-sysmpi "$out/devapi-tests-system-mpi" -R device_api \
    --limit ${DEVAPI_TEST_TIMEOUT:-300} || status=1
  if $cuda_built; then
    echo "=== device API tests (CUDA-aware bundle$($mps && echo ', under MPS'))"
    (source .devdeps/cuda-mpi/env.sh &&
      python3 scripts/run-ctest-cases.py build/gpu-cudampi "$out/devapi-tests-cuda-mpi" -R device_api \
        --limit ${DEVAPI_TEST_TIMEOUT:-300}) || status=1
  fi
  if $mps; then
    echo "=== device API benchmarks under MPS (system MPI)"
    OUT=$out/devapi-mps timeout ${DEVAPI_BENCH_TIMEOUT:-240} bash scripts/device-api-bench.sh build/gpu-sysmpi 2>&1 | tail -n 60 || status=1
    echo quit | nvidia-cuda-mps-control
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  fi
fi
if [[ $stages == *apps* ]]; then
  for stack in ${APPS_STACKS:-system-mpi cuda-mpi}; do
    if [[ $stack == system-mpi ]]; then
      echo "=== apps (system MPI)"
      APPS_LABEL=system-mpi APPS_PYTHON=1 OUT=$out bash apps/run.sh build/gpu-sysmpi mpiexec --allow-run-as-root 2>&1 |
        tee "$out/apps-system-mpi.txt" || status=1
    elif $cuda_built; then
      # gddt finds the bundle CUDA-aware through its UCX transport, where MPIX_Query_cuda_support
      # may answer 0: the hand-written versions are told so too, to send from device memory.
      echo "=== apps (CUDA-aware bundle)"
      (source .devdeps/cuda-mpi/env.sh &&
        APPS_LABEL=cuda-mpi OUT=$out bash apps/run.sh build/gpu-cudampi mpiexec --allow-run-as-root -x LD_LIBRARY_PATH \
          -x UCX_MODULE_DIR --mca pml ucx -x GDDT_MPI_CUDA_AWARE=yes 2>&1 | tee "$out/apps-cuda-mpi.txt") || status=1
    fi
  done
fi
if [[ $stages == *opencl* ]]; then
  # NVIDIA's driver ships its OpenCL library without an ICD file here; each platform gets a
  # vendors folder of its own so that the first platform the programs see is the one named.
  for platform in nvidia pocl; do
    vendors=$(mktemp -d)
    case $platform in
      nvidia) echo libnvidia-opencl.so.1 >"$vendors/nvidia.icd" ;;
      pocl) cp /etc/OpenCL/vendors/pocl.icd "$vendors/" ;;
    esac
    echo "=== OpenCL on $platform"
    (export OCL_ICD_VENDORS=$vendors OCL_ICD_FILENAMES=$(cat "$vendors"/*.icd)
      build/gpu-sysmpi/tools/gddt-info | grep -A3 -i opencl | head -n 8
      timeout 900 mpiexec --allow-run-as-root -n 2 build/gpu-sysmpi/tests/opencl/gddt-fuzz-opencl --types 6200 --seed 25 \
        >"$out/opencl-fuzz-$platform.txt" 2>&1; echo "fuzz rc=$?"; tail -n 3 "$out/opencl-fuzz-$platform.txt"
      timeout 300 mpiexec --allow-run-as-root -n 2 build/gpu-sysmpi/tests/opencl/test_opencl_mpi \
        >"$out/opencl-mpi-$platform.txt" 2>&1; echo "mpi test rc=$?"; tail -n 3 "$out/opencl-mpi-$platform.txt"
      timeout 600 mpiexec --allow-run-as-root -n 1 -x GDDT_LOG_LEVEL=debug build/gpu-sysmpi/bench/gddt-bench-opencl-pack \
        >"$out/opencl-pack-$platform.txt" 2>&1; echo "bench rc=$?"
      grep -v "gddt.*debug" "$out/opencl-pack-$platform.txt" | tail -n 40; grep -m 5 "OpenCL:" "$out/opencl-pack-$platform.txt"
      timeout 600 mpiexec --allow-run-as-root -n 2 build/gpu-sysmpi/bench/gddt-bench-opencl-p2p \
        >"$out/opencl-p2p-$platform.txt" 2>&1; echo "p2p bench rc=$?"; cat "$out/opencl-p2p-$platform.txt") || status=1
  done
fi
exit $status
