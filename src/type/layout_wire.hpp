// A canonical layout as bytes, for a peer process that moves data described by it (the peer
// protocol's remote layouts): the same machine and the same gddt build on both ends, so the
// fields travel as they are, checked for consistency on arrival.
#pragma once

#include <cstddef>
#include <vector>

#include "core/status.hpp"
#include "type/layout.hpp"

namespace gddt::type {

void append_layout(const Layout& layout, std::vector<char>* out);
// Reads a layout written by append_layout from [data, data + size); *used: bytes it took.
Status read_layout(const char* data, std::size_t size, Layout* layout, std::size_t* used);

}  // namespace gddt::type
