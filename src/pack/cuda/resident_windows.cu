// The resident kernel's rows of the CUDA backend (resident_windows.hpp): a window planned as a
// launch would plan it, moved by the kernel kept on the device (resident.hpp) instead.
#include <cuda_runtime.h>

#include "pack/cuda/piece_tables.hpp"
#include "pack/cuda/plan.hpp"
#include "pack/cuda/resident.hpp"
#include "pack/cuda/resident_ring.cuh"
#include "pack/cuda/resident_windows.hpp"

namespace gddt::pack::cuda_impl {
namespace {

// A window for a resident kernel that is not running: launched on gddt's stream (ordered after
// the legacy default stream), the kernel started behind it for the windows to come, then waited
// for. Declined, as a job would be, while the caller must ask for the legacy default stream and
// it is busy.
template <bool kUnpack>
Status launch_while_starting(const Window& w, const void* typed, const void* packed, int device, Ordering ordering,
                             const gpu::WhileWaiting& meanwhile, bool* served) {
  if (!legacy_stream_clear(ordering)) return GDDT_OK;
  gpu::Stream stream = nullptr;
  GDDT_CHECK(gpu::library_stream(device, &stream));
  GDDT_CHECK(launch_window(kUnpack, w, typed, packed, stream));
  note_cold_window();
  start_resident(device);
  GDDT_CHECK(gpu::stream_wait(stream, meanwhile));
  *served = true;
  return GDDT_OK;
}

// A window the resident kernel takes: its plan, the blocks that move it and the device.
struct ResidentWindow {
  WindowPlan plan;
  int blocks = 0;  // 0: the kernel declines the window
  int device = -1;
};

// The resident kernel's version of move_window: the same plan; a window inside one block too:
// synchronous copies of 4 to 64 KiB took 0.9-2.4 us longer than an empty launch + synchronize
// through the copy engine and mostly less through the resident kernel, on an H100
// (performance.md). Windows larger or more scattered than its blocks take quickly go to a launch.
Status plan_resident(const Window& w, const void* typed, const void* packed, ResidentWindow* r) {
  if (!resident_may_take(w.length)) return GDDT_OK;
  GDDT_CHECK(check_window(w, typed, packed));
  if (w.length == 0) return GDDT_OK;
  r->device = gpu::current_device();
  r->plan = plan_window(w, typed, packed);
  if (r->plan.kind == WindowPlan::Kind::kCopy) {
    r->plan.kind = WindowPlan::Kind::kStrided;
    r->plan.strided = plan_range(r->plan.copy_offset, typed, packed, w.length);
  }
  const std::uint64_t sectors = typed_sectors(w, word_plan(r->plan)->width);
  r->blocks = resident_blocks_for(w.length, sectors, resident_kernel_blocks(r->device));
  return GDDT_OK;
}

Status post_planned(bool unpack, const Window& w, const ResidentWindow& r, const void* typed, const void* packed,
                    DeviceFlag after, DeviceFlag signal, Ordering ordering, Posted* posted, bool* served) {
  if (r.plan.kind == WindowPlan::Kind::kStrided) {
    return post_resident(unpack, r.plan.strided, typed, packed, r.blocks, after, signal, ordering, posted, served);
  }
  gpu::Stream upload = nullptr;
  GDDT_CHECK(gpu::library_stream(r.device, &upload));
  PieceTable table;
  GDDT_CHECK(resident_piece_table(*w.layout, r.device, static_cast<cudaStream_t>(upload), &table));
  return post_resident(unpack, r.plan.block_list, table, typed, packed, r.blocks, after, signal, ordering, posted,
                       served);
}

// Moves a window through the resident kernel and waits for it; one that finds the kernel idle is
// launched while it starts.
template <bool kUnpack>
Status move_now(const Window& w, const void* typed, const void* packed, Ordering ordering,
                const gpu::WhileWaiting& meanwhile, bool* served) {
  *served = false;
  ResidentWindow r;
  GDDT_CHECK(plan_resident(w, typed, packed, &r));
  if (r.blocks == 0) return GDDT_OK;
  if (resident_idle(r.device)) return launch_while_starting<kUnpack>(w, typed, packed, r.device, ordering, meanwhile, served);
  Posted posted;
  GDDT_CHECK(post_planned(kUnpack, w, r, typed, packed, {}, {}, ordering, &posted, served));
  if (!*served) return GDDT_OK;
  bool moved = false;
  return wait_resident(posted, meanwhile, &moved);  // a job without a flag to wait for always moves
}

}  // namespace

Status resident_pack_now(const Window& window, const void* typed, void* packed, Ordering ordering,
                     const gpu::WhileWaiting& meanwhile, bool* served) {
  return move_now<false>(window, typed, packed, ordering, meanwhile, served);
}

Status resident_unpack_now(const Window& window, void* typed, const void* packed, Ordering ordering,
                       const gpu::WhileWaiting& meanwhile, bool* served) {
  return move_now<true>(window, typed, packed, ordering, meanwhile, served);
}

Status resident_post_now(bool unpack, const Window& window, const void* typed, const void* packed, DeviceFlag after,
                     DeviceFlag signal, Ordering ordering, Posted* posted, bool* served) {
  *served = false;
  *posted = Posted{};
  ResidentWindow r;
  GDDT_CHECK(plan_resident(window, typed, packed, &r));
  if (r.blocks == 0) return GDDT_OK;
  // A job would wait for the kernel to start, or, where it may be exiting, for a waiter to start
  // it again. A sender's ordinary move starts it (launch_while_starting); a move that waits for a
  // flag is launched instead (queue_flag_wait), so the kernel is started here for the next one.
  if (!resident_runs_on(r.device)) {
    if (after.at != nullptr && resident_idle(r.device)) start_resident(r.device);
    return GDDT_OK;
  }
  return post_planned(unpack, window, r, typed, packed, after, signal, ordering, posted, served);
}

Status queue_flag_wait(DeviceFlag flag, gpu::Stream stream) {
  wait_flag_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(flag.at, flag.value);
  return gpu::check_last_error("flag wait launch");
}

}  // namespace gddt::pack::cuda_impl
