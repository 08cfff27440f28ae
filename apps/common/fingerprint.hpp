// A 64-bit fingerprint of an array's bits, computed where the array lives: every 4-byte word is
// mixed with its index and the mixes are summed, so the order of the sum does not matter and
// equal fingerprints mean equal arrays (but for a chance of 2^-64). The versions of an app
// compare their results this way without copying arrays of tens of GiB to the host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace apps {

std::uint64_t fingerprint(const void* data, std::size_t bytes);  // bytes: a multiple of 4

}  // namespace apps
