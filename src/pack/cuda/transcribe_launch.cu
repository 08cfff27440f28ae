// The typed-to-typed launches: a move read at its place in one typed buffer and written at its
// place in the other by one kernel (transcribe.cu), or several between strided shapes by one launch,
// which costs the host as much as one: a receiver reading the lent buffers of a window of arrived
// messages launches once for up to kTranscribeSetMost of them.
#include <cuda_runtime.h>

#include <type_traits>
#include <vector>

#include "pack/cuda/launch_grid.hpp"
#include "pack/cuda/kernels.hpp"
#include "pack/cuda/piece_tables.hpp"
#include "pack/cuda/plan.hpp"
#include "pack/cuda/resident_windows.hpp"
#include "pack/cuda/transcribe_launch.hpp"

namespace gddt::pack::cuda_impl {

namespace {

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

// Checks a move's windows and plans it (nothing where it is empty); *narrow is whether both sides'
// offsets fit the kernels' 32-bit indices.
Status plan_move(const Window& from, const void* from_typed, const Window& to, const void* to_typed,
                 TranscribePlan* plan, bool* narrow) {
  *narrow = false;
  if (from.length != to.length) return GDDT_ERR_INVALID_ARG;
  GDDT_CHECK(check_window(from, from_typed, unbounded_packed(0)));
  GDDT_CHECK(check_window(to, to_typed, unbounded_packed(0)));
  if (from.length == 0) return GDDT_OK;
  *plan = plan_transcribe(from, from_typed, to, to_typed);
  *narrow = fits_narrow_index(word_plan(plan->from)->largest_operand) &&
            fits_narrow_index(word_plan(plan->to)->largest_operand);
  return GDDT_OK;
}

// A move of a set, planned.
struct SetMember {
  TranscribeMove* move = nullptr;
  TranscribePlan plan;
};

// One launch of `count` planned moves between strided shapes of one word width.
Status launch_set(const SetMember* const* members, int count, cudaStream_t stream) {
  return with_width(members[0]->plan.width, [&](auto width) {
    constexpr int W = decltype(width)::value;
    const auto kernel = transcribe_set_instance<W>();
    TranscribeSet set;
    unsigned grid = 1;
    for (int i = 0; i < count; ++i) {
      const SetMember& member = *members[i];
      TranscribeSides<false, false>& args = set.members[i];
      args.from = strided_args<std::uint32_t>(member.plan.from.strided, member.move->from_typed, nullptr);
      args.to = strided_args<std::uint32_t>(member.plan.to.strided, member.move->to_typed, nullptr);
      args.to_word_shift = member.plan.to_word_shift;
      grid = std::max(grid, fit_grid<kWordsPerThread<W>>(&args.from.window, kernel, 0));
    }
    kernel<<<dim3(grid, static_cast<unsigned>(count)), kThreadsPerBlock, 0, stream>>>(set);
    return gpu::check_last_error("typed-to-typed set launch");
  });
}

}  // namespace

// One launch of a typed-to-typed kernel; it declines (queues nothing) where a side needs 64-bit
// indices or has a block-list table too large for shared memory: the caller then packs and
// unpacks.
Status cuda_transcribe(const Window& from, const void* from_typed, const Window& to, void* to_typed,
                       gpu::Stream user_stream, bool* served) {
  *served = false;
  TranscribePlan plan;
  bool narrow = false;
  GDDT_CHECK(plan_move(from, from_typed, to, to_typed, &plan, &narrow));
  if (from.length == 0) {
    *served = true;
    return GDDT_OK;
  }
  if (!narrow) return GDDT_OK;
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

// Moves between strided shapes share launches, kTranscribeSetMost of one word width at most; the
// others (block lists, 64-bit offsets) are launched one by one.
Status cuda_transcribe_set(TranscribeMove* moves, int count, gpu::Stream user_stream) {
  std::vector<SetMember> members;
  members.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    TranscribeMove& move = moves[i];
    move.served = false;
    SetMember member;
    bool narrow = false;
    GDDT_CHECK(plan_move(move.from, move.from_typed, move.to, move.to_typed, &member.plan, &narrow));
    if (move.from.length == 0) {
      move.served = true;
      continue;
    }
    if (!narrow || member.plan.from.kind != WindowPlan::Kind::kStrided ||
        member.plan.to.kind != WindowPlan::Kind::kStrided) {
      GDDT_CHECK(cuda_transcribe(move.from, move.from_typed, move.to, move.to_typed, user_stream, &move.served));
      continue;
    }
    member.move = &move;
    members.push_back(member);
  }
  auto stream = static_cast<cudaStream_t>(user_stream);
  const auto same_width = [](const SetMember& a, const SetMember& b) { return a.plan.width == b.plan.width; };
  return launch_in_sets(members, kTranscribeSetMost, same_width, [&](const SetMember* const* set, int size) {
    GDDT_CHECK(launch_set(set, size, stream));
    for (int i = 0; i < size; ++i) set[i]->move->served = true;
    return GDDT_OK;
  });
}

}  // namespace gddt::pack::cuda_impl
