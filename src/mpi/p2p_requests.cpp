// The request calls of point-to-point communication: persistent starts, the Wait and Test families
// with the completion work of gddt's operations behind the requests, status queries, frees and
// cancels.
#include "mpi/p2p_sides.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "mpi/entry_points.hpp"
#include "mpi/errors.hpp"
#include "mpi/interpose.hpp"
#include "mpi/pack_api.hpp"
#include "pack/backend.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/deferred.hpp"
#include "protocol/peer/peers.hpp"
#include "protocol/arrivals.hpp"
#include "protocol/requests.hpp"
#include "protocol/transport.hpp"
#include "type/contents.hpp"

namespace gddt::mpi::p2p {
namespace {

// The operations behind an array of requests, looked up before the library call.
struct Snapshot {
  MPI_Request* user = nullptr;  // the user's array
  std::vector<MPI_Request> handles;
  std::vector<Operation*> operations;  // claimed; null once completed
  bool any = false;
  // No array (an erroneous call) gives an empty snapshot: the library reports it.
  Snapshot(int count, MPI_Request requests[]) : user(requests) {
    if (!protocol::requests::any() || count <= 0 || requests == nullptr) return;
    handles.assign(requests, requests + count);
    operations.resize(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      operations[i] = protocol::requests::claim(handles[i]);
      any = any || (operations[i] != nullptr && operations[i]->active);
    }
  }
  ~Snapshot() {
    for (Operation* operation : operations) protocol::requests::release(operation);
  }
  Operation* at(int i) const { return operations.empty() ? nullptr : operations[static_cast<std::size_t>(i)]; }
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  // Takes entry i's operation out of the snapshot (null when it has none or is not active).
  Operation* remove_at(int i) {
    Operation* operation = operations[static_cast<std::size_t>(i)];
    if (operation == nullptr || !operation->active) return nullptr;
    for (auto& other : operations)
      if (other == operation) other = nullptr;
    return operation;
  }
  // Completes entry i; a failure is recorded in `status` and returned.
  int complete_at(int i, int error, MPI_Status* status) {
    Operation* operation = remove_at(i);
    if (operation == nullptr) return MPI_SUCCESS;
    const bool library_persistent = operation->library_persistent;
    int rc = complete(handles[static_cast<std::size_t>(i)], operation, error, *status);
    if (library_persistent) PMPI_Request_free(&user[i]);  // the library left it allocated
    if (rc != MPI_SUCCESS) status->MPI_ERROR = rc;
    return rc;
  }
  // Entry i's request, freed by the library without completing it (protocol::requests::abandon).
  void abandon_at(int i) {
    Operation* operation = remove_at(i);
    if (operation != nullptr) protocol::requests::abandon(handles[static_cast<std::size_t>(i)], operation);
  }
};

// A status to hand the library when the user ignores it: gddt needs the received count.
struct StatusArray {
  std::vector<MPI_Status> local;
  MPI_Status* data;
  StatusArray(int count, MPI_Status* user) : data(user) {
    if (user == MPI_STATUSES_IGNORE) {
      local.resize(static_cast<std::size_t>(count > 0 ? count : 1));
      data = local.data();
    }
  }
};

// Completes the entries of a whole-array call (Waitall, Testall) that the library finished.
int complete_all(Snapshot& snap, int count, int rc, MPI_Status* statuses) {
  int result = rc;
  for (int i = 0; i < count; ++i) {
    int error = rc == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : rc;
    if (error == MPI_ERR_PENDING) {
      // Left active for a later call, unless the library freed it anyway (Open MPI 5 + UCX after a
      // truncation in the same call): then its operation must go too.
      if (snap.user[i] == MPI_REQUEST_NULL) snap.abandon_at(i);
      continue;
    }
    if (snap.complete_at(i, error, &statuses[i]) != MPI_SUCCESS) result = MPI_ERR_IN_STATUS;
  }
  return result;
}

// Completes the entries a Waitsome/Testsome reported.
int complete_some(Snapshot& snap, int rc, int outcount, const int indices[], MPI_Status* statuses) {
  if (outcount == MPI_UNDEFINED) return rc;
  int result = rc;
  for (int k = 0; k < outcount; ++k) {
    int error = rc == MPI_ERR_IN_STATUS ? statuses[k].MPI_ERROR : rc;
    if (snap.complete_at(indices[k], error, &statuses[k]) != MPI_SUCCESS) result = MPI_ERR_IN_STATUS;
  }
  return result;
}

}  // namespace

// Starts a persistent request. A send of gddt's is packed first (the user may have changed the
// buffer since the last start); where the pack can be left running on the GPU, the library's start
// is held until it is done, as for MPI_Isend (deferred.hpp).
int start_one(MPI_Request* request, Operation* operation) {
  if (operation == nullptr) return PMPI_Start(request);
  if (operation->partitions > 0) {  // a send's partitions are filled as they are readied
    for (auto& unpacked : operation->partition_unpacked) unpacked.store(false);
    operation->active = true;
    operation->finished = false;
    return PMPI_Start(request);
  }
  const bool held = start_held(*operation);
  gpu::Stream stream = nullptr;
  if (operation->kind == Operation::Kind::kSend) {
    int rc = held ? queue_outgoing_reporting(*operation, &stream) : pack_outgoing(*operation);
    if (rc != MPI_SUCCESS) return rc;
  } else if (operation->kind == Operation::Kind::kCollective) {
    int rc = raise(operation->comm, operation->collective->start());
    if (rc != MPI_SUCCESS) return rc;
  } else if (operation->watches_markers) {
    protocol::peers::note_unprobed_receive(*operation);
  }
  operation->active = true;
  operation->finished = false;
  if (!held) return PMPI_Start(request);
  protocol::deferred::enqueue(*request, operation, stream);
  return MPI_SUCCESS;
}

int start(MPI_Request* request) {
  protocol::deferred::before_blocking();  // sends start in call order
  Snapshot snap(1, request);
  return start_one(request, snap.at(0));
}

namespace {

// A persistent send of MPI_Startall whose pack is one launch leaves it to share a launch with the
// others' (protocol::deferred::enqueue_unpacked), as a run of MPI_Isend does: a halo exchange of
// six faces packs in one launch instead of six.
int start_in_set(MPI_Request* request, Operation* operation) {
  gpu::Stream stream = nullptr;
  int rc = raise(operation->comm, protocol::message_stream(operation->message, operation->staging, &stream));
  if (rc != MPI_SUCCESS) return rc;
  operation->active = true;
  operation->finished = false;
  protocol::deferred::enqueue_unpacked(*request, operation, stream);
  return MPI_SUCCESS;
}

bool joins_startall_set(const Operation* operation) {
  return protocol::deferred::sets_enabled() && operation != nullptr && start_held(*operation) &&
         protocol::fills_in_one_launch(*operation);
}

}  // namespace

// MPI_Startall starts its requests in no particular order: in array order serves.
int startall(int count, MPI_Request requests[]) {
  protocol::deferred::before_blocking();
  Snapshot snap(count, requests);
  const bool none_of_ours =
      std::all_of(snap.operations.begin(), snap.operations.end(), [](Operation* op) { return op == nullptr; });
  if (none_of_ours) return PMPI_Startall(count, requests);  // also for invalid arguments
  int rc = MPI_SUCCESS;
  bool in_sets = false;
  for (int i = 0; i < count && rc == MPI_SUCCESS; ++i) {
    Operation* operation = snap.at(i);
    const bool in_set = joins_startall_set(operation);
    rc = in_set ? start_in_set(&requests[i], operation) : start_one(&requests[i], operation);
    in_sets = in_sets || in_set;
  }
  if (in_sets) protocol::deferred::advance();  // queues the packs still waiting for their set to fill
  return rc;
}

namespace {

// Every completion call starts the queued sends first: one of them may be among its requests, and
// the library would take a persistent request that is not started for a completed one. Requests the
// user freed are finished before and after it (BlockingCall).
class Completing : public BlockingCall {
 public:
  Completing() { protocol::requests::progress_detached(); }
};

}  // namespace

int wait(MPI_Request* request, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(1, request);
  if (!snap.any) return PMPI_Wait(request, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Wait(request, st);
  int done = snap.complete_at(0, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int test(MPI_Request* request, int* flag, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(1, request);
  if (!snap.any) return PMPI_Test(request, flag, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Test(request, flag, st);
  if (flag == nullptr || !*flag) return rc;  // a missing flag is the library's to report
  int done = snap.complete_at(0, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Waitany(count, requests, index, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Waitany(count, requests, index, st);
  if (index == nullptr || *index == MPI_UNDEFINED) return rc;
  int done = snap.complete_at(*index, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Testany(count, requests, index, flag, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Testany(count, requests, index, flag, st);
  if (flag == nullptr || index == nullptr || !*flag || *index == MPI_UNDEFINED) return rc;
  int done = snap.complete_at(*index, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Waitall(count, requests, statuses);
  protocol::unpack_as_they_arrive(snap.handles.data(), snap.operations.data(), count);
  StatusArray st(count, statuses);
  int rc = PMPI_Waitall(count, requests, st.data);
  return complete_all(snap, count, rc, st.data);
}

int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Testall(count, requests, flag, statuses);
  StatusArray st(count, statuses);
  int rc = PMPI_Testall(count, requests, flag, st.data);
  if (flag == nullptr || (!*flag && rc == MPI_SUCCESS)) return rc;
  return complete_all(snap, count, rc, st.data);
}

namespace {

// Waitsome and Testsome differ only in the library call.
using SomeCall = int (*)(int, MPI_Request[], int*, int[], MPI_Status[]);

int complete_some_of(SomeCall call, int incount, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]) {
  const Completing completing;
  Snapshot snap(incount, requests);
  if (!snap.any) return call(incount, requests, outcount, indices, statuses);
  StatusArray st(incount, statuses);
  int rc = call(incount, requests, outcount, indices, st.data);
  if (outcount == nullptr || indices == nullptr) return rc;
  return complete_some(snap, rc, *outcount, indices, st.data);
}

}  // namespace

int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return complete_some_of(PMPI_Waitsome, incount, requests, outcount, indices, statuses);
}

int testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return complete_some_of(PMPI_Testsome, incount, requests, outcount, indices, statuses);
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  protocol::deferred::before_blocking();
  Snapshot snap(1, &request);
  if (!snap.any) return PMPI_Request_get_status(request, flag, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Request_get_status(request, flag, st);
  if (flag == nullptr || !*flag) return rc;
  // The request stays allocated: unpack now (the user may read the buffer) and only once.
  int done = finish_reporting(*snap.at(0), rc, *st);
  return rc != MPI_SUCCESS ? rc : done;
}

int request_free(MPI_Request* request) {
  protocol::deferred::before_blocking();
  Operation* operation = request != nullptr ? protocol::requests::claim(*request) : nullptr;
  if (operation == nullptr) return PMPI_Request_free(request);
  const MPI_Request handle = *request;
  auto owned = protocol::requests::take(handle, operation);
  if (owned->persistent && !owned->active) return PMPI_Request_free(request);
  owned->claimed = false;
  protocol::requests::detach(handle, std::move(owned));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

// A send of the peer protocol is not cancelled (MPI allows a cancel to fail): its marker and header
// could not be withdrawn together, and a header left behind would pair with a later marker.
int cancel(MPI_Request* request) {
  protocol::deferred::before_blocking();  // the library cancels only requests it has started
  Operation* operation = request != nullptr && protocol::requests::any() ? protocol::requests::claim(*request) : nullptr;
  const bool peer_send = operation != nullptr && operation->peer != nullptr;
  protocol::requests::release(operation);
  return peer_send ? MPI_SUCCESS : PMPI_Cancel(request);
}


}  // namespace gddt::mpi::p2p
