#include "device_copy.hpp"

#include <unistd.h>

#include <cstring>
#include <vector>

#include "checks.hpp"
#include "workspace.hpp"

namespace gddt::bench {
namespace {

// What each rank tells rank 0 about where its buffers live.
struct RankGpu {
  char host[64] = {};
  char bus[32] = {};  // PCI bus id, "" without a GPU
};

constexpr std::uint32_t kPatternSeed = 0xD2D;

// Runs `work` with `device` current, restoring the device that was.
template <typename Work>
void on_device(int device, Work work) {
  int previous = 0;
  BENCH_CUDA_CHECK(cudaGetDevice(&previous));
  if (previous != device) BENCH_CUDA_CHECK(cudaSetDevice(device));
  work();
  if (previous != device) BENCH_CUDA_CHECK(cudaSetDevice(previous));
}

}  // namespace

std::string DeviceCopyPlan::describe() const {
  if (!unavailable.empty()) return unavailable;
  if (!crosses_devices()) return "cudaMemcpyAsync device to device on GPU " + std::to_string(source_device);
  return "cudaMemcpyPeerAsync GPU " + std::to_string(source_device) + " -> GPU " + std::to_string(target_device) +
         (peer_access ? " (peer access on)" : " (no peer access: through host memory)") + ", by rank 0";
}

DeviceCopyPlan plan_device_copy(int device, MPI_Comm comm, int rank) {
  RankGpu mine;
  gethostname(mine.host, sizeof mine.host - 1);
  if (device >= 0) BENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.bus, sizeof mine.bus, device));
  RankGpu both[2];
  BENCH_MPI_CHECK(PMPI_Gather(&mine, sizeof mine, MPI_BYTE, both, sizeof mine, MPI_BYTE, 0, comm));

  DeviceCopyPlan plan;
  char reason[256] = {};
  if (rank == 0) {
    plan.source_device = device;
    if (both[0].bus[0] == '\0' || both[1].bus[0] == '\0') {
      plan.unavailable = both[0].bus[0] == '\0' ? "no GPU on rank 0" : "no GPU on rank 1";
    } else if (std::strcmp(both[0].host, both[1].host) != 0) {
      plan.unavailable = "the ranks are on different hosts";
    } else if (std::strcmp(both[0].bus, both[1].bus) == 0) {
      plan.target_device = device;
    } else if (cudaDeviceGetByPCIBusId(&plan.target_device, both[1].bus) != cudaSuccess) {
      (void)cudaGetLastError();  // the failed lookup is the answer, not an error to carry on
      plan.unavailable = std::string("rank 1's GPU (PCI ") + both[1].bus + ") is not visible to rank 0";
    } else {
      int can_access = 0;
      BENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, plan.source_device, plan.target_device));
      plan.peer_access = can_access != 0;
    }
    plan.unavailable.copy(reason, sizeof reason - 1);
  }
  // Rank 1 takes part in the timing collectives only when rank 0 can copy.
  BENCH_MPI_CHECK(PMPI_Bcast(reason, sizeof reason, MPI_CHAR, 0, comm));
  if (rank != 0) plan.unavailable = reason;
  return plan;
}

DeviceCopy::DeviceCopy(const DeviceCopyPlan& plan, std::size_t bytes)
    : plan_(plan), capacity_(bytes), pattern_(pattern_words(bytes, kPatternSeed)) {
  BENCH_CUDA_CHECK(cudaSetDevice(plan_.source_device));
  BENCH_CUDA_CHECK(cudaMalloc(&source_, capacity_));
  BENCH_CUDA_CHECK(cudaMemcpy(source_, pattern_.data(), pattern_.size() * 4, cudaMemcpyHostToDevice));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  if (plan_.crosses_devices() && plan_.peer_access) {
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(plan_.target_device, 0);
    if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
    } else {
      BENCH_CUDA_CHECK(enabled);
    }
  }
  on_device(plan_.target_device, [&] { BENCH_CUDA_CHECK(cudaMalloc(&target_, capacity_)); });
}

DeviceCopy::~DeviceCopy() {
  if (stream_ != nullptr) BENCH_CUDA_CHECK(cudaStreamDestroy(stream_));
  if (target_ != nullptr) on_device(plan_.target_device, [&] { BENCH_CUDA_CHECK(cudaFree(target_)); });
  if (source_ != nullptr) BENCH_CUDA_CHECK(cudaFree(source_));
}

void DeviceCopy::copy(std::size_t bytes, int times) {
  for (int i = 0; i < times; ++i) {
    if (plan_.crosses_devices()) {
      BENCH_CUDA_CHECK(cudaMemcpyPeerAsync(target_, plan_.target_device, source_, plan_.source_device, bytes, stream_));
    } else {
      BENCH_CUDA_CHECK(cudaMemcpyAsync(target_, source_, bytes, cudaMemcpyDeviceToDevice, stream_));
    }
  }
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

bool DeviceCopy::copies_correctly(std::size_t bytes) {
  // The copy runs on a non-blocking stream, which does not wait for the legacy stream's memset.
  on_device(plan_.target_device, [&] {
    BENCH_CUDA_CHECK(cudaMemset(target_, 0, capacity_));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  });
  copy(bytes, 1);
  std::vector<std::uint32_t> copied(bytes / 4);
  BENCH_CUDA_CHECK(cudaMemcpy(copied.data(), target_, copied.size() * 4, cudaMemcpyDeviceToHost));
  return std::memcmp(copied.data(), pattern_.data(), copied.size() * 4) == 0;
}

}  // namespace gddt::bench
