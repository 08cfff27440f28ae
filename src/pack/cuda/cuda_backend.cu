// The CUDA pack backend: one kernel launch (or one cudaMemcpyAsync when the window is a
// single typed range) per call, queued on the caller's stream with its arguments by value.
// Block lists read their pieces from device tables uploaded once per layout and device
// (piece_tables.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "pack/backend.hpp"
#include "pack/cuda/launch_grid.hpp"
#include "pack/cuda/kernels.hpp"
#include "pack/cuda/piece_tables.hpp"
#include "pack/cuda/plan.hpp"
#include "pack/cuda/resident.hpp"
#include "pack/cuda/resident_windows.hpp"
#include "pack/cuda/resident_ring.cuh"
#include "pack/cuda/transcribe_launch.hpp"

namespace gddt::pack {
namespace {

using namespace cuda_impl;

// ---- compile-time dispatch -------------------------------------------------------------------

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename Fn>
Status with_index(std::uint64_t largest_operand, Fn&& fn) {
  if (fits_narrow_index(largest_operand)) return fn(TypeTag<std::uint32_t>{});
  return fn(TypeTag<std::uint64_t>{});
}

template <typename Fn>
Status with_dims(int ndims, Fn&& fn) {
  switch (dims_class(ndims)) {
    case 2: return fn(Constant<2>{});
    case 4: return fn(Constant<4>{});
    default: return fn(Constant<kMaxWordDims>{});
  }
}

template <bool kUnpack>
Status launch_strided(const StridedPlan& plan, const void* typed, const void* packed, cudaStream_t stream) {
  return with_width(plan.words.width, [&](auto width) {
    constexpr int W = decltype(width)::value;
    return with_index(plan.words.largest_operand, [&](auto index) {
      using Index = typename decltype(index)::type;
      StridedArgs<Index> args = strided_args<Index>(plan, typed, packed);
      return with_dims(plan.ndims, [&](auto dims) {
        const auto kernel = strided_instance<W, decltype(dims)::value, kUnpack, Index>();
        const unsigned grid = fit_grid<kWordsPerThread<W>>(&args.window, kernel, 0);
        kernel<<<grid, kThreadsPerBlock, 0, stream>>>(args);
        return gpu::check_last_error(kUnpack ? "strided unpack kernel launch" : "strided pack kernel launch");
      });
    });
  });
}

template <bool kUnpack>
Status launch_block_list(const BlockListPlan& plan, const PieceTable& table, const void* typed, const void* packed,
                         cudaStream_t stream) {
  return with_width(plan.words.width, [&](auto width) {
    constexpr int W = decltype(width)::value;
    return with_index(plan.words.largest_operand, [&](auto index) {
      using Index = typename decltype(index)::type;
      BlockListArgs<Index> args = block_list_args<Index>(plan, table, typed, packed);
      const unsigned shared = shared_table_bytes(table);
      const auto kernel = shared != 0 ? block_list_instance<W, kUnpack, true, Index>()
                                      : block_list_instance<W, kUnpack, false, Index>();
      const unsigned grid = fit_grid<kBlockListMostPerThread<kUnpack>>(&args.window, kernel, shared);
      kernel<<<grid, kThreadsPerBlock, shared, stream>>>(args);
      return gpu::check_last_error(kUnpack ? "block-list unpack kernel launch" : "block-list pack kernel launch");
    });
  });
}

// ---- sets of windows in one launch ----------------------------------------------------------

// What picks a set kernel: the shape, the word width, and the unrolled word dimensions of a
// strided shape or whether a block list's table goes to shared memory. Sets use 32-bit
// indices only; windows needing wider ones are launched alone.
struct SetKey {
  WindowPlan::Kind kind = WindowPlan::Kind::kCopy;
  int width = 0;
  int variant = 0;
  bool operator==(const SetKey& other) const {
    return kind == other.kind && width == other.width && variant == other.variant;
  }
};

// Kernel arguments beyond 4 KiB need a recent driver and toolkit; a set stays below that.
static_assert(sizeof(WindowSet<StridedArgs<std::uint32_t>>) <= 4000 &&
                  sizeof(WindowSet<BlockListArgs<std::uint32_t>>) <= 4000,
              "a set's arguments fit the classic 4 KiB of kernel parameters");

// A window of a set, planned.
struct SetMember {
  const WindowMove* move = nullptr;
  WindowPlan plan;
  PieceTable table;  // block lists
  SetKey key;
};

template <bool kUnpack>
Status launch_strided_set(const SetMember* const* members, int count, cudaStream_t stream) {
  const SetKey key = members[0]->key;
  return with_width(key.width, [&](auto width) {
    constexpr int W = decltype(width)::value;
    return with_dims(key.variant, [&](auto dims) {
      const auto kernel = strided_set_instance<W, decltype(dims)::value, kUnpack>();
      WindowSet<StridedArgs<std::uint32_t>> set;
      unsigned grid = 1;
      for (int i = 0; i < count; ++i) {
        const WindowMove& move = *members[i]->move;
        set.windows[i] = strided_args<std::uint32_t>(members[i]->plan.strided, move.typed, move.packed);
        grid = std::max(grid, fit_grid<kWordsPerThread<W>>(&set.windows[i].window, kernel, 0));
      }
      kernel<<<dim3(grid, static_cast<unsigned>(count)), kThreadsPerBlock, 0, stream>>>(set);
      return gpu::check_last_error(kUnpack ? "strided unpack set launch" : "strided pack set launch");
    });
  });
}

template <bool kUnpack>
Status launch_block_list_set(const SetMember* const* members, int count, cudaStream_t stream) {
  const SetKey key = members[0]->key;
  return with_width(key.width, [&](auto width) {
    constexpr int W = decltype(width)::value;
    const auto kernel =
        key.variant != 0 ? block_list_set_instance<W, kUnpack, true>() : block_list_set_instance<W, kUnpack, false>();
    WindowSet<BlockListArgs<std::uint32_t>> set;
    unsigned shared = 0;
    for (int i = 0; i < count; ++i) shared = std::max(shared, shared_table_bytes(members[i]->table));
    unsigned grid = 1;
    for (int i = 0; i < count; ++i) {
      const WindowMove& move = *members[i]->move;
      set.windows[i] = block_list_args<std::uint32_t>(members[i]->plan.block_list, members[i]->table, move.typed,
                                                      move.packed);
      grid = std::max(grid, fit_grid<kBlockListMostPerThread<kUnpack>>(&set.windows[i].window, kernel, shared));
    }
    kernel<<<dim3(grid, static_cast<unsigned>(count)), kThreadsPerBlock, shared, stream>>>(set);
    return gpu::check_last_error(kUnpack ? "block-list unpack set launch" : "block-list pack set launch");
  });
}

// ---- the backend -------------------------------------------------------------------------------

}  // namespace

namespace cuda_impl {

Status check_window(const Window& w, const void* typed, const void* packed) {
  if (w.layout == nullptr || w.count < 0 || w.offset < 0 || w.length < 0) return GDDT_ERR_INVALID_ARG;
  if (w.length == 0) return GDDT_OK;
  const std::int64_t size = w.layout->size;
  if (size <= 0 || w.offset / size >= w.count || w.length > w.count * size - w.offset) return GDDT_ERR_INVALID_ARG;
  // A null typed pointer is MPI_BOTTOM: the typemap then holds absolute addresses, and only its
  // first byte must be a real one.
  const auto first = reinterpret_cast<std::uintptr_t>(typed) + static_cast<std::uintptr_t>(w.layout->true_lb);
  if (first == 0 || packed == nullptr) return GDDT_ERR_BUFFER;
  return GDDT_OK;
}

}  // namespace cuda_impl

namespace {

template <bool kUnpack>
Status move_window(const Window& w, const void* typed, const void* packed, gpu::Stream user_stream) {
  GDDT_CHECK(check_window(w, typed, packed));
  if (w.length == 0) return GDDT_OK;
  auto stream = static_cast<cudaStream_t>(user_stream);
  const WindowPlan plan = plan_window(w, typed, packed);
  switch (plan.kind) {
    case WindowPlan::Kind::kCopy: {
      const char* range = static_cast<const char*>(typed) + plan.copy_offset;
      const auto bytes = static_cast<std::size_t>(w.length);
      return kUnpack ? gpu::memcpy_async(const_cast<char*>(range), packed, bytes, stream)
                     : gpu::memcpy_async(const_cast<void*>(packed), range, bytes, stream);
    }
    case WindowPlan::Kind::kStrided:
      return launch_strided<kUnpack>(plan.strided, typed, packed, stream);
    case WindowPlan::Kind::kBlockList: {
      PieceTable table;
      GDDT_CHECK(device_piece_table(*w.layout, gpu::current_device(), stream, &table));
      return launch_block_list<kUnpack>(plan.block_list, table, typed, packed, stream);
    }
  }
  return GDDT_ERR_INTERNAL;
}

}  // namespace

Status cuda_impl::launch_window(bool unpack, const Window& w, const void* typed, const void* packed,
                                gpu::Stream stream) {
  return unpack ? move_window<true>(w, typed, packed, stream) : move_window<false>(w, typed, packed, stream);
}

namespace {

// The windows of `moves` in as few launches as their kernels allow: windows sharing a set key
// go kSetMost to a launch, the others (copies, 64-bit indices, a key of their own) one by one.
template <bool kUnpack>
Status move_set(const WindowMove* moves, int count, gpu::Stream user_stream) {
  auto stream = static_cast<cudaStream_t>(user_stream);
  std::vector<SetMember> members;
  members.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const WindowMove& move = moves[i];
    GDDT_CHECK(check_window(move.window, move.typed, move.packed));
    if (move.window.length == 0) continue;
    SetMember member;
    member.move = &move;
    member.plan = plan_window(move.window, move.typed, move.packed);
    const WordPlan* words = word_plan(member.plan);
    if (words == nullptr || !fits_narrow_index(words->largest_operand)) {
      GDDT_CHECK(move_window<kUnpack>(move.window, move.typed, move.packed, user_stream));
      continue;
    }
    member.key = SetKey{member.plan.kind, words->width, 0};
    if (member.plan.kind == WindowPlan::Kind::kStrided) {
      member.key.variant = dims_class(member.plan.strided.ndims);
    } else {
      GDDT_CHECK(device_piece_table(*move.window.layout, gpu::current_device(), stream, &member.table));
      member.key.variant = shared_table_bytes(member.table) != 0 ? 1 : 0;
    }
    members.push_back(member);
  }
  const auto same_key = [](const SetMember& a, const SetMember& b) { return a.key == b.key; };
  return launch_in_sets(members, kSetMost, same_key, [&](const SetMember* const* set, int size) {
    const WindowMove& only = *set[0]->move;
    if (size == 1) {
      return set[0]->key.kind == WindowPlan::Kind::kStrided
                 ? launch_strided<kUnpack>(set[0]->plan.strided, only.typed, only.packed, stream)
                 : launch_block_list<kUnpack>(set[0]->plan.block_list, set[0]->table, only.typed, only.packed, stream);
    }
    return set[0]->key.kind == WindowPlan::Kind::kStrided ? launch_strided_set<kUnpack>(set, size, stream)
                                                           : launch_block_list_set<kUnpack>(set, size, stream);
  });
}

Status cuda_pack(const Window& window, const void* typed, void* packed, gpu::Stream stream) {
  return move_window<false>(window, typed, packed, stream);
}

Status cuda_unpack(const Window& window, void* typed, const void* packed, gpu::Stream stream) {
  return move_window<true>(window, typed, packed, stream);
}

Status cuda_pack_set(const WindowMove* moves, int count, gpu::Stream stream) {
  return move_set<false>(moves, count, stream);
}

Status cuda_unpack_set(const WindowMove* moves, int count, gpu::Stream stream) {
  return move_set<true>(moves, count, stream);
}

// Asking for a kernel's attributes loads it into the current context.
Status load_kernel(const void* kernel) {
  cudaFuncAttributes attributes;
  cudaFuncGetAttributes(&attributes, kernel);
  return gpu::check_last_error("cudaFuncGetAttributes");
}

#define GDDT_LOAD_INSTANCES(family, Args, ...)                                                         \
  GDDT_CHECK(load_kernel(reinterpret_cast<const void*>(family##_instance<__VA_ARGS__, std::uint32_t>()))); \
  GDDT_CHECK(load_kernel(reinterpret_cast<const void*>(family##_instance<__VA_ARGS__, std::uint64_t>()))); \
  GDDT_CHECK(load_kernel(reinterpret_cast<const void*>(family##_set_instance<__VA_ARGS__>())));

#define GDDT_LOAD_TRANSCRIBE(W, kFromList, kToList) \
  GDDT_CHECK(load_kernel(reinterpret_cast<const void*>(transcribe_instance<W, kFromList, kToList>())));
#define GDDT_LOAD_TRANSCRIBE_SET(W) \
  GDDT_CHECK(load_kernel(reinterpret_cast<const void*>(transcribe_set_instance<W>())));

// Every kernel of this backend (Backend::load); nothing where no GPU is usable (GDDT_CUDA=off, no
// driver), where the backend is never called.
Status load_kernels() {
  if (!gpu::available()) return GDDT_OK;
  GDDT_STRIDED_INSTANCES(GDDT_LOAD_INSTANCES, false)
  GDDT_STRIDED_INSTANCES(GDDT_LOAD_INSTANCES, true)
  GDDT_BLOCK_LIST_INSTANCES(GDDT_LOAD_INSTANCES, false)
  GDDT_BLOCK_LIST_INSTANCES(GDDT_LOAD_INSTANCES, true)
  GDDT_TRANSCRIBE_INSTANCES(GDDT_LOAD_TRANSCRIBE)
  GDDT_TRANSCRIBE_SET_INSTANCES(GDDT_LOAD_TRANSCRIBE_SET)
  GDDT_CHECK(load_kernel(reinterpret_cast<const void*>(wait_flag_kernel)));
  return load_kernel(reinterpret_cast<const void*>(resident_kernel));
}

#undef GDDT_LOAD_INSTANCES
#undef GDDT_LOAD_TRANSCRIBE
#undef GDDT_LOAD_TRANSCRIBE_SET

}  // namespace

const Backend& cuda_backend() {
  static const Backend backend = [] {
    Backend b;
    b.name = "cuda";
    // Pinned host memory is read or written over the bus; pageable memory the kernels cannot reach.
    b.typed_cost = b.packed_cost = {kUnreachable, 4, 1, 1, kUnreachable};
    b.pack = cuda_pack;
    b.unpack = cuda_unpack;
    b.pack_now = resident_pack_now;
    b.unpack_now = resident_unpack_now;
    b.post_now = resident_post_now;
    b.wait_posted = wait_resident;
    b.queue_flag_wait = queue_flag_wait;
    b.stop = stop_resident;
    b.serves_now = resident_wanted;
    b.pack_set = cuda_pack_set;
    b.unpack_set = cuda_unpack_set;
    b.load = load_kernels;
    b.prepare = prepare_piece_table;
    b.transcribe = cuda_transcribe;
    b.transcribe_set = cuda_transcribe_set;
    return b;
  }();
  return backend;
}

}  // namespace gddt::pack
