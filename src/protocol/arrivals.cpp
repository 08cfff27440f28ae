#include "protocol/arrivals.hpp"

#include <vector>

#include "core/gpu.hpp"
#include "pack/backend.hpp"
#include "protocol/deferred.hpp"
#include "protocol/peer/peers.hpp"

namespace gddt::protocol {

void unpack_as_they_arrive(const MPI_Request* handles, Operation* const* operations, int count) {
  std::vector<int> waiting;
  for (int i = 0; i < count; ++i) {
    const Operation* operation = operations[i];
    if (operation != nullptr && operation->active && !operation->finished &&
        operation->kind == Operation::Kind::kReceive && operation->message.kind.is_device()) {
      waiting.push_back(i);
    }
  }
  if (waiting.size() < 2) return;
  const std::size_t most = deferred::sets_enabled() ? pack::kSetMost : 1;
  std::vector<gpu::Stream> queued;
  std::vector<Operation*> arrived;
  std::vector<MPI_Status> statuses;
  for (std::size_t oldest = 0; oldest < waiting.size(); oldest += arrived.size()) {
    arrived.clear();
    statuses.clear();
    for (std::size_t k = oldest; k < waiting.size() && arrived.size() < most; ++k) {
      const auto i = static_cast<std::size_t>(waiting[k]);
      int flag = 0;
      MPI_Status status;
      int rc = MPI_SUCCESS;
      do {
        rc = PMPI_Request_get_status(handles[i], &flag, &status);
        // Its sender may be waiting for a read of an earlier message left running here.
        if (!flag && k == oldest) peers::release_unpacked();
      } while (rc == MPI_SUCCESS && !flag && k == oldest);
      if (rc != MPI_SUCCESS || !flag) break;
      arrived.push_back(operations[i]);
      statuses.push_back(status);
    }
    if (arrived.empty()) break;  // the library's Waitall reports it
    finish_receives(arrived.data(), statuses.data(), static_cast<int>(arrived.size()), &queued);
  }
  // A failed stream (a faulted kernel: the context is lost) fails every receive this call finished.
  Status synced = GDDT_OK;
  for (gpu::Stream stream : queued) {
    const Status status = gpu::stream_synchronize(stream);
    if (is_error(status)) synced = status;
  }
  if (is_error(synced)) {
    for (int i : waiting) {
      Operation* operation = operations[i];
      if (operation->finished && !is_error(operation->early.status)) operation->early.status = synced;
    }
  }
  peers::release_unpacked();
}

}  // namespace gddt::protocol
