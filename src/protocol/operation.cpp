#include "protocol/operation.hpp"

#include <algorithm>

#include "core/config.hpp"

namespace gddt::protocol {

namespace {

// An MPI_Iprobe receives nothing; it only runs the library's progress engine, for every
// communicator. It probes MPI_COMM_SELF, since the operation's own communicator may have been freed
// by now (MPI lets a program free a communicator with requests still pending on it).
void drive_library(void*) {
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
}

}  // namespace

gpu::WhileWaiting meanwhile_for(Operation& operation) {
  // From GDDT_DRIVE_PROGRESS_MIN on a pack or unpack takes long enough to be worth driving the library.
  if (static_cast<std::uint64_t>(operation.message.bytes()) < config::settings().drive_progress_min) return {};
  return gpu::WhileWaiting{drive_library, nullptr};
}

void note_stream(gpu::Stream stream, std::vector<gpu::Stream>* streams) {
  if (stream != nullptr && std::find(streams->begin(), streams->end(), stream) == streams->end())
    streams->push_back(stream);
}

}  // namespace gddt::protocol
