// A layout as bytes, for another gddt process of the same version that moves data out of this
// process's buffers itself (the peer protocol's direct plane): everything the pack backends read,
// none of the backend slots.
#pragma once

#include <cstddef>
#include <vector>

#include "type/layout.hpp"

namespace gddt::type {

// Appends `layout` to *out; false (nothing appended) when it has more than `most_pieces` pieces.
bool encode_layout(const Layout& layout, std::size_t most_pieces, std::vector<char>* out);

// Reads a layout that encode_layout wrote into [bytes, bytes + size); GDDT_ERR_INTERNAL when the
// bytes are not one.
Status decode_layout(const char* bytes, std::size_t size, Layout* out);

}  // namespace gddt::type
