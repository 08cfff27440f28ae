// Point-to-point messages of derived datatypes: how one travels (the route), where its
// packed bytes wait for the MPI library (the staging), and packing into and unpacking out of
// that staging. The wire format is always the packed bytes, one MPI message per user
// message, so peers that use other datatypes or host memory interoperate.
#pragma once

#include <memory>

#include "core/gpu.hpp"
#include "core/memory.hpp"
#include "core/pool.hpp"
#include "pack/backend.hpp"
#include "type/layout.hpp"

namespace gddt::protocol {

// What a gddt peer sends on the user's communicator and tag in place of a message of the peer
// protocol (peers.hpp): a size no other message between peers has, since the sender routes every
// message of exactly this many packed bytes through the protocol.
constexpr int kMarkerBytes = 9;

// A user buffer described by `count` elements of a datatype.
struct Message {
  std::shared_ptr<const type::Layout> layout;
  std::int64_t count = 0;
  void* buffer = nullptr;  // as the user passed it (typemap offsets are relative to it)
  memory::Kind kind;       // where its bytes live
  memory::OpenclBuffer opencl;  // kind GDDT_MEMORY_OPENCL: the buffer (a cl_mem), its queue and offset
  // What the backends take as the typed side: the OpenCL buffer's description, else the buffer.
  const void* typed() const { return kind.type == GDDT_MEMORY_OPENCL ? &opencl : buffer; }
  std::int64_t bytes() const { return count * layout->size; }
  // The datatype's elements lie back to back: their bytes can be handed to MPI as they are.
  bool contiguous() const;
  // The lowest byte of a contiguous message.
  void* first_byte() const { return static_cast<char*>(buffer) + layout->pieces[0].offset; }
  // Where the message's elements lie, gaps included: from span_lb() on, span_bytes() bytes.
  std::int64_t span_lb() const { return layout->span_lb(count); }
  std::int64_t span_bytes() const { return layout->span_ub(count) - span_lb(); }
};

// The packed bytes of one message, in device scratch, pinned host memory or, when the pinned
// pool is exhausted, ordinary host memory.
class Staging {
 public:
  // Borrows `bytes` of staging: device scratch of GPU `device` (>= 0; `shared`: from the pool whose
  // slabs other processes map through CUDA IPC, pool::Where::kShared), else, or where the pool
  // cannot give that now, pinned host staging, else the heap (kind() tells which it got).
  Status acquire(int device, std::int64_t bytes, bool shared = false);
  // Pinned host staging, or device scratch of GPU `device`, only: GDDT_ERR_NO_MEMORY where the
  // pool cannot give it now.
  Status acquire_pinned(std::int64_t bytes);
  Status acquire_device(int device, std::int64_t bytes, bool shared = false);
  void* data() const { return data_; }
  std::int64_t size() const { return size_; }
  memory::Kind kind() const { return kind_; }

 private:
  pool::Lease lease_;
  std::unique_ptr<char[]> heap_;
  void* data_ = nullptr;
  std::int64_t size_ = 0;
  memory::Kind kind_;
};

// The stream that packs and unpacks of `message` through `staging` run on: gddt's stream of
// the GPU involved, or null when both sides are in host memory (the work is then done by the
// calling thread).
Status message_stream(const Message& message, const Staging& staging, gpu::Stream* stream);

// Copies the message's span into `staging` (which must hold message.span_bytes()) as it is, for
// the kHostSpan route, and returns when the bytes are in place; copy_span_back copies it back.
Status copy_span(const Message& message, const Staging& staging);
Status copy_span_back(const Message& message, const Staging& staging);

// Packs the whole message into `staging` (which must hold message.bytes()) and returns when
// the bytes are in place, doing `meanwhile` while it waits for the GPU.
Status pack_message(const Message& message, const Staging& staging, const gpu::WhileWaiting& meanwhile);
// The same for packed bytes [offset, offset + bytes) of the message, which land at the same
// offset of `staging`; with a stream (message_stream()'s), a pack that is one launch is only
// queued on it, as unpack_message_part does.
Status pack_message_part(const Message& message, const Staging& staging, std::int64_t offset, std::int64_t bytes,
                         gpu::Stream stream, const gpu::WhileWaiting& meanwhile);
// Packs the whole message into `staging` like pack_message, but returns at once where the GPU
// packs it in one launch: *stream is then the stream it is queued on, which must be waited for
// before the bytes are read. Packs done by the CPU or by the chunk pipeline are complete on
// return (*stream null).
Status queue_pack(const Message& message, const Staging& staging, gpu::Stream* stream,
                  const gpu::WhileWaiting& meanwhile);
// Whether packing `bytes` of `message` into `staging`, or unpacking them, is one launch queued
// on message_stream(), which messages on the same stream can share (queue_packs, queue_unpacks).
bool moves_in_one_launch(const Message& message, const Staging& staging, std::int64_t bytes);

// One message of several packed or unpacked together: its first `bytes` packed bytes.
struct MessageMove {
  const Message* message = nullptr;
  const Staging* staging = nullptr;
  std::int64_t bytes = 0;
};

// Queues the packs (unpacks) of `count` messages for which moves_in_one_launch holds, all with
// `stream` as their message_stream(), in as few launches as the backend can; the bytes are in
// place once the stream has done them.
Status queue_packs(const MessageMove* moves, int count, gpu::Stream stream);
Status queue_unpacks(const MessageMove* moves, int count, gpu::Stream stream);
// The same for windows of any buffers on GPU `device` (each one launch: both buffers device
// memory, or one pinned), in sets of up to pack::kSetMost a launch.
Status queue_windows(bool packing, const pack::WindowMove* windows, int count, int device, gpu::Stream stream);

// Unpacks the first `received` packed bytes from `staging` into the message's buffer. With a
// null `stream` it returns when they are in place, doing `meanwhile` while it waits; otherwise
// the work may still be running on `stream` (from message_stream), and staging must live
// until it is done. `ordering`: see pack::Ordering.
Status unpack_message(const Message& message, const Staging& staging, std::int64_t received, gpu::Stream stream,
                      const gpu::WhileWaiting& meanwhile, pack::Ordering ordering);
// The same for packed bytes [offset, offset + bytes), read at the same offset of `staging`.
Status unpack_message_part(const Message& message, const Staging& staging, std::int64_t offset, std::int64_t bytes,
                           gpu::Stream stream, const gpu::WhileWaiting& meanwhile, pack::Ordering ordering);

}  // namespace gddt::protocol
