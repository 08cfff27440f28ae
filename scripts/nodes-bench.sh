#!/usr/bin/env bash
# Two GPUs of one machine as two nodes of one GPU each (GDDT_NODE_SPLIT=1), the MPI library kept
# off shared memory so that it moves messages as between machines (docs/usage.md, "Testing a
# multi-node job on one machine"); gddt-bench device:device, one rank per GPU:
#   1. the system Open MPI on its TCP BTL: gddt's staged pipeline against contig-staged, the same
#      packed bytes copied to pinned memory and sent contiguous;
#   2. the CUDA-aware bundle on UCX's TCP transport (UCX_TLS=tcp,self,cuda_copy): gddt's packed
#      device bytes against contig-device; then, as the control, on UCX's shared memory and CUDA IPC
#      (UCX_TLS=sm,self,cuda_copy,cuda_ipc);
#   3. what gddt-tune picks for the chunk on this GPU, and run 1's gddt again with that profile.
# Each table from 1 MiB ends in a PASS or MISS line for gddt >= 90% of the contiguous bandwidth,
# and each run's counters must show no peer-protocol message or CUDA IPC mapping between the nodes.
#   scripts/nodes-bench.sh SYSTEM_BUILD [BUNDLE_BUILD]
# The bundle runs where BUNDLE_BUILD is given and .devdeps/cuda-mpi is there. NODES_BENCH_ARGS
# replaces the benchmark's options, NODES_TIMEOUT (900) bounds each run in seconds; output goes to
# $OUT (default ./nodes-bench-out).
set -uo pipefail
cd "$(dirname "$0")/.."
system_build=${1:?usage: scripts/nodes-bench.sh SYSTEM_BUILD [BUNDLE_BUILD]}
bundle_build=${2:-}
out=${OUT:-$PWD/nodes-bench-out}
mkdir -p "$out"
read -r -a bench_args <<<"${NODES_BENCH_ARGS:---types vector,subarray3d --blocks 4,64,4K --sizes 256K,1M,4M,16M --iterations 30 --warmup 5 --point-time 0.15}"
status=0
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
((gpus >= 2)) || echo "note: $gpus GPU(s): both nodes share GPU 0, and the resident kernel stays off on it"

# verdicts GDDT_CSV REFERENCE_CSV REFERENCE_METHOD: per table, from 1 MiB, gddt's bandwidth (from the
# first file) over the reference method's (from the second); PASS where the worst ratio is >= 90%.
verdicts() {
  awk -F, -v reference="$3" '
    FNR == 1 { file++; next }
    $1 != "device:device" || $6 < 1048576 { next }
    file == 1 && $8 == "gddt" {
      gddt[$2, $6] = $10; why[$2, $6] = $11
      if (!($2 in seen)) { seen[$2]; tables[++table_count] = $2 }
      if (!($6 in seen_size)) { seen_size[$6]; sizes[++size_count] = $6 + 0 }
    }
    file == 2 && $8 == reference { ref[$2, $6] = $10 }
    END {
      for (i = 2; i <= size_count; i++)
        for (j = i; j > 1 && sizes[j - 1] > sizes[j]; j--) { swap = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = swap }
      printf "%-12s %10s %12s %14s %7s\n", "table", "packed", "gddt GB/s", reference " GB/s", "ratio"
      missed = 0
      for (i = 1; i <= table_count; i++) {
        t = tables[i]; worst = ""; at = ""
        for (k = 1; k <= size_count; k++) {
          s = sizes[k]
          if (!((t, s) in gddt)) continue
          g = gddt[t, s]; r = ref[t, s]
          ratio = (g != "" && r != "" && r > 0) ? g / r : -1
          printf "%-12s %10d %12s %14s %7s\n", t, s, g == "" ? why[t, s] : g, r == "" ? "-" : r,
                 ratio < 0 ? "-" : sprintf("%.0f%%", 100 * ratio)
          if (worst == "" || ratio < worst) { worst = ratio; at = s; lack = g == "" ? "gddt " why[t, s] : "no " reference }
        }
        if (worst == "") continue
        met = worst >= 0.9
        missed += !met
        if (worst < 0) printf "MISS %s: %s at %d bytes\n", t, lack, at
        else printf "%s %s: gddt worst %.0f%% of %s, at %d bytes (target >= 90%% from 1 MiB)\n", met ? "PASS" : "MISS", t,
                    100 * worst, reference, at
      }
      if (table_count == 0) { print "MISS no device:device rows from 1 MiB"; missed = 1 }
      exit (missed > 0)
    }' "$1" "$2"
}

# separate LOG: every rank's peer-protocol counters summed (GDDT_STATS=1); PASS where no message took
# the peer protocol and no CUDA IPC mapping was made, while gddt carried messages in the raw format.
separate() {
  awk '/stats: / { sum[$4] += $5 }
    END {
      peer = sum["p2p.peer-inline.sides"] + sum["p2p.peer-ipc.sides"] + sum["p2p.peer-staged.sides"] + sum["peer.markers"]
      raw = sum["p2p.device-bytes.sides"] + sum["p2p.device-staged.sides"] + sum["p2p.host-span.sides"] + sum["p2p.host-staged.sides"]
      ok = peer + sum["peer.ipc.mappings"] + sum["peer.agreed.comms"] == 0 && raw > 0
      printf "%s nodes kept apart: %d peer-protocol sides and markers, %d CUDA IPC mappings, %d agreed communicators, ",
             ok ? "PASS" : "MISS", peer, sum["peer.ipc.mappings"], sum["peer.agreed.comms"]
      printf "%d raw-format sides\n", raw
      exit (!ok)
    }' "$1"
}

# run NAME LAUNCHER...: the benchmark (LAUNCHER ends with it and its options) on two nodes, its
# tables printed.
run() {
  local name=$1 rc=0
  shift
  timeout "${NODES_TIMEOUT:-900}" "$@" --csv "$out/$name.csv" >"$out/$name.txt" 2>&1 || { echo "FAILED: $name"; rc=1; }
  grep -v "stats:" "$out/$name.txt" | sed -n '/^== /,/^gddt\/cpy2d/p'
  return $rc
}

system=(mpiexec --allow-run-as-root -n 2 --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo
        -x GDDT_NODE_SPLIT=1 -x GDDT_STATS=1)
echo "=== system MPI over TCP: gddt's staged pipeline against contig-staged"
run system "${system[@]}" "$system_build/bench/gddt-bench" "${bench_args[@]}" --methods gddt,contig-staged || status=1
verdicts "$out/system.csv" "$out/system.csv" contig-staged || status=1
separate "$out/system.txt" || status=1

if [[ -n $bundle_build && -f .devdeps/cuda-mpi/env.sh ]]; then
  for transports in tcp,self,cuda_copy sm,self,cuda_copy,cuda_ipc; do
    name=bundle-${transports%%,*}
    bundle=(mpiexec --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x UCX_MODULE_DIR --mca pml ucx
            -x UCX_TLS=$transports -x UCX_TCP_LOOPBACK_ENABLE=y --mca opal_common_ucx_tls any
            --mca opal_common_ucx_devices any -x GDDT_NODE_SPLIT=1 -x GDDT_STATS=1)
    echo "=== CUDA-aware bundle, UCX_TLS=$transports: gddt's packed device bytes against contig-device"
    # contig-device in this job: the bundle moves device buffers though its query answers 0.
    (source .devdeps/cuda-mpi/env.sh &&
      run "$name" "${bundle[@]}" "$bundle_build/bench/gddt-bench" "${bench_args[@]}" --methods gddt,contig-device \
        --cuda-aware yes) || status=1
    # The target is for the path between nodes; the control only shows what shared memory gives.
    if ! verdicts "$out/$name.csv" "$out/$name.csv" contig-device && [[ $name == bundle-tcp ]]; then status=1; fi
    separate "$out/$name.txt" || status=1
  done
fi

echo "=== gddt-tune on this GPU (it measures the pack into pinned memory, not the link)"
"$system_build/tools/gddt-tune" --output "$out/profile.conf" | tee "$out/tune.txt" | grep -E "^ +[0-9]|chosen|bytes" || status=1
echo "=== system MPI over TCP with gddt-tune's profile: gddt against run 1's contig-staged"
run system-tuned "${system[@]}" -x GDDT_PROFILE="$out/profile.conf" "$system_build/bench/gddt-bench" "${bench_args[@]}" \
  --methods gddt || status=1
verdicts "$out/system-tuned.csv" "$out/system.csv" contig-staged || status=1
exit $status
