// Random layouts, counts and window splits for the CUDA backend tests, and the host
// reference they are checked against (type::for_each_run on host memory).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pack/backend.hpp"
#include "type/layout.hpp"

namespace gddt::testing {

// The seed of a test run: GDDT_TEST_SEED when set, else a fixed one.
inline std::uint64_t test_seed() {
  const char* text = std::getenv("GDDT_TEST_SEED");
  return text != nullptr ? std::strtoull(text, nullptr, 0) : 20261121;
}

// A layout with the expression that built it, for failure messages.
struct RandomLayout {
  type::Layout layout;
  std::string recipe;
};

// Builds layouts through the public builders: blocks, repeats with gaps, negative, zero and
// overlapping strides, concatenations of shifted parts in any order, and resized bounds.
// Every byte count and stride is a multiple of one unit drawn per layout, so that the word
// widths 1..16 all occur.
class LayoutGenerator {
 public:
  explicit LayoutGenerator(std::uint64_t seed) : rng_(seed) {}

  RandomLayout next() {
    for (;;) {
      unit_ = pick({1, 2, 4, 8, 16, 16, 4, 8});
      RandomLayout made = build(static_cast<int>(uniform(0, 3)));
      const type::Layout& l = made.layout;
      if (l.shape == type::Shape::kEmpty || l.size > kMaxSize || l.true_ub - l.true_lb > kMaxSpan) continue;
      return made;
    }
  }

  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  std::int64_t pick(std::initializer_list<std::int64_t> values) {
    return *(values.begin() + uniform(0, static_cast<std::int64_t>(values.size()) - 1));
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  static constexpr std::int64_t kMaxSize = 256 * 1024;
  static constexpr std::int64_t kMaxSpan = 1024 * 1024;

  RandomLayout build(int depth) {
    const std::int64_t kind = depth == 0 ? 0 : uniform(0, 9);
    if (kind <= 1) return leaf();
    if (kind <= 5) return repeat(depth);
    if (kind <= 8) return concat(depth);
    return resized(depth);
  }

  RandomLayout leaf() {
    const std::int64_t bytes = unit_ * pick({1, 1, 2, 3, 4, 5, 8, 16, 64, 250, 1024});
    return {type::make_block(bytes), "block(" + std::to_string(bytes) + ")"};
  }

  // Natural step of one inner element: its extent, at least one unit.
  std::int64_t step_of(const type::Layout& l) const { return std::max<std::int64_t>(l.extent, unit_); }

  RandomLayout repeat(int depth) {
    RandomLayout inner = build(depth - 1);
    const std::int64_t count = pick({2, 3, 4, 7, 16, 33, 100});
    const std::int64_t step = step_of(inner.layout);
    std::int64_t stride = step + unit_ * pick({0, 0, 1, 2, 5});
    switch (uniform(0, 9)) {
      case 0: stride = -stride; break;                        // backwards
      case 1: stride = 0; break;                              // the same bytes again
      case 2: stride = std::max<std::int64_t>(unit_, step / 2 / unit_ * unit_); break;  // overlapping
      default: break;
    }
    type::Layout out;
    if (is_error(type::make_repeat(inner.layout, count, stride, &out))) return inner;
    return {std::move(out), "repeat(" + inner.recipe + ", " + std::to_string(count) + ", " + std::to_string(stride) + ")"};
  }

  RandomLayout concat(int depth) {
    const int parts = static_cast<int>(uniform(2, 4));
    std::vector<type::Layout> layouts;
    std::string recipe = "concat(";
    std::int64_t at = 0;
    for (int i = 0; i < parts; ++i) {
      RandomLayout part = build(depth - 1);
      // Mostly ascending with gaps; sometimes a part placed before the others.
      const std::int64_t delta = chance(0.2) ? -unit_ * uniform(1, 64) : at + unit_ * pick({0, 0, 1, 3});
      layouts.push_back(type::make_shifted(part.layout, delta - part.layout.true_lb));
      recipe += (i ? ", " : "") + part.recipe + "@" + std::to_string(delta);
      at = std::max(at, delta + part.layout.true_ub - part.layout.true_lb);
    }
    type::Layout out;
    if (is_error(type::make_concat(layouts, &out))) return {layouts[0], "shifted first part of " + recipe + ")"};
    return {std::move(out), recipe + ")"};
  }

  RandomLayout resized(int depth) {
    RandomLayout inner = build(depth - 1);
    const std::int64_t lb = inner.layout.lb - unit_ * pick({0, 0, 1, 4});
    const std::int64_t extent = inner.layout.extent + (inner.layout.lb - lb) + unit_ * pick({0, 1, 2, 7});
    type::set_bounds(&inner.layout, lb, extent);
    return {std::move(inner.layout),
            "resized(" + inner.recipe + ", lb " + std::to_string(lb) + ", extent " + std::to_string(extent) + ")"};
  }

  std::mt19937_64 rng_;
  std::int64_t unit_ = 1;
};

// The typed bytes of `count` elements relative to the buffer: [span_lb, span_ub).
struct Span {
  std::int64_t lb = 0;
  std::int64_t bytes = 0;
};
inline Span typed_span(const type::Layout& layout, std::int64_t count) {
  return {layout.span_lb(count), layout.span_ub(count) - layout.span_lb(count)};
}

// Host reference: packs (kPack) or unpacks a window between host copies. `typed` points at
// the buffer origin (offset 0), `packed` at the window's first packed byte.
template <bool kPack>
void reference_move(const pack::Window& w, char* typed, char* packed) {
  type::for_each_run(*w.layout, w.count, w.offset, w.length, [&](std::int64_t t, std::int64_t p, std::int64_t n) {
    if (kPack) {
      std::memcpy(packed + p, typed + t, static_cast<std::size_t>(n));
    } else {
      std::memcpy(typed + t, packed + p, static_cast<std::size_t>(n));
    }
  });
}

// True when some typed byte appears twice in the stream: unpacking is then undefined.
inline bool overlaps(const type::Layout& layout, std::int64_t count) {
  const Span span = typed_span(layout, count);
  std::vector<unsigned char> seen(static_cast<std::size_t>(span.bytes), 0);
  bool twice = false;
  type::for_each_run(layout, count, 0, layout.size * count, [&](std::int64_t t, std::int64_t, std::int64_t n) {
    for (std::int64_t b = 0; b < n; ++b) {
      unsigned char& mark = seen[static_cast<std::size_t>(t + b - span.lb)];
      twice |= mark != 0;
      mark = 1;
    }
  });
  return twice;
}

inline void fill_random(std::vector<char>* bytes, std::mt19937_64* rng) {
  for (char& b : *bytes) b = static_cast<char>((*rng)() & 0xff);
}

// One test case: a layout, a count, the packed stream cut into windows, and how far the typed
// and packed pointers sit off 16-byte alignment.
struct Case {
  int index = 0;
  RandomLayout made;
  std::int64_t count = 1;
  std::vector<std::pair<std::int64_t, std::int64_t>> windows;  // (offset, length)
  std::int64_t typed_skew = 0;
  std::int64_t packed_skew = 0;

  std::int64_t total() const { return made.layout.size * count; }
  pack::Window window(std::size_t i) const { return pack::Window{&made.layout, count, windows[i].first, windows[i].second}; }

  std::string describe() const {
    std::string text = "case " + std::to_string(index) + ": " + made.recipe + "\n  layout " + made.layout.describe() +
                       "\n  count " + std::to_string(count) + ", " + std::to_string(total()) + " packed bytes in " +
                       std::to_string(windows.size()) + " window(s), typed skew " + std::to_string(typed_skew) +
                       ", packed skew " + std::to_string(packed_skew) + "\n  windows";
    for (std::size_t i = 0; i < windows.size() && i < 8; ++i) {
      text += " [" + std::to_string(windows[i].first) + "+" + std::to_string(windows[i].second) + ")";
    }
    if (windows.size() > 8) text += " ...";
    return text;
  }
};

// A random case whose packed stream stays below `max_stream` bytes and whose typed span stays
// below `max_span`. Window lengths start and end anywhere: single bytes, mid-block and mid-word
// cuts, engine-like chunks, or the whole stream at once.
inline Case random_case(int index, LayoutGenerator* gen, std::int64_t max_stream, std::int64_t max_span) {
  Case c;
  c.index = index;
  c.made = gen->next();
  const type::Layout& layout = c.made.layout;
  c.count = std::max<std::int64_t>(1, std::min(gen->pick({1, 1, 2, 3, 5, 17, 1000, 100000}), max_stream / layout.size));
  while (c.count > 1 && typed_span(layout, c.count).bytes > max_span) c.count /= 2;
  const std::int64_t total = c.total();
  const std::int64_t mode = gen->uniform(0, 3);
  const std::int64_t chunk = gen->pick({16, 64, 4096, 65536});
  for (std::int64_t offset = 0; offset < total;) {
    std::int64_t length = total - offset;
    if (mode == 1) length = gen->uniform(1, std::max<std::int64_t>(1, total / 3));
    if (mode == 2) length = gen->pick({1, 2, 3, 5, 7, 13, 16, 17, 31, 100, 1000, 5000});
    if (mode == 3) length = chunk;
    length = std::min(length, total - offset);
    c.windows.emplace_back(offset, length);
    offset += length;
  }
  c.typed_skew = gen->chance(0.7) ? 0 : gen->uniform(1, 15);
  c.packed_skew = gen->chance(0.7) ? 0 : gen->uniform(1, 15);
  return c;
}

// Where a case's bytes sit in the two buffers a test provides: the typed buffer's origin (the
// typed pointer handed to the backend) and the packed stream's first byte, with a poisoned
// margin around both.
struct CaseGeometry {
  static constexpr std::int64_t kMargin = 64;
  std::int64_t typed_origin = 0;
  std::int64_t typed_bytes = 0;
  std::int64_t packed_start = 0;
  std::int64_t packed_bytes = 0;

  explicit CaseGeometry(const Case& c) {
    const Span span = typed_span(c.made.layout, c.count);
    typed_origin = kMargin + c.typed_skew - span.lb;
    typed_bytes = span.bytes + 2 * kMargin + 16;
    packed_start = kMargin + c.packed_skew;
    packed_bytes = c.total() + 2 * kMargin + 16;
  }
};

// Runs a case through a backend environment and compares every byte of both buffers with the
// host reference: pack, then (when the typemap has no overlaps) unpack. The environment
// provides typed_buffer()/packed_buffer() (device-accessible), upload(dst, src, bytes),
// download(dst, src, bytes), pack(window, typed, packed), unpack(...) and synchronize().
template <typename Env>
::testing::AssertionResult check_case(const Case& c, Env* env, std::mt19937_64* rng) {
  const CaseGeometry g(c);
  const std::int64_t total = c.total();
  char* typed = env->typed_buffer() + g.typed_origin;
  char* packed = env->packed_buffer() + g.packed_start;
  const pack::Window whole{&c.made.layout, c.count, 0, total};
  constexpr char kPoison = static_cast<char>(0xA5);

  std::vector<char> typed_host(static_cast<std::size_t>(g.typed_bytes));
  std::vector<char> packed_host(static_cast<std::size_t>(g.packed_bytes), kPoison);
  fill_random(&typed_host, rng);
  env->upload(env->typed_buffer(), typed_host.data(), g.typed_bytes);
  env->upload(env->packed_buffer(), packed_host.data(), g.packed_bytes);
  for (std::size_t i = 0; i < c.windows.size(); ++i) {
    const Status status = env->pack(c.window(i), typed, packed + c.windows[i].first);
    if (status != GDDT_OK) {
      return ::testing::AssertionFailure() << "pack of window " << i << " returned " << status_name(status) << "\n"
                                           << c.describe();
    }
  }
  env->synchronize();
  std::vector<char> got(packed_host.size());
  env->download(got.data(), env->packed_buffer(), g.packed_bytes);
  reference_move<true>(whole, typed_host.data() + g.typed_origin, packed_host.data() + g.packed_start);
  auto mismatch = std::mismatch(got.begin(), got.end(), packed_host.begin());
  if (mismatch.first != got.end()) {
    const std::int64_t at = (mismatch.first - got.begin()) - g.packed_start;
    std::string where = at < 0 || at >= total ? "poisoned margin (written outside the stream)" : "stream byte";
    for (std::size_t i = 0; i < c.windows.size() && at >= 0 && at < total; ++i) {
      if (at >= c.windows[i].first && at < c.windows[i].first + c.windows[i].second) {
        where += " in window " + std::to_string(i);
      }
    }
    return ::testing::AssertionFailure() << "PACK mismatch at packed position " << at << " (" << where
                                         << "): expected " << (+*mismatch.second & 0xff) << ", got "
                                         << (+*mismatch.first & 0xff) << "\n"
                                         << c.describe();
  }
  if (overlaps(c.made.layout, c.count)) return ::testing::AssertionSuccess();

  std::vector<char> background(static_cast<std::size_t>(g.typed_bytes));
  std::vector<char> stream(static_cast<std::size_t>(g.packed_bytes));
  fill_random(&background, rng);
  fill_random(&stream, rng);
  env->upload(env->typed_buffer(), background.data(), g.typed_bytes);
  env->upload(env->packed_buffer(), stream.data(), g.packed_bytes);
  for (std::size_t i = 0; i < c.windows.size(); ++i) {
    const Status status = env->unpack(c.window(i), typed, packed + c.windows[i].first);
    if (status != GDDT_OK) {
      return ::testing::AssertionFailure() << "unpack of window " << i << " returned " << status_name(status)
                                           << "\n" << c.describe();
    }
  }
  env->synchronize();
  std::vector<char> typed_got(background.size());
  env->download(typed_got.data(), env->typed_buffer(), g.typed_bytes);
  std::vector<char> expected = background;
  reference_move<false>(whole, expected.data() + g.typed_origin, stream.data() + g.packed_start);
  auto bad = std::mismatch(typed_got.begin(), typed_got.end(), expected.begin());
  if (bad.first != typed_got.end()) {
    const std::int64_t at = (bad.first - typed_got.begin()) - g.typed_origin;
    std::int64_t position = -1;
    type::for_each_run(c.made.layout, c.count, 0, total, [&](std::int64_t t, std::int64_t p, std::int64_t n) {
      if (at >= t && at < t + n) position = p + (at - t);
    });
    const std::string what = position < 0 ? "a hole or margin byte (must stay untouched)"
                                           : "typemap byte of packed position " + std::to_string(position);
    return ::testing::AssertionFailure() << "UNPACK mismatch at typed offset " << at << ", " << what
                                         << ": expected " << (+*bad.second & 0xff) << ", got "
                                         << (+*bad.first & 0xff) << "\n"
                                         << c.describe();
  }
  return ::testing::AssertionSuccess();
}

// Moves the stream of case `from` (in its windows, clipped to the shorter stream) typed to typed
// into case `to`'s stream at a random shift, and compares every byte of the destination with the
// host reference (pack `from`, unpack into `to`): holes and margins must stay untouched. The
// environment provides typed_buffer() for from's typed bytes and packed_buffer() for to's (each
// at least its CaseGeometry's typed_bytes), upload, download, synchronize and
// transcribe(from_window, from_typed, to_window, to_typed).
template <typename Env>
::testing::AssertionResult check_transcribe(const Case& from, const Case& to, Env* env, std::mt19937_64* rng) {
  if (overlaps(to.made.layout, to.count)) return ::testing::AssertionSuccess();
  const CaseGeometry source_at(from), destination_at(to);
  const std::int64_t length = std::min(from.total(), to.total());
  const std::int64_t shift = static_cast<std::int64_t>((*rng)() % static_cast<std::uint64_t>(to.total() - length + 1));
  char* source = env->typed_buffer() + source_at.typed_origin;
  char* destination = env->packed_buffer() + destination_at.typed_origin;
  std::vector<char> source_host(static_cast<std::size_t>(source_at.typed_bytes));
  std::vector<char> background(static_cast<std::size_t>(destination_at.typed_bytes));
  fill_random(&source_host, rng);
  fill_random(&background, rng);
  env->upload(env->typed_buffer(), source_host.data(), source_at.typed_bytes);
  env->upload(env->packed_buffer(), background.data(), destination_at.typed_bytes);
  for (const auto& [offset, window_length] : from.windows) {
    if (offset >= length) break;
    const std::int64_t moved = std::min(window_length, length - offset);
    const Status status = env->transcribe(pack::Window{&from.made.layout, from.count, offset, moved}, source,
                                          pack::Window{&to.made.layout, to.count, offset + shift, moved}, destination);
    if (status != GDDT_OK) {
      return ::testing::AssertionFailure() << "transcribe of [" << offset << "+" << moved << ") returned "
                                           << status_name(status) << "\nfrom " << from.describe() << "\nto "
                                           << to.describe();
    }
  }
  env->synchronize();
  std::vector<char> got(background.size());
  env->download(got.data(), env->packed_buffer(), destination_at.typed_bytes);
  std::vector<char> stream(static_cast<std::size_t>(length));
  std::vector<char> expected = background;
  reference_move<true>(pack::Window{&from.made.layout, from.count, 0, length},
                       source_host.data() + source_at.typed_origin, stream.data());
  reference_move<false>(pack::Window{&to.made.layout, to.count, shift, length},
                        expected.data() + destination_at.typed_origin, stream.data());
  const auto bad = std::mismatch(got.begin(), got.end(), expected.begin());
  if (bad.first == got.end()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "TRANSCRIBE mismatch at destination typed offset "
                                       << (bad.first - got.begin()) - destination_at.typed_origin << " of "
                                       << length << " bytes shifted by " << shift << ": expected "
                                       << (+*bad.second & 0xff) << ", got " << (+*bad.first & 0xff) << "\nfrom "
                                       << from.describe() << "\nto " << to.describe();
}

}  // namespace gddt::testing
