// The CUDA backend's typed-to-typed rows (Backend::transcribe and transcribe_set), launched by
// transcribe_launch.cu.
#pragma once

#include "pack/backend.hpp"

namespace gddt::pack::cuda_impl {

Status cuda_transcribe(const Window& from, const void* from_typed, const Window& to, void* to_typed,
                       gpu::Stream stream, bool* served);
// On an error, the moves marked served are queued and the others not.
Status cuda_transcribe_set(TranscribeMove* moves, int count, gpu::Stream stream);

}  // namespace gddt::pack::cuda_impl
