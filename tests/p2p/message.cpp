#include "message.hpp"

#include <algorithm>
#include <cstring>

#include "harness.hpp"

namespace gddt_test::p2p {
namespace {

// Background bytes before and after the data, to catch writes past either end.
constexpr std::int64_t kMargin = 64;

void fill_random(std::uint64_t seed, unsigned char* bytes, std::size_t count) {
  Random random(seed);
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const std::uint64_t word = random.next();
    std::memcpy(bytes + i, &word, 8);
  }
  if (i < count) {
    const std::uint64_t word = random.next();
    std::memcpy(bytes + i, &word, count - i);
  }
}

std::string hex_byte(unsigned char value) {
  static const char digits[] = "0123456789abcdef";
  return std::string("0x") + digits[value >> 4] + digits[value & 15];
}

// Text for failure messages: "<what> (<type> x<count>, <kind>)".
std::string describe(const std::string& what, const TypedBuffer& buffer) {
  return what + " (" + buffer.type().name + " x" + std::to_string(buffer.count()) + ", " +
         memory_kind_name(buffer.memory_kind()) + ")";
}

}  // namespace

std::uint64_t Random::next() {
  state_ += 0x9e3779b97f4a7c15ull;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::int64_t Random::between(std::int64_t low, std::int64_t high) {
  const std::uint64_t span = static_cast<std::uint64_t>(high - low) + 1;
  return low + static_cast<std::int64_t>(span == 0 ? next() : next() % span);
}

std::vector<unsigned char> message_bytes(std::uint64_t seed, std::size_t count) {
  std::vector<unsigned char> bytes(count);
  fill_random(mix_seed(seed, 0x6d657373616765ull), bytes.data(), count);
  return bytes;
}

TypedBuffer::TypedBuffer(const TypeCase& type, int count, MemoryKind kind,
                         std::uint64_t background_seed)
    : type_(&type), count_(count) {
  std::int64_t low = 0;
  std::int64_t high = 0;
  if (count > 0) {
    for (const ByteRun& run : type.runs) {
      const std::int64_t last_element = (count - 1) * type.extent;
      low = std::min({low, run.offset, last_element + run.offset});
      high = std::max({high, run.offset + run.length, last_element + run.offset + run.length});
    }
  }
  origin_ = kMargin - low;
  const std::size_t bytes = static_cast<std::size_t>(origin_ + high + kMargin);
  memory_ = Buffer(kind, bytes);
  image_.resize(bytes);
  fill_random(mix_seed(background_seed, 0x6261636b), image_.data(), bytes);
  memory_.upload(image_.data(), bytes);
}

void TypedBuffer::scatter(const std::vector<unsigned char>& packed,
                          std::vector<unsigned char>* image) const {
  const std::int64_t total = static_cast<std::int64_t>(packed.size());
  std::int64_t done = 0;
  for (int element = 0; element < count_ && done < total; ++element) {
    const std::int64_t base = origin_ + element * type_->extent;
    for (const ByteRun& run : type_->runs) {
      if (done == total) break;
      const std::int64_t length = std::min(run.length, total - done);
      std::memcpy(image->data() + base + run.offset, packed.data() + done, length);
      done += length;
    }
  }
}

void TypedBuffer::fill(std::uint64_t message_seed) {
  scatter(message_bytes(message_seed, data_bytes()), &image_);
  memory_.upload(image_.data(), image_.size());
}

void TypedBuffer::expect_unchanged(const std::string& what) const {
  compare(image_, describe(what, *this) + ": buffer changed");
}

void TypedBuffer::expect_message(std::uint64_t message_seed, std::int64_t bytes,
                                 const std::string& what) const {
  if (bytes > data_bytes()) {
    fail(describe(what, *this) + ": expected " + std::to_string(bytes) +
         " bytes, more than the buffer holds");
    return;
  }
  std::vector<unsigned char> expected = image_;
  scatter(message_bytes(message_seed, bytes), &expected);
  compare(expected, describe(what, *this));
}

std::vector<unsigned char> TypedBuffer::typemap_mask() const {
  std::vector<unsigned char> mask(image_.size(), 0);
  for (int element = 0; element < count_; ++element) {
    for (const ByteRun& run : type_->runs) {
      std::fill_n(mask.begin() + origin_ + element * type_->extent + run.offset, run.length, 1);
    }
  }
  return mask;
}

void TypedBuffer::expect_unchanged_outside_typemap(const std::string& what) const {
  const std::vector<unsigned char> actual = memory_.download();
  const std::vector<unsigned char> in_typemap = typemap_mask();
  std::int64_t wrong = 0;
  std::int64_t first = -1;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (in_typemap[i] || actual[i] == image_[i]) continue;
    if (first < 0) first = static_cast<std::int64_t>(i);
    ++wrong;
  }
  expect(wrong == 0, describe(what, *this) + ": " + std::to_string(wrong) +
                         " bytes outside the typemap changed; first at offset " +
                         std::to_string(first - origin_) + " from the buffer address");
}

void TypedBuffer::compare(const std::vector<unsigned char>& expected,
                          const std::string& what) const {
  const std::vector<unsigned char> actual = memory_.download();
  if (actual == expected) return;
  // Which bytes belong to the typemap, to tell data errors from stray writes.
  const std::vector<unsigned char> in_typemap = typemap_mask();
  std::int64_t first = -1;
  std::int64_t wrong_inside = 0;
  std::int64_t wrong_outside = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    if (first < 0) first = static_cast<std::int64_t>(i);
    (in_typemap[i] ? wrong_inside : wrong_outside) += 1;
  }
  fail(what + ": " + std::to_string(wrong_inside) + " bytes wrong inside the typemap, " +
       std::to_string(wrong_outside) + " outside it (gaps and margins); first at offset " +
       std::to_string(first - origin_) + " from the buffer address (" +
       (in_typemap[first] ? "data" : "gap") + "): " + hex_byte(actual[first]) + ", expected " +
       hex_byte(expected[first]));
}

void expect_status(const MPI_Status& status, int source, int tag, MPI_Datatype type, int count,
                   const std::string& what) {
  expect(status.MPI_SOURCE == source, what + ": status source " +
                                          std::to_string(status.MPI_SOURCE) + ", expected " +
                                          std::to_string(source));
  expect(status.MPI_TAG == tag, what + ": status tag " + std::to_string(status.MPI_TAG) +
                                    ", expected " + std::to_string(tag));
  int received = -2;
  P2P_EXPECT_SUCCESS(MPI_Get_count(&status, type, &received));
  expect(received == count, what + ": MPI_Get_count " + std::to_string(received) + ", expected " +
                                std::to_string(count));
}

}  // namespace gddt_test::p2p
