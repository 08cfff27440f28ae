// The CUDA backend's rows that move windows through the resident kernel (resident.hpp):
// pack_now, unpack_now and post_now, and the launched wait for a device flag that stands in for
// a job's wait (Backend::queue_flag_wait). They share with cuda_backend.cu its window check and
// its launch of one window.
#pragma once

#include "pack/backend.hpp"

namespace gddt::pack::cuda_impl {

// cuda_backend.cu: whether a window and its buffers are well formed (GDDT_ERR_INVALID_ARG,
// GDDT_ERR_BUFFER), and one window queued on `stream` as one launch or copy.
Status check_window(const Window& w, const void* typed, const void* packed);
Status launch_window(bool unpack, const Window& w, const void* typed, const void* packed, gpu::Stream stream);

// resident_windows.cu: the Backend rows of the same names.
Status resident_pack_now(const Window& window, const void* typed, void* packed, Ordering ordering,
                         const gpu::WhileWaiting& meanwhile, bool* served);
Status resident_unpack_now(const Window& window, void* typed, const void* packed, Ordering ordering,
                           const gpu::WhileWaiting& meanwhile, bool* served);
Status resident_post_now(bool unpack, const Window& window, const void* typed, const void* packed, DeviceFlag after,
                         DeviceFlag signal, Ordering ordering, Posted* posted, bool* served);
Status queue_flag_wait(DeviceFlag flag, gpu::Stream stream);

}  // namespace gddt::pack::cuda_impl
