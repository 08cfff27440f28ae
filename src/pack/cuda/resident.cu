// The host side of the resident kernel (resident.hpp): posts jobs to the ring of the current
// device (resident_ring.cuh), starts the kernel where none runs and waits for the jobs.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>

#include "core/config.hpp"
#include "core/log.hpp"
#include "pack/cuda/kernels.hpp"
#include "pack/cuda/resident.hpp"
#include "pack/cuda/resident_ring.cuh"

namespace gddt::pack::cuda_impl {
namespace {

std::atomic<std::uint64_t> jobs_run{0};
std::atomic<std::uint64_t> launches{0};
std::atomic<std::uint64_t> cold_windows{0};

std::uint64_t load_acquire(const std::uint64_t* at) { return __atomic_load_n(at, __ATOMIC_ACQUIRE); }
std::uint32_t load_acquire(const std::uint32_t* at) { return __atomic_load_n(at, __ATOMIC_ACQUIRE); }

// Kernels of different processes on one GPU take turns: a kernel left waiting for work would
// hold up every other process's kernels. Asked again at most this often.
constexpr auto kSharingRecheck = std::chrono::seconds(1);

// Blocks of one cluster that every GPU with clusters launches (a larger one needs an opt-in).
constexpr int kPortableClusterBlocks = 8;
// The largest cluster Hopper allows with the opt-in.
constexpr int kMostClusterBlocks = 16;

cudaLaunchConfig_t launch_config(int blocks, cudaStream_t stream, cudaLaunchAttribute* cluster) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kResidentThreads);
  config.stream = stream;
  cluster->id = cudaLaunchAttributeClusterDimension;
  cluster->val.clusterDim.x = static_cast<unsigned>(blocks);
  cluster->val.clusterDim.y = 1;
  cluster->val.clusterDim.z = 1;
  config.attrs = cluster;
  config.numAttrs = blocks > 1 ? 1 : 0;
  return config;
}

// GDDT_RESIDENT_BLOCKS where the current device runs a cluster of that many of the kernel's
// blocks at once, else one block.
int cluster_blocks(int device) {
  const int wanted = static_cast<int>(
      std::clamp<std::uint64_t>(config::settings().resident_blocks, 1, static_cast<std::uint64_t>(kMostClusterBlocks)));
  if (wanted == 1) return 1;
  int has_clusters = 0;
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = launch_config(wanted, nullptr, &attribute);
  int clusters = 0;
  const bool fits =
      cudaDeviceGetAttribute(&has_clusters, cudaDevAttrClusterLaunch, device) == cudaSuccess && has_clusters != 0 &&
      (wanted <= kPortableClusterBlocks ||
       cudaFuncSetAttribute(resident_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess) &&
      cudaOccupancyMaxActiveClusters(&clusters, resident_kernel, &config) == cudaSuccess && clusters > 0;
  if (fits) return wanted;
  cudaGetLastError();
  GDDT_LOG(kInfo, "GPU %d runs no cluster of %d resident blocks: the resident kernel is one block", device, wanted);
  return 1;
}

struct DeviceRing {
  std::mutex mutex;  // guards everything below but `blocks` and the ring's fields the kernel writes
  Ring* ring = nullptr;
  Ring* ring_on_device = nullptr;
  cudaStream_t stream = nullptr;
  std::uint64_t posted = 0;
  bool broken = false;  // a launch failed: this device moves windows the ordinary way from now on
  bool shared = false;
  std::uint64_t posted_at_launch = 0;  // `posted` when the latest kernel started
  std::chrono::steady_clock::time_point last_job{};  // the latest job posted or kernel launched
  RestartWatch restarts;       // note_restart
  bool stepped_aside = false;  // the program waits for the kernel to exit: windows are launched
  std::chrono::steady_clock::time_point sharing_checked{};
  std::atomic<int> blocks{0};  // the kernel's blocks; 0 until first asked
};

constexpr int kMostDevices = 64;
DeviceRing rings[kMostDevices];

bool wanted(int device, DeviceRing& r) {
  if (r.broken || r.stepped_aside) return false;
  if (config::resident() == config::Resident::kOn) return true;
  const auto now = std::chrono::steady_clock::now();
  if (r.sharing_checked == std::chrono::steady_clock::time_point{} || now - r.sharing_checked > kSharingRecheck) {
    const bool shared = gpu::other_compute_processes(device) > 0;
    if (shared != r.shared) {
      GDDT_LOG(kInfo, "GPU %d %s: resident kernel %s", device,
               shared ? "is shared with other processes" : "is this process's alone", shared ? "off" : "on");
    }
    r.shared = shared;
    r.sharing_checked = now;
  }
  return !r.shared;
}

Status open_ring(int device, DeviceRing& r) {
  if (r.ring != nullptr) return GDDT_OK;
  void* memory = nullptr;
  GDDT_CHECK(gpu::pinned_alloc(sizeof(Ring), &memory));
  std::memset(memory, 0, sizeof(Ring));
  void* on_device = nullptr;
  gpu::Stream stream = nullptr;
  Status status = cudaHostGetDevicePointer(&on_device, memory, 0) == cudaSuccess ? GDDT_OK
                                                                                  : gpu::check_last_error("cudaHostGetDevicePointer");
  if (!is_error(status)) status = gpu::stream_create(device, &stream);
  if (is_error(status)) {
    gpu::pinned_free(memory);
    return status;
  }
  r.ring = static_cast<Ring*>(memory);
  r.ring->idle_ns = config::settings().resident_idle_us * 1000;
  r.ring->restart_gap_ns = ~std::uint64_t{0};  // the first kernel follows no exit
  r.ring_on_device = static_cast<Ring*>(on_device);
  r.stream = static_cast<cudaStream_t>(stream);
  r.posted = 0;
  return GDDT_OK;
}

// With r.mutex held, the previous kernel exited: counts how soon after its predecessor's exit it
// started.
void note_restart(DeviceRing& r) {
  const std::uint64_t gap = load_acquire(&r.ring->restart_gap_ns);
  GDDT_LOG(kDebug, "GPU %d: the last resident kernel started %.1f us after its predecessor's idle exit",
           static_cast<int>(&r - rings), static_cast<double>(gap) / 1000.0);
  const bool awaited = r.restarts.awaited(gap, r.ring->idle_ns, r.posted - r.posted_at_launch);
  if (!awaited || config::resident() != config::Resident::kAuto) return;
  r.stepped_aside = true;
  GDDT_LOG(kInfo,
           "GPU %d: the program waited for the resident kernel to exit %d times in a row (a device-wide "
           "synchronization after each exchange?): its windows are launched from now on",
           static_cast<int>(&r - rings), RestartWatch::kInARow);
}

// With r.mutex held and no kernel running: starts one at the oldest job not done. A cluster
// that does not start is tried once more as one block.
Status launch(DeviceRing& r) {
  note_restart(r);
  __atomic_store_n(&r.ring->running, 1u, __ATOMIC_RELEASE);
  const std::uint64_t first = load_acquire(&r.ring->done);
  const int blocks = std::max(1, r.blocks.load());
  cudaLaunchAttribute cluster{};
  cudaLaunchConfig_t config = launch_config(blocks, r.stream, &cluster);
  cudaError_t error = cudaLaunchKernelEx(&config, resident_kernel, r.ring_on_device, first);
  if (error != cudaSuccess && blocks > 1) {
    cudaGetLastError();
    GDDT_LOG(kInfo, "a cluster of %d resident blocks does not start (%s): the resident kernel is one block", blocks,
             cudaGetErrorString(error));
    r.blocks = 1;
    config = launch_config(1, r.stream, &cluster);
    error = cudaLaunchKernelEx(&config, resident_kernel, r.ring_on_device, first);
  }
  const Status status = error == cudaSuccess ? GDDT_OK : gpu::check_last_error("resident kernel launch");
  if (is_error(status)) {
    __atomic_store_n(&r.ring->running, 0u, __ATOMIC_RELEASE);
    r.broken = true;
    GDDT_LOG(kWarn, "the resident kernel does not start: small windows are launched as kernels of their own");
    return status;
  }
  launches.fetch_add(1, std::memory_order_relaxed);
  r.posted_at_launch = r.posted;
  r.last_job = std::chrono::steady_clock::now();
  return GDDT_OK;
}

// Whether a job whose cells were written at `now` is seen by the running kernel (JobLanding).
bool lands_in_time(std::chrono::steady_clock::time_point latest_before, std::chrono::steady_clock::time_point now) {
  return JobLanding::in_time(now - latest_before, std::chrono::microseconds(config::settings().resident_idle_us));
}

// Posts `job` and sets *ticket to the value of `done` that says it is finished; *served false
// when the job was not posted. *in_time is false where the kernel may exit without seeing it
// (lands_in_time): a waiter then starts it again, and a caller that would not wait must.
Status post(int device, const Job& job, Ordering ordering, std::uint64_t* ticket, bool* served, bool* in_time) {
  *served = false;
  if (device < 0 || device >= kMostDevices) return GDDT_OK;
  DeviceRing& r = rings[device];
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!wanted(device, r)) return GDDT_OK;
  if (!legacy_stream_clear(ordering)) return GDDT_OK;
  if (is_error(open_ring(device, r))) {
    r.broken = true;
    return GDDT_OK;
  }
  if (r.posted - load_acquire(&r.ring->done) >= kJobSlots) return GDDT_OK;
  if (load_acquire(&r.ring->running) == 0 && is_error(launch(r))) return GDDT_OK;
  const auto latest_before = r.last_job;
  std::uint32_t words[kCellsPerSlot] = {};
  std::memcpy(words, &job, sizeof(Job));
  const std::uint64_t stamp = std::uint64_t{stamp_of(r.posted)} << 32;
  std::uint64_t* cells = r.ring->slots[r.posted % kJobSlots].cells;
  std::atomic_thread_fence(std::memory_order_release);  // the job's data before its cells
  for (int i = 0; i < kCellsPerSlot; ++i) __atomic_store_n(&cells[i], stamp | words[i], __ATOMIC_RELAXED);
  ++r.posted;
  r.last_job = std::chrono::steady_clock::now();
  *in_time = lands_in_time(latest_before, r.last_job);
  *ticket = r.posted;
  *served = true;
  return GDDT_OK;
}

// How many polls pass between asking the driver whether the kernel died (a fault in it ends
// the context, and `running` then stays set).
constexpr unsigned kPollsPerHealthCheck = 1024;

Status wait(DeviceRing& r, std::uint64_t ticket, const gpu::WhileWaiting& meanwhile, bool* moved) {
  for (unsigned polls = 1;; ++polls) {
    const std::uint32_t running = load_acquire(&r.ring->running);  // before `done`: see the kernel's note
    if (load_acquire(&r.ring->done) >= ticket) {
      // Jobs end in order, so `gave_up` only grows: below the ticket, this job moved its window.
      // At or above it, this job or a later one gave up, which the kernel may have overwritten
      // while this thread slept: the caller then moves the window again, the same bytes.
      *moved = load_acquire(&r.ring->gave_up) < ticket;
      return GDDT_OK;
    }
    if (running == 0) {
      std::lock_guard<std::mutex> lock(r.mutex);
      if (load_acquire(&r.ring->running) == 0 && load_acquire(&r.ring->done) < ticket) GDDT_CHECK(launch(r));
    }
    if (polls % kPollsPerHealthCheck == 0) {
      const cudaError_t state = cudaStreamQuery(r.stream);
      if (state != cudaSuccess && state != cudaErrorNotReady) return gpu::check_last_error("resident kernel");
    }
    if (meanwhile.call != nullptr) meanwhile.call(meanwhile.context);
  }
}

// The words each thread moves per tile: few enough that every block of the job has a tile,
// at most as many as the kernel unrolls for this job.
int words_per_thread(JobKind kind, int width, const WindowWords<std::uint32_t>& window, int blocks) {
  const int most = kind == JobKind::kBlockList
                       ? kBlockListWordsPerThread
                       : with_width(width, [](auto w) { return kWordsPerThread<decltype(w)::value>; });
  const std::uint64_t threads = std::uint64_t{kResidentThreads} * static_cast<std::uint64_t>(blocks);
  const std::uint64_t words = window.word_end > window.word_begin ? window.word_end - window.word_begin : 0;
  const std::uint64_t spread = (words + threads - 1) / threads;
  return static_cast<int>(std::clamp<std::uint64_t>(spread, 1, static_cast<std::uint64_t>(most)));
}

template <typename Args>
Status post_job(JobKind kind, int width, bool unpack, Args args, int blocks, DeviceFlag after, DeviceFlag signal,
                Ordering ordering, Posted* posted, bool* served) {
  args.window.words_per_thread = words_per_thread(kind, width, args.window, blocks);
  static_assert(sizeof(Args) <= sizeof(Job::args), "job arguments fit a ring slot");
  Job job{};
  job.kind = kind;
  job.width = static_cast<std::uint32_t>(width);
  job.unpack = unpack ? 1 : 0;
  job.blocks = static_cast<std::uint32_t>(blocks);
  job.wait_at = reinterpret_cast<std::uintptr_t>(after.at);
  job.wait_value = after.value;
  job.signal_at = reinterpret_cast<std::uintptr_t>(signal.at);
  job.signal_value = signal.value;
  std::memcpy(job.args, &args, sizeof(Args));
  const int device = gpu::current_device();
  bool in_time = false;
  GDDT_CHECK(post(device, job, ordering, &posted->ticket, served, &in_time));
  if (!*served) return GDDT_OK;
  posted->device = device;
  jobs_run.fetch_add(1, std::memory_order_relaxed);
  // A job that waits for a flag is waited for at once by its caller; one that may sit unseen
  // until a waiter comes is waited for now, since its caller may not wait before another
  // process waits for the flag it sets.
  if (in_time || after.at != nullptr) return GDDT_OK;
  bool moved = false;
  return wait(rings[device], posted->ticket, {}, &moved);
}

}  // namespace

Status post_resident(bool unpack, const StridedPlan& plan, const void* typed, const void* packed, int blocks,
                     DeviceFlag after, DeviceFlag signal, Ordering ordering, Posted* posted, bool* served) {
  *served = false;
  if (!fits_narrow_index(plan.words.largest_operand)) return GDDT_OK;
  const StridedArgs<std::uint32_t> args = strided_args<std::uint32_t>(plan, typed, packed);
  return post_job(JobKind::kStrided, plan.words.width, unpack, args, blocks, after, signal, ordering, posted, served);
}

Status post_resident(bool unpack, const BlockListPlan& plan, const PieceTable& table, const void* typed,
                     const void* packed, int blocks, DeviceFlag after, DeviceFlag signal, Ordering ordering,
                     Posted* posted, bool* served) {
  *served = false;
  if (!fits_narrow_index(plan.words.largest_operand) || shared_table_bytes(table) == 0) return GDDT_OK;
  const BlockListArgs<std::uint32_t> args = block_list_args<std::uint32_t>(plan, table, typed, packed);
  return post_job(JobKind::kBlockList, plan.words.width, unpack, args, blocks, after, signal, ordering, posted,
                  served);
}

Status wait_resident(const Posted& posted, const gpu::WhileWaiting& meanwhile, bool* moved) {
  *moved = false;
  if (posted.device < 0 || posted.device >= kMostDevices) return GDDT_ERR_INTERNAL;
  DeviceRing& r = rings[posted.device];
  {
    // stop_resident ran every job posted before it, and took the ring with the word that says
    // whether a wait gave up: the caller moves the window again, the same bytes.
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.ring == nullptr) return GDDT_OK;
  }
  return wait(r, posted.ticket, meanwhile, moved);
}

// A kernel the user queued on the legacy default stream may still write the typed buffer or read
// it; the ordinary path is ordered after it, the resident kernel is not. A query that fails
// (inside a stream capture, say) declines too: the ordinary path decides.
bool legacy_stream_clear(Ordering ordering) {
  if (ordering != Ordering::kCheckLegacyStream) return true;
  bool idle = false;
  return gpu::legacy_stream_idle(&idle) == GDDT_OK && idle;
}

bool resident_wanted(int device) {
  if (device < 0 || device >= kMostDevices || config::resident() == config::Resident::kOff) return false;
  DeviceRing& r = rings[device];
  std::lock_guard<std::mutex> lock(r.mutex);
  return wanted(device, r);
}

bool resident_idle(int device) {
  if (device < 0 || device >= kMostDevices) return false;
  DeviceRing& r = rings[device];
  std::lock_guard<std::mutex> lock(r.mutex);
  return wanted(device, r) && (r.ring == nullptr || load_acquire(&r.ring->running) == 0);
}

bool resident_runs_on(int device) {
  if (device < 0 || device >= kMostDevices) return false;
  DeviceRing& r = rings[device];
  std::lock_guard<std::mutex> lock(r.mutex);
  return wanted(device, r) && r.ring != nullptr && load_acquire(&r.ring->running) != 0 &&
         lands_in_time(r.last_job, std::chrono::steady_clock::now());
}

void note_cold_window() { cold_windows.fetch_add(1, std::memory_order_relaxed); }

void start_resident(int device) {
  if (device < 0 || device >= kMostDevices) return;
  DeviceRing& r = rings[device];
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!wanted(device, r)) return;
  if (is_error(open_ring(device, r))) {
    r.broken = true;
    return;
  }
  if (load_acquire(&r.ring->running) == 0) launch(r);  // a failed launch marks the ring broken
}

int resident_kernel_blocks(int device) {
  if (device < 0 || device >= kMostDevices) return 1;
  std::atomic<int>& blocks = rings[device].blocks;
  int known = blocks.load(std::memory_order_relaxed);
  if (known == 0) {
    // Two first callers may both ask; they get the same answer.
    known = cluster_blocks(device);
    int unknown = 0;
    if (!blocks.compare_exchange_strong(unknown, known, std::memory_order_relaxed)) known = unknown;
  }
  return known;
}

int resident_multiprocessors(int device) {
  if (device < 0 || device >= kMostDevices) return 0;
  DeviceRing& r = rings[device];
  std::unique_lock<std::mutex> lock(r.mutex, std::try_to_lock);
  const bool running = !lock.owns_lock() || (r.ring != nullptr && load_acquire(&r.ring->running) != 0);
  return running ? resident_kernel_blocks(device) : 0;  // a caller holding the lock is posting or waiting for a job
}

void stop_resident() {
  for (int device = 0; device < kMostDevices; ++device) {
    DeviceRing& r = rings[device];
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.ring == nullptr) continue;
    // A device reset took the ring's pinned memory and the kernel with it.
    if (!gpu::objects_abandoned()) __atomic_store_n(&r.ring->stop, 1u, __ATOMIC_RELEASE);
    gpu::stream_synchronize(r.stream);
    gpu::stream_destroy(r.stream);
    gpu::pinned_free(r.ring);
    r.ring = nullptr;
    r.ring_on_device = nullptr;
    r.stream = nullptr;
    r.posted = 0;
    r.posted_at_launch = 0;
    r.restarts = RestartWatch{};
    r.stepped_aside = false;
  }
}

ResidentCounts resident_counts() {
  return ResidentCounts{jobs_run.load(std::memory_order_relaxed), launches.load(std::memory_order_relaxed),
                        cold_windows.load(std::memory_order_relaxed)};
}

}  // namespace gddt::pack::cuda_impl
