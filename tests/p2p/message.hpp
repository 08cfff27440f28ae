// Messages with checkable contents. A message is identified by a seed; its bytes in packed
// (typemap) order derive from the seed alone, so sender and receiver agree without talking.
// A TypedBuffer lays a message out along a datatype's typemap over background bytes, and checks
// after a transfer that the typemap holds the message and every other byte is unchanged.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "memory_buffer.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

// splitmix64: the same sequence on every rank and platform.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [low, high].
  std::int64_t between(std::int64_t low, std::int64_t high);
  bool one_in(std::int64_t n) { return between(1, n) == 1; }

 private:
  std::uint64_t state_;
};

// The packed bytes of message `seed`.
std::vector<unsigned char> message_bytes(std::uint64_t seed, std::size_t count);

class TypedBuffer {
 public:
  // `count` elements of `type` in fresh memory of `kind`, every byte (margins included) set to
  // background derived from `background_seed`.
  TypedBuffer(const TypeCase& type, int count, MemoryKind kind, std::uint64_t background_seed);

  // The buffer argument for MPI.
  void* address() const { return memory_.data() + origin_; }
  const TypeCase& type() const { return *type_; }
  int count() const { return count_; }
  MemoryKind memory_kind() const { return memory_.kind(); }
  std::int64_t data_bytes() const { return count_ * type_->size; }

  // Lays message `seed` along the whole typemap (the sender's side).
  void fill(std::uint64_t message_seed);
  // Expects memory to hold exactly what construction and fill put there.
  void expect_unchanged(const std::string& what) const;
  // Expects the first `bytes` bytes along the typemap to hold message `seed` and every other
  // byte to be unchanged.
  void expect_message(std::uint64_t message_seed, std::int64_t bytes,
                      const std::string& what) const;
  // Expects every byte outside the typemap unchanged; the typemap may hold anything (what a
  // truncated receive leaves).
  void expect_unchanged_outside_typemap(const std::string& what) const;

 private:
  std::vector<unsigned char> typemap_mask() const;
  void scatter(const std::vector<unsigned char>& packed, std::vector<unsigned char>* image) const;
  void compare(const std::vector<unsigned char>& expected, const std::string& what) const;

  const TypeCase* type_;
  int count_;
  std::int64_t origin_;  // offset of address() in the allocation
  Buffer memory_;
  std::vector<unsigned char> image_;  // what the memory should hold
};

// Expects `status` to name `source` and `tag` and a count of `count` elements of `type`
// (MPI_UNDEFINED when the data is not a whole number of elements).
void expect_status(const MPI_Status& status, int source, int tag, MPI_Datatype type, int count,
                   const std::string& what);

}  // namespace gddt_test::p2p
