// The CUDA backend's planning and per-word index arithmetic, run on the CPU: every window is
// planned exactly as the backend plans it, then each word is moved the way the kernels move
// it (same argument structs, same offset functions), checking that every whole-word access is
// aligned to its width. Needs no GPU, so it runs wherever the CUDA backend is compiled.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

#include "pack/cuda/plan.hpp"
#include "pack/cuda/resident.hpp"
#include "random_cases.hpp"

namespace gddt::pack::cuda_impl {
namespace {

using gddt::testing::Case;

// Moves word `word` of a window whose typed offset is `typed_offset`, checking that both of its
// whole-word accesses are aligned to the width.
template <typename Index>
::testing::AssertionResult emulate_word(bool unpack, const WindowWords<Index>& a, int width, Index word,
                                        std::int64_t typed_offset) {
  char* typed = a.typed + typed_offset;
  char* packed = a.packed + (static_cast<std::int64_t>(word) * width - a.packed_shift);
  if (reinterpret_cast<std::uintptr_t>(typed) % width != 0 || reinterpret_cast<std::uintptr_t>(packed) % width != 0) {
    return ::testing::AssertionFailure() << "word " << word << " of width " << width << " is misaligned";
  }
  unpack ? std::memcpy(typed, packed, static_cast<std::size_t>(width))
         : std::memcpy(packed, typed, static_cast<std::size_t>(width));
  return ::testing::AssertionSuccess();
}

template <typename Index, typename TypedOffset>
void emulate_partial_words(bool unpack, const WindowWords<Index>& a, int width, TypedOffset typed_offset) {
  for (int i = 0; i < a.npartial; ++i) {
    const PartialWord<Index>& part = a.partial[i];
    char* typed = a.typed + typed_offset(part.word);
    char* packed = a.packed + (static_cast<std::int64_t>(part.word) * width - a.packed_shift);
    for (std::uint32_t b = part.first_byte; b < part.end_byte; ++b) unpack ? (typed[b] = packed[b]) : (packed[b] = typed[b]);
  }
}

// Moves the words of a window one by one, as move_words() in kernels.cuh does.
template <typename Index, typename TypedOffset>
::testing::AssertionResult emulate_words(bool unpack, const WindowWords<Index>& a, int width,
                                         TypedOffset typed_offset) {
  for (Index word = a.word_begin; word < a.word_end; ++word) {
    ::testing::AssertionResult moved = emulate_word(unpack, a, width, word, typed_offset(word));
    if (!moved) return moved;
  }
  emulate_partial_words(unpack, a, width, typed_offset);
  return ::testing::AssertionSuccess();
}

// Moves a block-list window in the order of move_spans() in block_list_kernels.cuh: spans of
// `rows` rows of 32 words, each lane finding its pieces with a cursor. Every offset found with
// the cursor must equal the one found by searching the table, which the other kernels use, and
// the one found by searching `plain`, the same table without a word map.
template <typename Index>
::testing::AssertionResult emulate_spans(bool unpack, const BlockListArgs<Index>& args, const PieceTable& table,
                                         const PieceTable& plain, int width, int rows) {
  const WindowWords<Index>& a = args.window;
  const Index span_words = Index{32} * static_cast<Index>(rows);
  for (Index span = a.word_begin; span < a.word_end; span += span_words) {
    for (Index lane = 0; lane < 32; ++lane) {
      std::uint32_t cursor = table.npieces;
      for (int row = 0; row < rows; ++row) {
        const Index word = span + static_cast<Index>(row) * 32 + lane;
        if (word >= a.word_end) break;
        const auto position = static_cast<Index>(word * width);
        const std::int64_t stepped = block_list_offset(args, table, position, &cursor);
        const std::int64_t searched = block_list_offset(args, table, position);
        const std::int64_t without_map = block_list_offset(args, plain, position);
        if (stepped != searched || searched != without_map) {
          return ::testing::AssertionFailure() << "word " << word << ": typed offset " << stepped << " by cursor, "
                                               << searched << " by search, " << without_map << " without a word map";
        }
        ::testing::AssertionResult moved = emulate_word(unpack, a, width, word, stepped);
        if (!moved) return moved;
      }
    }
  }
  emulate_partial_words(unpack, a, width,
                        [&](Index word) { return block_list_offset(args, table, static_cast<Index>(word * width)); });
  return ::testing::AssertionSuccess();
}

template <typename Index>
::testing::AssertionResult emulate_plan(bool unpack, const Window& w, const WindowPlan& plan, char* typed,
                                        char* packed) {
  switch (plan.kind) {
    case WindowPlan::Kind::kCopy: {  // as the resident kernel moves it
      const StridedPlan range = plan_range(plan.copy_offset, typed, packed, w.length);
      const StridedArgs<Index> args = strided_args<Index>(range, typed, packed);
      return emulate_words(unpack, args.window, range.words.width,
                           [&](Index word) { return strided_offset<kMaxWordDims>(args, word); });
    }
    case WindowPlan::Kind::kStrided: {
      const StridedArgs<Index> args = strided_args<Index>(plan.strided, typed, packed);
      return emulate_words(unpack, args.window, plan.strided.words.width,
                           [&](Index word) { return strided_offset<kMaxWordDims>(args, word); });
    }
    case WindowPlan::Kind::kBlockList: {
      const PieceTableImage image = build_piece_table(*w.layout);
      const PieceTableImage plain = build_piece_table(*w.layout, WordMap::kNone);
      const BlockListArgs<Index> args =
          block_list_args<Index>(plan.block_list, image.table_at(image.storage.data()), typed, packed);
      // Read through a moved copy, as the kernel reads its shared-memory copy.
      const std::vector<std::uint64_t> copy = image.storage;
      const PieceTable moved = args.table.moved_to(copy.data());
      // Spans of every length the launches use, 1 .. kBlockListRowsPerSpan rows, by window.
      const int rows = 1 + static_cast<int>(static_cast<std::uint64_t>(w.offset + w.length) % kBlockListRowsPerSpan);
      return emulate_spans(unpack, args, moved, plain.table_at(plain.storage.data()), plan.block_list.words.width,
                           rows);
    }
  }
  return ::testing::AssertionFailure() << "unknown plan";
}

// Calls fn with the kernel arguments of one side of a typed-to-typed plan.
template <typename Index, typename Fn>
::testing::AssertionResult with_side(const WindowPlan& plan, const PieceTableImage& image, const void* typed, Fn&& fn) {
  if (plan.kind == WindowPlan::Kind::kBlockList) {
    return fn(block_list_args<Index>(plan.block_list, image.table_at(image.storage.data()), typed, nullptr));
  }
  return fn(strided_args<Index>(plan.strided, typed, nullptr));
}

// Moves every word of a typed-to-typed plan as transcribe.cu's kernel does, checking that both
// of each word's accesses are aligned to the width.
template <typename Index>
::testing::AssertionResult emulate_transcribe(const TranscribePlan& plan, const Window& from, const void* from_typed,
                                              const Window& to, void* to_typed) {
  const PieceTableImage from_image = plan.from.kind == WindowPlan::Kind::kBlockList ? build_piece_table(*from.layout)
                                                                                     : PieceTableImage{};
  const PieceTableImage to_image =
      plan.to.kind == WindowPlan::Kind::kBlockList ? build_piece_table(*to.layout) : PieceTableImage{};
  const int width = plan.width;
  const auto shift = static_cast<Index>(plan.to_word_shift);
  return with_side<Index>(plan.from, from_image, from_typed, [&](const auto& f) {
    return with_side<Index>(plan.to, to_image, to_typed, [&](const auto& t) -> ::testing::AssertionResult {
      const PieceTable from_table = table_of(f), to_table = table_of(t);
      const auto address = [&](Index word, const char** source, char** destination) {
        *source = f.window.typed + side_offset(f, from_table, width, word);
        *destination = t.window.typed + side_offset(t, to_table, width, static_cast<Index>(word + shift));
      };
      for (Index word = f.window.word_begin; word < f.window.word_end; ++word) {
        const char* source;
        char* destination;
        address(word, &source, &destination);
        if (reinterpret_cast<std::uintptr_t>(source) % width != 0 ||
            reinterpret_cast<std::uintptr_t>(destination) % width != 0) {
          return ::testing::AssertionFailure() << "word " << word << " of width " << width << " is misaligned";
        }
        std::memcpy(destination, source, static_cast<std::size_t>(width));
      }
      for (int i = 0; i < f.window.npartial; ++i) {
        const PartialWord<Index>& part = f.window.partial[i];
        const char* source;
        char* destination;
        address(part.word, &source, &destination);
        for (std::uint32_t b = part.first_byte; b < part.end_byte; ++b) destination[b] = source[b];
      }
      return ::testing::AssertionSuccess();
    });
  });
}

// Host memory standing in for device memory; the backend calls become emulations. With
// `wide` the 64-bit index arithmetic runs even where the backend would use 32-bit.
struct EmulatedBackend {
  explicit EmulatedBackend(bool wide_index) : wide(wide_index), typed(kBytes), packed(kBytes) {}
  static constexpr std::size_t kBytes = 16 << 20;
  bool wide;
  std::vector<char> typed, packed;
  std::string failure;

  char* typed_buffer() { return typed.data(); }
  char* packed_buffer() { return packed.data(); }
  void upload(char* dst, const char* src, std::int64_t bytes) { std::memcpy(dst, src, static_cast<std::size_t>(bytes)); }
  void download(char* dst, const char* src, std::int64_t bytes) { std::memcpy(dst, src, static_cast<std::size_t>(bytes)); }
  void synchronize() {}
  Status pack(const Window& w, const void* t, void* p) { return move(false, w, const_cast<void*>(t), p); }
  Status unpack(const Window& w, void* t, const void* p) { return move(true, w, t, const_cast<void*>(p)); }

  Status transcribe(const Window& from, const void* from_typed, const Window& to, void* to_typed) {
    const TranscribePlan plan = plan_transcribe(from, from_typed, to, to_typed);
    const bool narrow = !wide && fits_narrow_index(word_plan(plan.from)->largest_operand) &&
                        fits_narrow_index(word_plan(plan.to)->largest_operand);
    ::testing::AssertionResult result = narrow
                                            ? emulate_transcribe<std::uint32_t>(plan, from, from_typed, to, to_typed)
                                            : emulate_transcribe<std::uint64_t>(plan, from, from_typed, to, to_typed);
    if (result) return GDDT_OK;
    failure = result.message();
    return GDDT_ERR_INTERNAL;
  }

  Status move(bool unpack, const Window& w, void* t, void* p) {
    const WindowPlan plan = plan_window(w, t, p);
    const std::uint64_t largest =
        plan.kind == WindowPlan::Kind::kStrided ? plan.strided.words.largest_operand : plan.block_list.words.largest_operand;
    const bool narrow = !wide && plan.kind != WindowPlan::Kind::kCopy && fits_narrow_index(largest);
    ::testing::AssertionResult result =
        narrow ? emulate_plan<std::uint32_t>(unpack, w, plan, static_cast<char*>(t), static_cast<char*>(p))
               : emulate_plan<std::uint64_t>(unpack, w, plan, static_cast<char*>(t), static_cast<char*>(p));
    if (result) return GDDT_OK;
    failure = result.message();
    return GDDT_ERR_INTERNAL;
  }
};

TEST(CudaPlan, DividerMatchesDivision) {
  std::mt19937_64 rng(gddt::testing::test_seed());
  auto check = [&](auto tag, std::uint64_t limit) {
    using Index = decltype(tag);
    std::vector<std::uint64_t> divisors = {1, 2, 3, 5, 7, 10, 16, 255, 256, 257, 1000, 4096, 65535, limit / 3, limit - 1, limit};
    for (int i = 0; i < 200; ++i) divisors.push_back(rng() % limit + 1);
    for (std::uint64_t d : divisors) {
      const auto div = Divider<Index>::make(static_cast<Index>(d));
      std::vector<std::uint64_t> dividends = {0, 1, d - 1, d, d + 1, 2 * d - 1, limit - 1, limit - d};
      for (int i = 0; i < 200; ++i) dividends.push_back(rng() % limit);
      for (std::uint64_t n : dividends) {
        if (n >= limit) continue;
        Index remainder;
        const Index q = div.divide(static_cast<Index>(n), &remainder);
        ASSERT_EQ(q, n / d) << n << " / " << d;
        ASSERT_EQ(remainder, n % d) << n << " % " << d;
      }
    }
  };
  check(std::uint32_t{}, std::uint64_t{1} << 31);
  check(std::uint64_t{}, std::uint64_t{1} << 63);
}

TEST(CudaPlan, RandomWindowsMatchHostWalk) {
  const std::uint64_t seed = gddt::testing::test_seed();
  std::printf("seed %llu (set GDDT_TEST_SEED to change)\n", static_cast<unsigned long long>(seed));
  gddt::testing::LayoutGenerator gen(seed);
  EmulatedBackend narrow(false), wide(true);
  int failures = 0;
  for (int i = 0; i < 3000 && failures < 5; ++i) {
    // Mostly small streams, every 10th up to 1 MiB; the 64-bit arithmetic on every 4th.
    const Case c = gddt::testing::random_case(i, &gen, i % 10 == 9 ? 1 << 20 : 64 << 10, 8 << 20);
    for (EmulatedBackend* backend : {&narrow, &wide}) {
      if (backend->wide && i % 4 != 0) continue;
      ::testing::AssertionResult result = gddt::testing::check_case(c, backend, &gen.rng());
      if (!result) {
        ++failures;
        ADD_FAILURE() << (backend->wide ? "64-bit index: " : "") << result.message() << "\n" << backend->failure
                      << "\nseed " << seed;
        break;
      }
    }
  }
}

// Typed to typed between two random layouts (the direct plane's read when both sides are not
// contiguous), window by window, with the destination's window shifted against the source's.
TEST(CudaPlan, RandomTranscribesMatchPackThenUnpack) {
  const std::uint64_t seed = gddt::testing::test_seed();
  std::printf("seed %llu (set GDDT_TEST_SEED to change)\n", static_cast<unsigned long long>(seed));
  gddt::testing::LayoutGenerator gen(seed + 11);
  EmulatedBackend narrow(false), wide(true);
  int failures = 0;
  for (int i = 0; i < 1500 && failures < 5; ++i) {
    const std::int64_t stream = i % 10 == 9 ? 1 << 20 : 64 << 10;
    const Case from = gddt::testing::random_case(i, &gen, stream, 8 << 20);
    const Case to = gddt::testing::random_case(i, &gen, stream, 8 << 20);
    for (EmulatedBackend* backend : {&narrow, &wide}) {
      if (backend->wide && i % 4 != 0) continue;
      ::testing::AssertionResult result = gddt::testing::check_transcribe(from, to, backend, &gen.rng());
      if (!result) {
        ++failures;
        ADD_FAILURE() << (backend->wide ? "64-bit index: " : "") << result.message() << "\n" << backend->failure
                      << "\nseed " << seed;
        break;
      }
    }
  }
}

TEST(CudaPlan, TranscribeWordsAsWideAsBothSidesAllow) {
  alignas(16) static char from_typed[1 << 14], to_typed[1 << 14];
  type::Layout wide, narrow;
  ASSERT_EQ(type::make_repeat(type::make_block(64), 16, 128, &wide), GDDT_OK);
  ASSERT_EQ(type::make_repeat(type::make_block(4), 256, 12, &narrow), GDDT_OK);
  const TranscribePlan same = plan_transcribe(Window{&wide, 1, 0, 1024}, from_typed, Window{&wide, 1, 0, 1024}, to_typed);
  EXPECT_EQ(same.width, 16);
  EXPECT_EQ(same.to_word_shift, 0);
  const TranscribePlan mixed =
      plan_transcribe(Window{&wide, 1, 0, 1024}, from_typed, Window{&narrow, 1, 0, 1024}, to_typed);
  EXPECT_EQ(mixed.width, 4);
  // Windows cut at positions that differ by 2 mod 4 line up only in 2-byte words.
  const TranscribePlan cut =
      plan_transcribe(Window{&wide, 1, 8, 500}, from_typed, Window{&narrow, 1, 6, 500}, to_typed);
  EXPECT_EQ(cut.width, 2);
}

type::Layout vector_layout(std::int64_t blocks, std::int64_t block, std::int64_t stride) {
  type::Layout out;
  EXPECT_EQ(type::make_repeat(type::make_block(block), blocks, stride, &out), GDDT_OK);
  return out;
}

TEST(CudaPlan, WordMapWhereTheGroupFitsSharedMemory) {
  const type::Layout small = vector_layout(100, 64, 128);  // 400 words of 16 bytes
  const PieceTableImage image = build_piece_table(small);
  const PieceTable table = image.table_at(image.storage.data());
  ASSERT_NE(table.word_map, nullptr);
  EXPECT_EQ(table.map_shift, 4u);
  EXPECT_LE(image.bytes(), std::size_t{kMaxSharedTableBytes});
  for (std::uint64_t in_group = 0; in_group < 6400; in_group += 4) {
    ASSERT_EQ(mapped_offset(table, in_group), static_cast<std::int64_t>(in_group / 64 * 128 + in_group % 64))
        << "group byte " << in_group;
  }
  EXPECT_EQ(build_piece_table(small, WordMap::kNone).table_at(nullptr).word_map, nullptr);
  const type::Layout large = vector_layout(100000, 64, 128);
  const PieceTableImage large_image = build_piece_table(large);
  EXPECT_EQ(large_image.table_at(large_image.storage.data()).word_map, nullptr) << "6.4 MB of group cannot be mapped";
}

TEST(CudaPlan, ChoosesTheWidestAlignedWord) {
  const type::Layout vector = vector_layout(100, 64, 128);
  alignas(16) static char typed[16 << 10];
  alignas(16) static char packed[8 << 10];
  auto width = [&](const char* t, const char* p, std::int64_t offset, std::int64_t length) {
    const WindowPlan plan = plan_window(Window{&vector, 1, offset, length}, t, p);
    EXPECT_EQ(plan.kind, WindowPlan::Kind::kStrided);
    return plan.strided.words.width;
  };
  EXPECT_EQ(width(typed, packed, 0, 6400), 16);
  EXPECT_EQ(width(typed + 4, packed, 0, 6400), 4);
  EXPECT_EQ(width(typed, packed + 8, 0, 6400), 8);
  // A window starting mid-word keeps the width when the packed pointer moves with it...
  EXPECT_EQ(width(typed, packed + 3, 3, 6000), 16);
  // ...and narrows when it does not.
  EXPECT_EQ(width(typed, packed, 3, 6000), 1);
  const type::Layout odd = vector_layout(100, 6, 8);
  const WindowPlan plan = plan_window(Window{&odd, 1, 0, 600}, typed, packed);
  EXPECT_EQ(plan.strided.words.width, 2);
}

TEST(CudaPlan, TypedSectorsCountWordsOrSpan) {
  // One 4-byte word every 252 bytes: every word is a sector of its own.
  const type::Layout sparse = vector_layout(4096, 4, 252);
  EXPECT_EQ(typed_sectors(Window{&sparse, 1, 0, 16 << 10}, 4), 4096u);
  EXPECT_EQ(typed_sectors(Window{&sparse, 1, 0, 4 << 10}, 4), 1024u);
  // Every other 4-byte word: eight words share a sector, so the span decides.
  const type::Layout dense = vector_layout(4096, 4, 8);
  EXPECT_NEAR(static_cast<double>(typed_sectors(Window{&dense, 1, 0, 16 << 10}, 4)), 1024.0, 1.0);
  // Elements spread out by their extent count by it, not by their true span.
  type::Layout spread = dense;
  type::set_bounds(&spread, 0, 4 * dense.extent);
  EXPECT_NEAR(static_cast<double>(typed_sectors(Window{&spread, 4, 0, 64 << 10}, 4)), 16384.0, 4.0);
}

TEST(CudaPlan, ContiguousWindowsAreCopies) {
  const type::Layout block = type::make_block(64);
  alignas(16) static char buffer[1 << 12];
  WindowPlan plan = plan_window(Window{&block, 10, 100, 500}, buffer, buffer);
  EXPECT_EQ(plan.kind, WindowPlan::Kind::kCopy);
  EXPECT_EQ(plan.copy_offset, 100);

  const type::Layout vector = vector_layout(4, 64, 100);
  plan = plan_window(Window{&vector, 3, 64 * 5 + 10, 40}, buffer, buffer);  // inside element 1, block 1
  EXPECT_EQ(plan.kind, WindowPlan::Kind::kCopy);
  EXPECT_EQ(plan.copy_offset, vector.extent + 100 + 10);

  plan = plan_window(Window{&vector, 3, 60, 10}, buffer, buffer);  // across two blocks
  EXPECT_EQ(plan.kind, WindowPlan::Kind::kStrided);
}

// The resident kernel moves a copy as one dimension of words as wide as both ends allow, the
// bytes past the last whole word as a partial word.
TEST(CudaPlan, CopiesAsOneDimensionOfWords) {
  alignas(16) static char typed[256], packed[256];
  struct Case {
    std::int64_t typed_offset, packed_offset, length;
    int width;
  };
  for (const Case& c : {Case{0, 0, 100, 16}, Case{8, 0, 64, 8}, Case{4, 12, 40, 4}, Case{3, 0, 50, 1},
                        Case{32, 16, 7, 16}}) {
    const StridedPlan plan = plan_range(c.typed_offset, typed, packed + c.packed_offset, c.length);
    EXPECT_EQ(plan.words.width, c.width) << "typed +" << c.typed_offset << ", packed +" << c.packed_offset;
    for (int i = 0; i < 256; ++i) typed[i] = static_cast<char>(i);
    std::memset(packed, -1, sizeof packed);
    const StridedArgs<std::uint32_t> args = strided_args<std::uint32_t>(plan, typed, packed + c.packed_offset);
    ASSERT_TRUE(emulate_words(false, args.window, plan.words.width,
                              [&](std::uint32_t word) { return strided_offset<kMaxWordDims>(args, word); }));
    for (int i = 0; i < 256; ++i) {
      const std::int64_t at = i - c.packed_offset;
      const char expected = at >= 0 && at < c.length ? typed[c.typed_offset + at] : static_cast<char>(-1);
      ASSERT_EQ(packed[i], expected) << "packed byte " << i << " of a copy of " << c.length << " bytes";
    }
  }
}

TEST(CudaPlan, ElementCountMergesIntoTheOuterDimension) {
  // 8 blocks of 16 bytes every 32; elements every 256: one dimension of 8 * count blocks.
  const type::Layout vector = vector_layout(8, 16, 32);
  ASSERT_EQ(vector.extent, 7 * 32 + 16);
  type::Layout resized = vector;
  type::set_bounds(&resized, 0, 256);
  alignas(16) static char buffer[1 << 14];
  const WindowPlan plan = plan_window(Window{&resized, 40, 0, 40 * 128}, buffer, buffer);
  ASSERT_EQ(plan.kind, WindowPlan::Kind::kStrided);
  ASSERT_EQ(plan.strided.ndims, 1);
  EXPECT_EQ(plan.strided.dims[0].count, 8 * 40);
  EXPECT_EQ(plan.strided.dims[0].stride, 32);
}

TEST(CudaPlan, WideIndexWhenPositionsPass31Bits) {
  // One piece of 3 GiB then a small one: positions near the end exceed 2^31.
  const std::int64_t big = std::int64_t{3} << 30;
  type::Layout list;
  ASSERT_EQ(type::make_concat({type::make_block(big), type::make_shifted(type::make_block(100), big + 64)}, &list),
            GDDT_OK);
  ASSERT_EQ(list.shape, type::Shape::kBlockList);
  alignas(16) static char buffer[1 << 12];
  const Window w{&list, 1, big - 1000, 1100};
  const WindowPlan plan = plan_window(w, buffer, buffer);
  EXPECT_FALSE(fits_narrow_index(plan.block_list.words.largest_operand));

  // Emulated on a small buffer standing for the touched bytes [big - 1000, big + 164).
  std::vector<char> typed_bytes(2048), packed(1100), expected(1100);
  std::mt19937_64 rng(1);
  gddt::testing::fill_random(&typed_bytes, &rng);
  char* typed = typed_bytes.data() - (big - 1000);
  ASSERT_TRUE(emulate_plan<std::uint64_t>(false, w, plan_window(w, typed, packed.data()), typed, packed.data()));
  gddt::testing::reference_move<true>(w, typed, expected.data());
  EXPECT_EQ(packed, expected);
}

// The resident kernel's step-aside (RestartWatch): three restarts in a row, each within the idle
// time of the exit before it and after a kernel of few jobs; anything else starts the count anew.
TEST(ResidentPolicy, StepsAsideAfterThreeAwaitedExitsInARow) {
  constexpr std::uint64_t kIdle = 50000, kSoon = 8000, kLate = 900000, kFew = 3;
  RestartWatch watch;
  EXPECT_FALSE(watch.awaited(kSoon, kIdle, kFew));
  EXPECT_FALSE(watch.awaited(kSoon, kIdle, kFew));
  EXPECT_TRUE(watch.awaited(kSoon, kIdle, kFew));

  RestartWatch broken;  // a late restart in between: windows that came by chance
  EXPECT_FALSE(broken.awaited(kSoon, kIdle, kFew));
  EXPECT_FALSE(broken.awaited(kSoon, kIdle, kFew));
  EXPECT_FALSE(broken.awaited(kLate, kIdle, kFew));
  EXPECT_FALSE(broken.awaited(kSoon, kIdle, kFew));
  EXPECT_FALSE(broken.awaited(kSoon, kIdle, kFew));
  EXPECT_TRUE(broken.awaited(kSoon, kIdle, kFew));

  RestartWatch busy;  // kernels that saved more than the waits cost
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(busy.awaited(kSoon, kIdle, RestartWatch::kJobsWorthAWait));
  EXPECT_FALSE(busy.awaited(kSoon, kIdle, RestartWatch::kJobsWorthAWait - 1));

  RestartWatch at_the_edge;  // a gap of the whole idle time no longer counts
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(at_the_edge.awaited(kIdle, kIdle, kFew));
}

TEST(ResidentPolicy, AJobPostedBeforeTheKernelMayExitLandsInTime) {
  using std::chrono::microseconds;
  const microseconds idle(50);
  EXPECT_TRUE(JobLanding::in_time(microseconds(0), idle));
  EXPECT_TRUE(JobLanding::in_time(microseconds(39), idle));
  EXPECT_FALSE(JobLanding::in_time(microseconds(40), idle)) << "within the margin of the kernel's exit";
  EXPECT_FALSE(JobLanding::in_time(microseconds(50), idle));
  EXPECT_FALSE(JobLanding::in_time(microseconds(0), microseconds(10))) << "an idle time within the margin";
}

}  // namespace
}  // namespace gddt::pack::cuda_impl
