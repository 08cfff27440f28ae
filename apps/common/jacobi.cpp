#include "jacobi.hpp"

#include <cstring>
#include <utility>
#include <vector>

#include "fingerprint.hpp"

namespace apps {
namespace {

bool matches(const Buffer& array, const Reference& reference) {
  std::vector<unsigned char> local(array.size());
  array.download(local.data(), local.size());
  const auto* want = static_cast<const unsigned char*>(reference.expected);
  const Box& box = reference.interior;
  const Extent& dims = reference.dims;
  const std::size_t row = static_cast<std::size_t>(box.size[2]) * reference.element_bytes;
  for (int i = 0; i < box.size[0]; ++i)
    for (int j = 0; j < box.size[1]; ++j) {
      const std::size_t at =
          ((static_cast<std::size_t>(box.start[0]) + i) * dims[1] + box.start[1] + j) * dims[2] + box.start[2];
      if (std::memcmp(&local[at * reference.element_bytes], want, row) != 0) return false;
      want += row;
    }
  return true;
}

}  // namespace

Outcome run_jacobi(MPI_Comm comm, int warmup, int iterations, Buffer& a, Buffer& b, const Reference& reference,
                   const std::function<void(void* array)>& initialize, const std::function<void(void* in)>& exchange,
                   const std::function<void(const void* in, void* out)>& sweep) {
  Buffer *in = &a, *out = &b;
  initialize(in->data());
  initialize(out->data());
  synchronize();
  Outcome outcome;
  outcome.measured = measure(
      comm, warmup, iterations, [&] { exchange(in->data()); },
      [&] {
        sweep(in->data(), out->data());
        synchronize();
        std::swap(in, out);
      });
  outcome.fingerprint = fingerprint(in->data(), in->size());
  if (reference.expected != nullptr) {
    outcome.right = matches(*in, reference);
    outcome.check = "serial reference";
  }
  return outcome;
}

}  // namespace apps
