// The CUDA backend of a build without CUDA: present so the engine needs no #ifdef, refusing
// every call.
#include "pack/backend.hpp"

namespace gddt::pack {
namespace {

Status no_device_pack(const Window&, const void*, void*, gpu::Stream) { return GDDT_ERR_NO_DEVICE; }
Status no_device_unpack(const Window&, void*, const void*, gpu::Stream) { return GDDT_ERR_NO_DEVICE; }

}  // namespace

const Backend& cuda_backend() {
  static const Backend backend = [] {
    Backend b;
    b.name = "cuda";
    b.typed_cost = b.packed_cost = {kUnreachable, 4, 1, 1, kUnreachable};
    b.pack = no_device_pack;
    b.unpack = no_device_unpack;
    return b;
  }();
  return backend;
}

}  // namespace gddt::pack
