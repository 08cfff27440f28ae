// The only file of the suite that talks to CUDA; without GDDT_HAVE_CUDA the CUDA kinds are
// simply unavailable.
#include "memory.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#ifdef GDDT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gddt_test::p2p {
namespace {

#ifdef GDDT_HAVE_CUDA
// The GPU chosen by prepare_memory. The current device is per thread, so every allocation
// selects it again.
int selected_device = 0;

void throw_on_cuda_error(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
  }
}
#endif

}  // namespace

const char* memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost:
      return "host";
    case MemoryKind::kDevice:
      return "device";
    case MemoryKind::kManaged:
      return "managed";
    case MemoryKind::kPinned:
      return "pinned";
  }
  return "?";
}

Buffer::Buffer(Buffer&& other) noexcept
    : kind_(other.kind_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  if (data_ == nullptr) return;
#ifdef GDDT_HAVE_CUDA
  if (kind_ == MemoryKind::kPinned) {
    cudaFreeHost(data_);
  } else if (kind_ != MemoryKind::kHost) {
    cudaFree(data_);
  } else {
    std::free(data_);
  }
#else
  std::free(data_);
#endif
  data_ = nullptr;
  size_ = 0;
}

void Buffer::upload(const unsigned char* bytes, std::size_t count, std::size_t offset) {
  if (offset + count > size_) throw std::runtime_error("Buffer::upload past the end");
  if (count == 0) return;
#ifdef GDDT_HAVE_CUDA
  if (kind_ != MemoryKind::kHost) {
    throw_on_cuda_error(cudaMemcpy(data_ + offset, bytes, count, cudaMemcpyDefault),
                        "cudaMemcpy to a test buffer");
    return;
  }
#endif
  std::memcpy(data_ + offset, bytes, count);
}

std::vector<unsigned char> Buffer::download(std::size_t offset, std::size_t count) const {
  if (offset + count > size_) throw std::runtime_error("Buffer::download past the end");
  std::vector<unsigned char> bytes(count);
  if (count == 0) return bytes;
#ifdef GDDT_HAVE_CUDA
  if (kind_ != MemoryKind::kHost) {
    throw_on_cuda_error(cudaMemcpy(bytes.data(), data_ + offset, count, cudaMemcpyDefault),
                        "cudaMemcpy from a test buffer");
    return bytes;
  }
#endif
  std::memcpy(bytes.data(), data_ + offset, count);
  return bytes;
}

Buffer alloc_buffer(MemoryKind kind, std::size_t bytes) {
  // Zero-byte requests still get a distinct, classifiable address.
  const std::size_t allocated = bytes == 0 ? 1 : bytes;
  void* data = nullptr;
  switch (kind) {
    case MemoryKind::kHost:
      data = std::malloc(allocated);
      if (data == nullptr) throw std::runtime_error("malloc of a test buffer failed");
      break;
#ifdef GDDT_HAVE_CUDA
    case MemoryKind::kDevice:
      throw_on_cuda_error(cudaSetDevice(selected_device), "cudaSetDevice");
      throw_on_cuda_error(cudaMalloc(&data, allocated), "cudaMalloc");
      break;
    case MemoryKind::kManaged:
      throw_on_cuda_error(cudaSetDevice(selected_device), "cudaSetDevice");
      throw_on_cuda_error(cudaMallocManaged(&data, allocated), "cudaMallocManaged");
      break;
    case MemoryKind::kPinned:
      throw_on_cuda_error(cudaMallocHost(&data, allocated), "cudaMallocHost");
      break;
#else
    default:
      throw std::runtime_error(std::string(memory_kind_name(kind)) +
                               " memory needs a build with CUDA");
#endif
  }
  return Buffer(kind, static_cast<unsigned char*>(data), bytes);
}

std::string prepare_memory(MemoryKind kind, int local_rank) {
  if (kind == MemoryKind::kHost) return "";
#ifdef GDDT_HAVE_CUDA
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    return std::string("no GPU present (") + cudaGetErrorString(error) + ")";
  }
  selected_device = local_rank % devices;
  const cudaError_t selected = cudaSetDevice(selected_device);
  if (selected != cudaSuccess) {
    return std::string("cudaSetDevice failed: ") + cudaGetErrorString(selected);
  }
  return "";
#else
  (void)local_rank;
  return std::string(memory_kind_name(kind)) + " memory needs a build with CUDA";
#endif
}

}  // namespace gddt_test::p2p
