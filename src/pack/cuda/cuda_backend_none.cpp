// The CUDA backend of a build without CUDA: present so the engine needs no #ifdef, refusing
// every call.
#include "pack/backend.hpp"

namespace gddt::pack {
namespace {

Status no_device_pack(const Window&, const void*, void*, gpu::Stream) { return GDDT_ERR_NO_DEVICE; }
Status no_device_unpack(const Window&, void*, const void*, gpu::Stream) { return GDDT_ERR_NO_DEVICE; }

}  // namespace

const Backend& cuda_backend() {
  static const Backend backend{"cuda",  {kUnreachable, 4, 1, 1, kUnreachable}, {kUnreachable, 4, 1, 1, kUnreachable},
                               no_device_pack, no_device_unpack, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  return backend;
}

}  // namespace gddt::pack
