// The resident kernel (resident.hpp, resident_ring.cuh). On GPUs with thread block clusters it
// is one cluster of GDDT_RESIDENT_BLOCKS blocks, one multiprocessor each: block 0 polls the ring
// and moves a window that one block moves quickly by itself; the others sleep in the cluster's
// hardware barrier until it has a larger job, read the job from its shared memory, and move their
// share of the window. Followers that polled device memory instead cost a job more than the
// extra blocks saved (performance.md).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "pack/cuda/kernels.cuh"
#include "pack/cuda/resident_ring.cuh"

namespace gddt::pack::cuda_impl {
namespace {

__device__ __forceinline__ std::uint64_t load_relaxed_system(const std::uint64_t* at) {
  unsigned long long value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(at) : "memory");
  return value;
}

__device__ __forceinline__ std::uint64_t load_acquire_system(const std::uint64_t* at) {
  unsigned long long value;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(at) : "memory");
  return value;
}

__device__ __forceinline__ void store_release_system(std::uint64_t* at, std::uint64_t value) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(at), "l"(static_cast<unsigned long long>(value)) : "memory");
}

__device__ __forceinline__ std::uint64_t nanoseconds() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// Warp 0: copies job `next` into `job` once every cell of its slot carries its stamp and returns
// true; false when the kernel should exit instead.
__device__ bool wait_for_job(Ring* ring, std::uint64_t next, Job* job) {
  const unsigned lane = threadIdx.x;
  const std::uint32_t stamp = stamp_of(next);
  const std::uint64_t* cells = ring->slots[next % kJobSlots].cells;
  const std::uint64_t idle = *reinterpret_cast<volatile std::uint64_t*>(&ring->idle_ns);
  const std::uint64_t since = nanoseconds();
  for (;;) {
    // Read with the cells rather than after them, so that a poll costs one trip over the bus
    // and not two: a job posted meanwhile is seen that much sooner.
    const std::uint32_t stop = lane == 0 ? *reinterpret_cast<volatile std::uint32_t*>(&ring->stop) : 0u;
    std::uint32_t words[kCellsPerLane];
    bool stamped = true;
    GDDT_UNROLL
    for (int k = 0; k < kCellsPerLane; ++k) {
      const std::uint64_t cell = load_relaxed_system(cells + lane + k * kWarp);
      words[k] = static_cast<std::uint32_t>(cell);
      stamped = stamped && static_cast<std::uint32_t>(cell >> 32) == stamp;
    }
    if (__all_sync(0xffffffffu, stamped)) {
      auto* out = reinterpret_cast<std::uint32_t*>(job);
      GDDT_UNROLL
      for (int k = 0; k < kCellsPerLane; ++k) {
        const unsigned index = lane + static_cast<unsigned>(k * kWarp);
        if (index < sizeof(Job) / 4) out[index] = words[k];
      }
      // The host wrote the job's data (a received message, say) before its cells: acquire it.
      asm volatile("fence.acq_rel.sys;" ::: "memory");
      return true;
    }
    bool quit = false;
    if (lane == 0) quit = stop != 0 || nanoseconds() - since > idle;
    if (__shfl_sync(0xffffffffu, quit, 0)) return false;
  }
}

// Thread 0: whether the word `job` waits for reached its value within kFlagPatienceNs.
__device__ bool flag_reached(const Job& job) {
  const auto* at = reinterpret_cast<const std::uint64_t*>(job.wait_at);
  const std::uint64_t since = nanoseconds();
  while (load_acquire_system(at) < job.wait_value) {
    if (nanoseconds() - since > kFlagPatienceNs) return false;
  }
  return true;
}

template <int W, bool kUnpack>
__device__ void run_width(const Job& job, BlockShare share, uint4* shared_table) {
  if (share.block >= share.blocks) return;  // a block this job does not need
  if (job.kind == JobKind::kStrided) {
    const auto& a = *reinterpret_cast<const StridedArgs<std::uint32_t>*>(job.args);
    move_words<W, kWordsPerThread<W>, kUnpack, kResidentThreads, Reads::kFetchAgain>(
        a.window, share, [&a](std::uint32_t word) { return strided_offset<kMaxWordDims>(a, word); });
  } else {
    const auto& a = *reinterpret_cast<const BlockListArgs<std::uint32_t>*>(job.args);
    const PieceTable table = table_in_shared<kResidentThreads, Reads::kFetchAgain>(a.table, shared_table);
    move_words<W, kBlockListWordsPerThread, kUnpack, kResidentThreads, Reads::kFetchAgain>(
        a.window, share, [&a, &table](std::uint32_t word) { return block_list_offset(a, table, word * W); });
  }
}

template <bool kUnpack>
__device__ void run(const Job& job, BlockShare share, uint4* shared_table) {
  switch (job.width) {
    case 16: return run_width<16, kUnpack>(job, share, shared_table);
    case 8: return run_width<8, kUnpack>(job, share, shared_table);
    case 4: return run_width<4, kUnpack>(job, share, shared_table);
    case 2: return run_width<2, kUnpack>(job, share, shared_table);
    default: return run_width<1, kUnpack>(job, share, shared_table);
  }
}

}  // namespace

__global__ void __launch_bounds__(kResidentThreads, 1) resident_kernel(Ring* ring, std::uint64_t next) {
  __shared__ Job job;
  __shared__ uint4 shared_table[kMaxSharedTableBytes / sizeof(uint4)];
  __shared__ bool exit_now;
  __shared__ bool gave_up;  // the leader's job waited for its word in vain: nothing is moved
  const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const unsigned cluster_blocks = cluster.num_blocks();
  const unsigned rank = cluster.block_rank();
  if (rank == 0 && threadIdx.x == 0) {
    const std::uint64_t exited = *reinterpret_cast<volatile std::uint64_t*>(&ring->exited_ns);
    ring->restart_gap_ns = exited == 0 ? ~std::uint64_t{0} : nanoseconds() - exited;
  }
  for (;;) {
    // The leader (block 0) takes each job; one that needs a single block it moves alone, while
    // the others stay in the cluster barrier.
    bool together = true;
    if (rank == 0) {
      if (threadIdx.x < kWarp) {
        const bool found = wait_for_job(ring, next, &job);
        if (threadIdx.x == 0) exit_now = !found;
      }
      __syncthreads();
      if (!exit_now && job.wait_at != 0) {
        if (threadIdx.x == 0) gave_up = !flag_reached(job);
        __syncthreads();  // the block reads what the other process wrote before the word only after it
      } else {
        // Every thread writes it: one thread's write would race the others' reads of the last
        // job's value, with no barrier between them on this branch.
        gave_up = false;
      }
      together = cluster_blocks > 1 && (exit_now || (job.blocks > 1 && !gave_up));
    }
    if (together) {
      cluster.sync();
      if (rank != 0) {
        // The leader leaves `job` alone until every block has passed the barrier after the job.
        const Job* posted = cluster.map_shared_rank(&job, 0);
        for (unsigned i = threadIdx.x; i < sizeof(Job) / 4; i += kResidentThreads) {
          reinterpret_cast<std::uint32_t*>(&job)[i] = reinterpret_cast<const std::uint32_t*>(posted)[i];
        }
        if (threadIdx.x == 0) exit_now = *cluster.map_shared_rank(&exit_now, 0);
        __syncthreads();
      }
    }
    if (exit_now) break;
    const BlockShare share{together ? min(job.blocks, cluster_blocks) : 1u, rank};
    const bool moves = together || !gave_up;  // followers take only jobs whose wait succeeded
    if (moves && job.unpack != 0) {
      run<true>(job, share, shared_table);
    } else if (moves) {
      run<false>(job, share, shared_table);
    }
    // Every thread's bytes are written, and nobody still reads `job`. The barriers make them
    // thread 0's of block 0, whose release stores below are cumulative: whoever acquires `done`
    // or the job's signal sees the whole window (a fence of its own cost each job 0.6-0.7 us on
    // an H200, resident_probe).
    __syncthreads();
    if (together) cluster.sync();
    ++next;
    if (rank == 0 && threadIdx.x == 0) {
      if (!moves) {
        ring->gave_up = next;
      } else if (job.signal_at != 0) {
        store_release_system(reinterpret_cast<std::uint64_t*>(job.signal_at), job.signal_value);
      }
      store_release_system(&ring->done, next);
    }
  }
  if (cluster_blocks > 1) cluster.sync();  // no block exits while another still reads its shared memory
  if (rank == 0 && threadIdx.x == 0) {
    ring->exited_ns = *reinterpret_cast<volatile std::uint32_t*>(&ring->stop) != 0 ? 0 : nanoseconds();
    __threadfence_system();
    *reinterpret_cast<volatile std::uint32_t*>(&ring->running) = 0;
  }
}

__global__ void wait_flag_kernel(const std::uint64_t* at, std::uint64_t value) {
  while (load_acquire_system(at) < value) __nanosleep(256);
}

}  // namespace gddt::pack::cuda_impl
