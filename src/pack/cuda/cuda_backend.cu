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
#include "pack/cuda/kernels.hpp"
#include "pack/cuda/piece_tables.hpp"
#include "pack/cuda/plan.hpp"
#include "pack/cuda/resident.hpp"
#include "pack/cuda/resident_windows.hpp"
#include "pack/cuda/resident_ring.cuh"

namespace gddt::pack {
namespace {

using namespace cuda_impl;

int multiprocessors(int device) {
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached[kCachedDevices];
  const bool cacheable = device >= 0 && device < kCachedDevices;
  if (cacheable) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int count = 0;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count <= 0) {
    cudaGetLastError();
    return 1;
  }
  if (cacheable) cached[device].store(count, std::memory_order_relaxed);
  return count;
}

// Thread blocks of `kernel` with `shared_bytes` of dynamic shared memory that one
// multiprocessor of `device` holds at once, asked of the runtime once per kernel, device and
// 2 KiB class of shared memory (rounded up, so the answer never overstates).
template <typename Kernel>
int resident_blocks(Kernel* kernel, int device, std::size_t shared_bytes) {
  constexpr std::size_t kSharedClass = 2 << 10;
  const std::size_t shared = (shared_bytes + kSharedClass - 1) / kSharedClass * kSharedClass;
  struct Known {
    const void* kernel;
    int device;
    std::size_t shared;
    int blocks;
  };
  static std::mutex mutex;
  static std::vector<Known> known;
  const auto* key = reinterpret_cast<const void*>(kernel);
  std::lock_guard<std::mutex> lock(mutex);
  for (const Known& k : known) {
    if (k.kernel == key && k.device == device && k.shared == shared) return k.blocks;
  }
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreadsPerBlock, shared) != cudaSuccess ||
      blocks <= 0) {
    cudaGetLastError();
    blocks = 1;
  }
  known.push_back({key, device, shared, blocks});
  return blocks;
}

// GDDT_GRID_WAVES, the waves of thread blocks a large window's grid has: whole waves, since
// with a partial one some multiprocessors sit idle while it runs (grids of 1.2 and 1.6 waves of
// a block-list pack took 1.32x and 1.06x the time of one wave at 256 MiB on an H200), and
// several, which evens out multiprocessors that finish their share sooner; the built-in model
// is four, which were 1.00-1.05x faster than two for block lists and faces, two 1.01-1.07x
// faster than one (performance.md).
// GDDT_GRID_BLOCK_TILES_MAX: twice as many waves where each block would otherwise loop over
// more than this many full tiles; the model is four: at 256 MiB on an H200 eight waves were
// then 1.01-1.03x faster for packs and up to 1.09x for unpacks, while at 16 MiB (fewer tiles a
// block) they took up to 1.14x as long as four.
//
// Sets how many words each thread moves per tile and returns the grid for `kernel`: that many
// full waves of blocks (or twice that for very large windows), which loop over the tiles, for
// a window that fills them with full tiles; for a smaller one, tiles small enough to spread
// over that many blocks, since its time is the latency of each thread's chain of offset
// arithmetic and loads, not bandwidth. Multiprocessors that the resident kernel holds are
// left out.
template <int kMostPerThread, typename Index, typename Kernel>
unsigned fit_grid(WindowWords<Index>* words, Kernel* kernel, std::size_t shared_bytes) {
  const std::uint64_t whole = words->word_end > words->word_begin ? words->word_end - words->word_begin : 0;
  const int device = gpu::current_device();
  const auto usable =
      static_cast<std::uint64_t>(std::max(1, multiprocessors(device) - resident_multiprocessors(device)));
  std::uint64_t blocks = usable;
  if (whole > usable * kThreadsPerBlock) {
    const std::uint64_t wave = usable * static_cast<std::uint64_t>(resident_blocks(kernel, device, shared_bytes));
    const std::uint64_t full_tiles = whole / (std::uint64_t{kThreadsPerBlock} * kMostPerThread);
    const std::uint64_t waves = config::settings().grid_waves;
    blocks = wave * (full_tiles > wave * waves * config::settings().grid_block_tiles_max ? 2 * waves : waves);
  }
  const std::uint64_t spread = (whole + blocks * kThreadsPerBlock - 1) / (blocks * kThreadsPerBlock);
  words->words_per_thread =
      static_cast<int>(std::clamp<std::uint64_t>(spread, 1, static_cast<std::uint64_t>(kMostPerThread)));
  const std::uint64_t tile = std::uint64_t{kThreadsPerBlock} * static_cast<std::uint64_t>(words->words_per_thread);
  const std::uint64_t tiles = (whole + tile - 1) / tile;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(tiles, blocks)));
}

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
  std::vector<bool> launched(members.size(), false);
  for (std::size_t first = 0; first < members.size(); ++first) {
    if (launched[first]) continue;
    const SetMember* set[kSetMost];
    int size = 0;
    for (std::size_t i = first; i < members.size() && size < kSetMost; ++i) {
      if (launched[i] || !(members[i].key == members[first].key)) continue;
      set[size++] = &members[i];
      launched[i] = true;
    }
    const WindowMove& only = *set[0]->move;
    if (size == 1) {
      GDDT_CHECK(set[0]->key.kind == WindowPlan::Kind::kStrided
                     ? launch_strided<kUnpack>(set[0]->plan.strided, only.typed, only.packed, stream)
                     : launch_block_list<kUnpack>(set[0]->plan.block_list, set[0]->table, only.typed, only.packed,
                                                  stream));
    } else {
      GDDT_CHECK(set[0]->key.kind == WindowPlan::Kind::kStrided ? launch_strided_set<kUnpack>(set, size, stream)
                                                                 : launch_block_list_set<kUnpack>(set, size, stream));
    }
  }
  return GDDT_OK;
}

// ---- typed to typed ------------------------------------------------------------------------------

template <typename Fn>
Status with_flag(bool flag, Fn&& fn) {
  return flag ? fn(std::true_type{}) : fn(std::false_type{});
}

template <bool kBlockList>
SideArgs<kBlockList> side_args(const WindowPlan& plan, const PieceTable& table, const void* typed) {
  if constexpr (kBlockList) {
    return block_list_args<std::uint32_t>(plan.block_list, table, typed, nullptr);
  } else {
    return strided_args<std::uint32_t>(plan.strided, typed, nullptr);
  }
}

// One launch of a typed-to-typed kernel; it declines (queues nothing) where a side needs 64-bit
// indices or has a block-list table too large for shared memory: the caller then packs and
// unpacks.
Status cuda_transcribe(const Window& from, const void* from_typed, const Window& to, void* to_typed,
                       gpu::Stream user_stream, bool* served) {
  *served = false;
  if (from.length != to.length) return GDDT_ERR_INVALID_ARG;
  GDDT_CHECK(check_window(from, from_typed, unbounded_packed(0)));
  GDDT_CHECK(check_window(to, to_typed, unbounded_packed(0)));
  if (from.length == 0) {
    *served = true;
    return GDDT_OK;
  }
  const TranscribePlan plan = plan_transcribe(from, from_typed, to, to_typed);
  if (!fits_narrow_index(word_plan(plan.from)->largest_operand) ||
      !fits_narrow_index(word_plan(plan.to)->largest_operand)) {
    return GDDT_OK;
  }
  auto stream = static_cast<cudaStream_t>(user_stream);
  const int device = gpu::current_device();
  const bool from_list = plan.from.kind == WindowPlan::Kind::kBlockList;
  const bool to_list = plan.to.kind == WindowPlan::Kind::kBlockList;
  PieceTable from_table, to_table;
  if (from_list) GDDT_CHECK(device_piece_table(*from.layout, device, stream, &from_table));
  if (to_list) GDDT_CHECK(device_piece_table(*to.layout, device, stream, &to_table));
  if ((from_list && shared_table_bytes(from_table) == 0) || (to_list && shared_table_bytes(to_table) == 0)) {
    return GDDT_OK;
  }
  const unsigned shared = (from_list ? from_table.bytes : 0) + (to_list ? to_table.bytes : 0);
  return with_width(plan.width, [&](auto width) {
    constexpr int W = decltype(width)::value;
    return with_flag(from_list, [&](auto from_flag) {
      return with_flag(to_list, [&](auto to_flag) {
        constexpr bool kFromList = decltype(from_flag)::value;
        constexpr bool kToList = decltype(to_flag)::value;
        TranscribeSides<kFromList, kToList> args;
        args.from = side_args<kFromList>(plan.from, from_table, from_typed);
        args.to = side_args<kToList>(plan.to, to_table, to_typed);
        args.to_word_shift = plan.to_word_shift;
        const auto kernel = transcribe_instance<W, kFromList, kToList>();
        constexpr int kUnroll = kFromList || kToList ? kBlockListWordsPerThread : kWordsPerThread<W>;
        const unsigned grid = fit_grid<kUnroll>(&args.from.window, kernel, shared);
        kernel<<<grid, kThreadsPerBlock, shared, stream>>>(args);
        GDDT_CHECK(gpu::check_last_error("typed-to-typed kernel launch"));
        *served = true;
        return GDDT_OK;
      });
    });
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

// Every kernel of this backend (Backend::load); nothing where no GPU is usable (GDDT_CUDA=off, no
// driver), where the backend is never called.
Status load_kernels() {
  if (!gpu::available()) return GDDT_OK;
  GDDT_STRIDED_INSTANCES(GDDT_LOAD_INSTANCES, false)
  GDDT_STRIDED_INSTANCES(GDDT_LOAD_INSTANCES, true)
  GDDT_BLOCK_LIST_INSTANCES(GDDT_LOAD_INSTANCES, false)
  GDDT_BLOCK_LIST_INSTANCES(GDDT_LOAD_INSTANCES, true)
  GDDT_TRANSCRIBE_INSTANCES(GDDT_LOAD_TRANSCRIBE)
  GDDT_CHECK(load_kernel(reinterpret_cast<const void*>(wait_flag_kernel)));
  return load_kernel(reinterpret_cast<const void*>(resident_kernel));
}

#undef GDDT_LOAD_INSTANCES
#undef GDDT_LOAD_TRANSCRIBE

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
    return b;
  }();
  return backend;
}

}  // namespace gddt::pack
