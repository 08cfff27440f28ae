// The host backend: a walk of the packed stream with memcpy per contiguous run. Runs of the
// common small block sizes get fixed-size copies the compiler turns into single moves.
#include <cstring>

#include "pack/backend.hpp"

namespace gddt::pack {
namespace {

template <bool kPack>
void copy_window(const Window& w, char* typed, char* packed) {
  type::for_each_run(*w.layout, w.count, w.offset, w.length,
                     [&](std::int64_t typed_off, std::int64_t packed_off, std::int64_t bytes) {
                       char* t = typed + typed_off;
                       char* p = packed + packed_off;
                       char* dst = kPack ? p : t;
                       const char* src = kPack ? t : p;
                       switch (bytes) {
                         case 4: std::memcpy(dst, src, 4); break;
                         case 8: std::memcpy(dst, src, 8); break;
                         case 16: std::memcpy(dst, src, 16); break;
                         default: std::memcpy(dst, src, static_cast<std::size_t>(bytes));
                       }
                     });
}

Status host_pack(const Window& w, const void* typed, void* packed, gpu::Stream) {
  copy_window<true>(w, const_cast<char*>(static_cast<const char*>(typed)), static_cast<char*>(packed));
  return GDDT_OK;
}

Status host_unpack(const Window& w, void* typed, const void* packed, gpu::Stream) {
  copy_window<false>(w, static_cast<char*>(typed), const_cast<char*>(static_cast<const char*>(packed)));
  return GDDT_OK;
}

}  // namespace

const Backend& host_backend() {
  static const Backend backend = [] {
    Backend b;
    b.name = "host";
    // Managed memory costs the CPU page migrations; device memory it cannot touch.
    b.typed_cost = b.packed_cost = {1, 1, kUnreachable, 8, kUnreachable};
    b.pack = host_pack;
    b.unpack = host_unpack;
    return b;
  }();
  return backend;
}

}  // namespace gddt::pack
