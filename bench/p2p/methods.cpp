#include "methods.hpp"

#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>

#include "checks.hpp"
#include "walk_kernels.hpp"

namespace gddt::bench {
namespace {

constexpr int kDataTag = 100;

// MPI_Send or MPI_Isend windows of (buffer, count, type): "gddt" through the plain calls,
// "gddt-packed" likewise but received as MPI_PACKED, "raw-mpi" and "contig-device" straight to the
// library.
class DirectMethod final : public TransferMethod {
 public:
  DirectMethod(const PointToPointCalls& calls, bool contiguous, const Link& link, bool packed_receive = false)
      : calls_(calls), contiguous_(contiguous), packed_receive_(packed_receive), link_(link) {}

  bool moves_contiguous_bytes() const override { return contiguous_; }
  bool receives_packed() const override { return packed_receive_; }

  void send(const Case& message, Workspace& workspace) override {
    const Message out = outgoing(message, workspace);
    BENCH_MPI_CHECK(calls_.send(out.buffer, out.count, out.type, link_.peer, kDataTag, link_.comm));
  }

  void recv(const Case& message, Workspace& workspace) override {
    const Message in = incoming(message, workspace);
    BENCH_MPI_CHECK(calls_.recv(in.buffer, in.count, in.type, link_.peer, kDataTag, link_.comm, MPI_STATUS_IGNORE));
  }

  void send_window(const Case& message, Workspace& workspace, int messages) override {
    const Message out = outgoing(message, workspace);
    requests_.assign(static_cast<std::size_t>(messages), MPI_REQUEST_NULL);
    for (MPI_Request& request : requests_) {
      BENCH_MPI_CHECK(calls_.isend(out.buffer, out.count, out.type, link_.peer, kDataTag, link_.comm, &request));
    }
    BENCH_MPI_CHECK(calls_.waitall(messages, requests_.data(), MPI_STATUSES_IGNORE));
  }

  void recv_window(const Case& message, Workspace& workspace, int messages) override {
    const Message in = incoming(message, workspace);
    requests_.assign(static_cast<std::size_t>(messages), MPI_REQUEST_NULL);
    for (MPI_Request& request : requests_) {
      BENCH_MPI_CHECK(calls_.irecv(in.buffer, in.count, in.type, link_.peer, kDataTag, link_.comm, &request));
    }
    BENCH_MPI_CHECK(calls_.waitall(messages, requests_.data(), MPI_STATUSES_IGNORE));
  }

 private:
  struct Message {
    void* buffer;
    int count;
    MPI_Datatype type;
  };

  Message outgoing(const Case& message, Workspace& workspace) const {
    if (contiguous_) return {workspace.contig_send().data(), static_cast<int>(message.packed), MPI_BYTE};
    return {workspace.typed_send().data(), message.count, message.type};
  }

  Message incoming(const Case& message, Workspace& workspace) const {
    if (contiguous_) return {workspace.contig_recv().data(), static_cast<int>(message.packed), MPI_BYTE};
    if (packed_receive_) return {workspace.contig_recv().data(), static_cast<int>(message.packed), MPI_PACKED};
    return {workspace.typed_recv().data(), message.count, message.type};
  }

  const PointToPointCalls& calls_;
  bool contiguous_;
  bool packed_receive_;
  Link link_;
  std::vector<MPI_Request> requests_;
};

// The hand-written kernels' view of a case's type, its block lists copied to the device once per
// case.
class WalkTables {
 public:
  const DeviceWalk& of(const Case& message) {
    if (serial_ == message.serial) return walk_;
    const TypeWalk& walk = message.walk;
    walk_ = DeviceWalk{};
    walk_.base = walk.base;
    walk_.block_words = walk.block_words;
    walk_.count0 = walk.count[0];
    walk_.count1 = walk.count[1];
    walk_.stride0 = walk.stride[0];
    walk_.stride1 = walk.stride[1];
    walk_.stride2 = walk.stride[2];
    if (!walk.block_offset.empty()) {
      const std::size_t first_word_bytes = walk.block_first_word.size() * sizeof(std::uint64_t);
      const std::size_t offset_bytes = walk.block_offset.size() * sizeof(std::uint64_t);
      block_first_word_ = Buffer(MemoryKind::kDevice, first_word_bytes);
      block_offset_ = Buffer(MemoryKind::kDevice, offset_bytes);
      block_first_word_.upload(walk.block_first_word.data(), first_word_bytes);
      block_offset_.upload(walk.block_offset.data(), offset_bytes);
      walk_.block_count = walk.block_offset.size();
      walk_.block_first_word = reinterpret_cast<const std::uint64_t*>(block_first_word_.data());
      walk_.block_offset = reinterpret_cast<const std::uint64_t*>(block_offset_.data());
    }
    serial_ = message.serial;
    return walk_;
  }

 private:
  std::uint64_t serial_ = 0;
  DeviceWalk walk_;
  Buffer block_first_word_, block_offset_;
};

// Fig. 4(a): cudaMemcpy2D between the device buffer and a host buffer of the same layout,
// and MPI_Send/MPI_Recv of the datatype on the host buffer.
class Cpy2dMethod final : public TransferMethod {
 public:
  explicit Cpy2dMethod(const Link& link) : link_(link) {}

  void send(const Case& message, Workspace& workspace) override {
    unsigned char* source = workspace.typed_send().data();
    if (workspace.on_device()) {
      unsigned char* host = workspace.host_typed().data();
      copy_pieces(message, host, source, cudaMemcpyDeviceToHost);
      source = host;
    }
    BENCH_MPI_CHECK(PMPI_Send(source, message.count, message.type, link_.peer, kDataTag, link_.comm));
  }

  void recv(const Case& message, Workspace& workspace) override {
    unsigned char* target = workspace.typed_recv().data();
    if (!workspace.on_device()) {
      BENCH_MPI_CHECK(PMPI_Recv(target, message.count, message.type, link_.peer, kDataTag, link_.comm,
                                MPI_STATUS_IGNORE));
      return;
    }
    unsigned char* host = workspace.host_typed().data();
    if (message.pieces_span_gaps) copy_pieces(message, host, target, cudaMemcpyDeviceToHost);
    BENCH_MPI_CHECK(PMPI_Recv(host, message.count, message.type, link_.peer, kDataTag, link_.comm, MPI_STATUS_IGNORE));
    copy_pieces(message, target, host, cudaMemcpyHostToDevice);
  }

 private:
  static void copy_pieces(const Case& message, unsigned char* to, const unsigned char* from, cudaMemcpyKind kind) {
    for (const Piece2D& piece : message.pieces) {
      BENCH_CUDA_CHECK(cudaMemcpy2D(to + piece.offset, piece.pitch, from + piece.offset, piece.pitch, piece.width,
                                    piece.height, kind));
    }
  }

  Link link_;
};

// Fig. 4(b): per chunk, a pack kernel into device scratch, cudaMemcpyAsync to pinned memory
// and MPI_Isend, the pack of chunk i+1 overlapping the copy of chunk i; the receiver posts
// every chunk's MPI_Irecv, then copies each arrived chunk to the device and unpacks it. A
// rank whose buffers are in host memory packs with MPI_Pack instead.
class PipelineMethod final : public TransferMethod {
 public:
  explicit PipelineMethod(const Link& link) : link_(link) {}

  ~PipelineMethod() override {
    for (cudaEvent_t event : packed_or_arrived_) BENCH_CUDA_CHECK(cudaEventDestroy(event));
    for (cudaEvent_t event : copied_) BENCH_CUDA_CHECK(cudaEventDestroy(event));
    if (kernel_stream_ != nullptr) BENCH_CUDA_CHECK(cudaStreamDestroy(kernel_stream_));
    if (copy_stream_ != nullptr) BENCH_CUDA_CHECK(cudaStreamDestroy(copy_stream_));
  }

  void send(const Case& message, Workspace& workspace) override {
    const std::size_t chunk = chunk_bytes(message.packed);
    const std::size_t chunks = (message.packed + chunk - 1) / chunk;
    unsigned char* host = workspace.host_packed().data();
    requests_.assign(chunks, MPI_REQUEST_NULL);
    if (!workspace.on_device()) {
      int position = 0;
      BENCH_MPI_CHECK(PMPI_Pack(workspace.typed_send().data(), message.count, message.type, host,
                                static_cast<int>(message.packed), &position, link_.comm));
      for (std::size_t i = 0; i < chunks; ++i) post_send(host, message.packed, chunk, i);
    } else {
      prepare(chunks);
      const DeviceWalk& walk = walk_.of(message);
      unsigned char* packed = workspace.device_packed().data();
      for (std::size_t i = 0; i < chunks; ++i) {
        const std::size_t offset = i * chunk;
        const std::size_t bytes = std::min(chunk, message.packed - offset);
        launch_pack(walk, workspace.typed_send().data(), packed + offset, offset / 4, bytes / 4, kernel_stream_);
        BENCH_CUDA_CHECK(cudaEventRecord(packed_or_arrived_[i], kernel_stream_));
        BENCH_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, packed_or_arrived_[i], 0));
        BENCH_CUDA_CHECK(cudaMemcpyAsync(host + offset, packed + offset, bytes, cudaMemcpyDeviceToHost, copy_stream_));
        BENCH_CUDA_CHECK(cudaEventRecord(copied_[i], copy_stream_));
      }
      for (std::size_t i = 0; i < chunks; ++i) {
        wait_progressing(copied_[i], static_cast<int>(i));
        post_send(host, message.packed, chunk, i);
      }
    }
    BENCH_MPI_CHECK(PMPI_Waitall(static_cast<int>(chunks), requests_.data(), MPI_STATUSES_IGNORE));
  }

  void recv(const Case& message, Workspace& workspace) override {
    const std::size_t chunk = chunk_bytes(message.packed);
    const std::size_t chunks = (message.packed + chunk - 1) / chunk;
    unsigned char* host = workspace.host_packed().data();
    requests_.assign(chunks, MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < chunks; ++i) {
      const std::size_t offset = i * chunk;
      BENCH_MPI_CHECK(PMPI_Irecv(host + offset, static_cast<int>(std::min(chunk, message.packed - offset)), MPI_BYTE,
                                 link_.peer, kDataTag, link_.comm, &requests_[i]));
    }
    if (!workspace.on_device()) {
      BENCH_MPI_CHECK(PMPI_Waitall(static_cast<int>(chunks), requests_.data(), MPI_STATUSES_IGNORE));
      int position = 0;
      BENCH_MPI_CHECK(PMPI_Unpack(host, static_cast<int>(message.packed), &position, workspace.typed_recv().data(),
                                  message.count, message.type, link_.comm));
      return;
    }
    prepare(chunks);
    const DeviceWalk& walk = walk_.of(message);
    unsigned char* packed = workspace.device_packed().data();
    for (std::size_t i = 0; i < chunks; ++i) {
      const std::size_t offset = i * chunk;
      const std::size_t bytes = std::min(chunk, message.packed - offset);
      BENCH_MPI_CHECK(PMPI_Wait(&requests_[i], MPI_STATUS_IGNORE));
      BENCH_CUDA_CHECK(cudaMemcpyAsync(packed + offset, host + offset, bytes, cudaMemcpyHostToDevice, copy_stream_));
      BENCH_CUDA_CHECK(cudaEventRecord(packed_or_arrived_[i], copy_stream_));
      BENCH_CUDA_CHECK(cudaStreamWaitEvent(kernel_stream_, packed_or_arrived_[i], 0));
      launch_unpack(walk, packed + offset, workspace.typed_recv().data(), offset / 4, bytes / 4, kernel_stream_);
    }
    BENCH_CUDA_CHECK(cudaStreamSynchronize(kernel_stream_));
  }

 private:
  // A few chunks per message, each large enough to run the copy engine near full speed.
  std::size_t chunk_bytes(std::size_t packed) const {
    constexpr std::size_t kSmallest = std::size_t{256} << 10;
    constexpr std::size_t kLargest = std::size_t{4} << 20;
    const std::size_t chunk = link_.chunk != 0 ? link_.chunk : std::clamp((packed / 4 + 3) / 4 * 4, kSmallest, kLargest);
    return std::min(chunk, packed);
  }

  void post_send(const unsigned char* host, std::size_t packed, std::size_t chunk, std::size_t index) {
    const std::size_t offset = index * chunk;
    BENCH_MPI_CHECK(PMPI_Isend(host + offset, static_cast<int>(std::min(chunk, packed - offset)), MPI_BYTE, link_.peer,
                               kDataTag, link_.comm, &requests_[index]));
  }

  // Waits for `event` while letting MPI progress the `posted` sends already under way.
  void wait_progressing(cudaEvent_t event, int posted) {
    for (;;) {
      const cudaError_t state = cudaEventQuery(event);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) BENCH_CUDA_CHECK(state);
      // "not ready" is no failure: keep it away from the launch checks that read the last error
      (void)cudaGetLastError();
      if (posted > 0) {
        int done = 0;
        BENCH_MPI_CHECK(PMPI_Testall(posted, requests_.data(), &done, MPI_STATUSES_IGNORE));
      }
    }
  }

  // Streams and events, made when first needed.
  void prepare(std::size_t chunks) {
    if (kernel_stream_ == nullptr) {
      BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&kernel_stream_, cudaStreamNonBlocking));
      BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
    }
    while (copied_.size() < chunks) {
      cudaEvent_t first = nullptr;
      cudaEvent_t second = nullptr;
      BENCH_CUDA_CHECK(cudaEventCreateWithFlags(&first, cudaEventDisableTiming));
      BENCH_CUDA_CHECK(cudaEventCreateWithFlags(&second, cudaEventDisableTiming));
      packed_or_arrived_.push_back(first);
      copied_.push_back(second);
    }
  }

  Link link_;
  cudaStream_t kernel_stream_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;
  std::vector<cudaEvent_t> packed_or_arrived_;  // sender: chunk packed; receiver: chunk on the device
  std::vector<cudaEvent_t> copied_;             // sender: chunk in pinned memory
  std::vector<MPI_Request> requests_;
  WalkTables walk_;
};

// The packed byte count, contiguous, copied to pinned host memory and sent from there: the
// ceiling of a datatype transfer through an MPI that is not CUDA-aware.
class ContigStagedMethod final : public TransferMethod {
 public:
  explicit ContigStagedMethod(const Link& link) : link_(link) {}

  bool moves_contiguous_bytes() const override { return true; }

  void send(const Case& message, Workspace& workspace) override {
    unsigned char* source = workspace.contig_send().data();
    if (workspace.on_device()) {
      unsigned char* host = workspace.host_packed().data();
      BENCH_CUDA_CHECK(cudaMemcpy(host, source, message.packed, cudaMemcpyDeviceToHost));
      source = host;
    }
    BENCH_MPI_CHECK(PMPI_Send(source, static_cast<int>(message.packed), MPI_BYTE, link_.peer, kDataTag, link_.comm));
  }

  void recv(const Case& message, Workspace& workspace) override {
    unsigned char* target = workspace.on_device() ? workspace.host_packed().data() : workspace.contig_recv().data();
    BENCH_MPI_CHECK(PMPI_Recv(target, static_cast<int>(message.packed), MPI_BYTE, link_.peer, kDataTag, link_.comm,
                              MPI_STATUS_IGNORE));
    if (workspace.on_device()) {
      BENCH_CUDA_CHECK(cudaMemcpy(workspace.contig_recv().data(), target, message.packed, cudaMemcpyHostToDevice));
    }
  }

 private:
  Link link_;
};

// What an expert writes today without gddt: the whole message packed by a hand-written kernel into
// a device buffer, sent as device bytes through a CUDA-aware library (through pinned host memory
// otherwise), and unpacked by the receiver's kernel. Host buffers go through MPI_Pack/MPI_Unpack.
class HandPackedMethod final : public TransferMethod {
 public:
  explicit HandPackedMethod(const Link& link) : link_(link) {}

  ~HandPackedMethod() override {
    if (stream_ != nullptr) BENCH_CUDA_CHECK(cudaStreamDestroy(stream_));
  }

  void send(const Case& message, Workspace& workspace) override {
    const int bytes = static_cast<int>(message.packed);
    unsigned char* wire = workspace.host_packed().data();
    if (!workspace.on_device()) {
      int position = 0;
      BENCH_MPI_CHECK(PMPI_Pack(workspace.typed_send().data(), message.count, message.type, wire, bytes, &position,
                                link_.comm));
    } else {
      unsigned char* packed = workspace.device_packed().data();
      launch_pack(walk_.of(message), workspace.typed_send().data(), packed, 0, message.packed / 4, stream());
      if (link_.cuda_aware) {
        wire = packed;
      } else {
        BENCH_CUDA_CHECK(cudaMemcpyAsync(wire, packed, message.packed, cudaMemcpyDeviceToHost, stream()));
      }
      BENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
    }
    BENCH_MPI_CHECK(PMPI_Send(wire, bytes, MPI_BYTE, link_.peer, kDataTag, link_.comm));
  }

  void recv(const Case& message, Workspace& workspace) override {
    const int bytes = static_cast<int>(message.packed);
    const bool device_wire = workspace.on_device() && link_.cuda_aware;
    unsigned char* wire = device_wire ? workspace.device_packed().data() : workspace.host_packed().data();
    BENCH_MPI_CHECK(PMPI_Recv(wire, bytes, MPI_BYTE, link_.peer, kDataTag, link_.comm, MPI_STATUS_IGNORE));
    if (!workspace.on_device()) {
      int position = 0;
      BENCH_MPI_CHECK(PMPI_Unpack(wire, bytes, &position, workspace.typed_recv().data(), message.count, message.type,
                                  link_.comm));
      return;
    }
    unsigned char* packed = workspace.device_packed().data();
    if (!device_wire)
      BENCH_CUDA_CHECK(cudaMemcpyAsync(packed, wire, message.packed, cudaMemcpyHostToDevice, stream()));
    launch_unpack(walk_.of(message), packed, workspace.typed_recv().data(), 0, message.packed / 4, stream());
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

 private:
  cudaStream_t stream() {
    if (stream_ == nullptr) BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return stream_;
  }

  Link link_;
  cudaStream_t stream_ = nullptr;
  WalkTables walk_;
};

}  // namespace

const PointToPointCalls& user_calls() {
  static const PointToPointCalls calls = {MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Waitall};
  return calls;
}

const PointToPointCalls& library_calls() {
  static const PointToPointCalls calls = {PMPI_Send, PMPI_Recv, PMPI_Isend, PMPI_Irecv, PMPI_Waitall};
  return calls;
}

void TransferMethod::send_window(const Case& message, Workspace& workspace, int messages) {
  for (int i = 0; i < messages; ++i) send(message, workspace);
}

void TransferMethod::recv_window(const Case& message, Workspace& workspace, int messages) {
  for (int i = 0; i < messages; ++i) recv(message, workspace);
}

std::unique_ptr<TransferMethod> make_method(Method method, const Link& link) {
  switch (method) {
    case Method::kGddt: return std::make_unique<DirectMethod>(user_calls(), false, link);
    case Method::kGddtPacked: return std::make_unique<DirectMethod>(user_calls(), false, link, true);
    case Method::kCpy2d: return std::make_unique<Cpy2dMethod>(link);
    case Method::kPipeline: return std::make_unique<PipelineMethod>(link);
    case Method::kContigDevice: return std::make_unique<DirectMethod>(library_calls(), true, link);
    case Method::kContigStaged: return std::make_unique<ContigStagedMethod>(link);
    case Method::kRawMpi: return std::make_unique<DirectMethod>(library_calls(), false, link);
    case Method::kDeviceCopy: return nullptr;  // moves no message: measured by run_device_copy (sweep.hpp)
    case Method::kHandPacked: return std::make_unique<HandPackedMethod>(link);
  }
  return nullptr;
}

std::string unavailable_reason(Method method, const MemoryPair& memory, bool cuda_aware, bool gddt_usable) {
  const bool any_device = memory.rank0 == MemoryKind::kDevice || memory.rank1 == MemoryKind::kDevice;
  if ((method == Method::kGddt || method == Method::kGddtPacked) && !gddt_usable)
    return "gddt is not loaded, or GDDT_DISABLE is set";
  if (method == Method::kContigDevice && any_device && !cuda_aware) return "the MPI is not CUDA-aware";
  if (method == Method::kDeviceCopy && (memory.rank0 != MemoryKind::kDevice || memory.rank1 != MemoryKind::kDevice)) {
    return "a device-to-device copy needs device memory on both ranks";
  }
  return "";
}

}  // namespace gddt::bench
