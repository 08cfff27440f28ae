// What gddt keeps of one send, receive or collective behind an MPI request: the user's message, the
// staging the library really moves, the route it took and what is left to do at completion
// (requests.hpp keeps these by request handle).
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <vector>

#include "protocol/message.hpp"
#include "protocol/route.hpp"

namespace gddt::protocol {

namespace peers {
struct Channel;  // peer/internal.hpp: an agreed communicator's private twins
}  // namespace peers

// How an operation ended for its user: gddt's status of its own work, or the error the MPI library
// returned for its request. Translated into an MPI error class and raised on the operation's
// communicator once, by the MPI layer (`reported` after the first time).
struct Outcome {
  Status status = GDDT_OK;
  int library_error = MPI_SUCCESS;
  bool reported = false;
};

// What a collective or a nonblocking file read or write leaves to its request (mpi/collective.hpp):
// filling its host stand-ins at each MPI_Start of a persistent call, copying the results out of
// them at completion.
class CollectiveWork {
 public:
  virtual ~CollectiveWork() = default;
  virtual Status start() = 0;
  virtual Status complete() = 0;
};

// A send of the peer protocol (peers.hpp): the header that goes to the communicator's private twin
// and the marker that the user's communicator carries in the message's place.
struct PeerSend {
  int dest = MPI_PROC_NULL;
  int tag = 0;
  int transfer = 0;  // the tag of its completion message on the private data communicator (CUDA IPC)
  std::vector<char> header;
  std::vector<char> marker = std::vector<char>(kMarkerBytes);
  MPI_Request header_request = MPI_REQUEST_NULL;
  // The stream where the pack of the user's buffer may still run (CUDA IPC), until finish_send;
  // or the pack posted to the resident kernel (the eager path).
  gpu::Stream packing = nullptr;
  pack::Posted pack_posted;
  bool lends_buffer = false;  // Call::lends_buffer
  // The direct plane (peer/direct_send.cpp): the receiver may read the user's buffer itself until
  // the send settles its lending in `lent_slot` of the node table (finish_send).
  bool lent = false;
  int lent_slot = -1;
  std::uint32_t lent_generation = 0;
  int receiver_slot = -1;  // the receiver's process in the node table
  Message lent_message;
  std::shared_ptr<peers::Channel> lent_channel;  // the channel its copy would take
  PeerSend() = default;
  PeerSend(const PeerSend&) = delete;
  PeerSend& operator=(const PeerSend&) = delete;
  // Requests still in flight keep their buffers until the library completes them
  // (peer/lingering.cpp).
  ~PeerSend();
};

struct Operation {
  using Kind = OperationKind;
  Kind kind = Kind::kSend;
  bool persistent = false;
  bool active = true;     // a persistent request between MPI_Start and its completion
  bool finished = false;  // completion work done early (MPI_Request_get_status, Waitall)
  Outcome early;          // of that early completion work, or of a held start that failed
  bool claimed = false;   // a completion call is working on it (guarded by the table's lock)
  // A nonblocking send whose library request is a persistent send of gddt's own (never one shared
  // by other requests), started once its pack is done (deferred.hpp) or at once (a lent buffer's
  // marker: mpi/p2p.cpp), and freed when it completes: the user's request is not persistent.
  bool library_persistent = false;
  Route route = Route::kForward;
  Message message;                // the user's buffer
  Staging staging;                // what the MPI library really sends or receives
  MPI_Comm comm = MPI_COMM_NULL;  // whose error handler hears of a failure at completion
  MPI_Win win = MPI_WIN_NULL;     // instead of `comm`, for request-based one-sided calls
  MPI_File file = MPI_FILE_NULL;  // a file call's: its file's handler hears of it instead
  // Receives: whether the legacy default stream was found idle when the receive was posted.
  pack::Ordering ordering = pack::Ordering::kCheckLegacyStream;
  // The send half of an MPI_Isendrecv whose receive half this is: its staging lives until the one
  // request of both completes.
  std::unique_ptr<Operation> outgoing;
  std::unique_ptr<CollectiveWork> collective;  // kCollective only
  std::unique_ptr<PeerSend> peer;               // sends of the peer protocol
  // Receives on a communicator of gddt peers that may be handed a marker (peers.hpp).
  bool watches_markers = false;
  // A blocking receive that probed first and found a marker received it here, in host memory,
  // instead of into its device staging (peers::probes_for_marker).
  bool marker_on_host = false;
  char early_marker[kMarkerBytes] = {};
  // The peer protocol's channel of `comm`, kept by watched receives and sends of the protocol
  // until they complete, whether or not the communicator is freed meanwhile.
  std::shared_ptr<peers::Channel> channel;
  // The packed bytes a resolved marker stood for and were received: the count its status reports
  // (-1: the library's status stands).
  std::int64_t status_bytes = -1;
  // A partitioned operation (MPI_Psend_init, MPI_Precv_init): partition i is packed bytes
  // [i * partition_bytes, (i + 1) * partition_bytes) of the message; a receive notes those
  // MPI_Parrived moved into the user's buffer since it was started (from any thread).
  int partitions = 0;
  std::int64_t partition_bytes = 0;
  std::vector<std::atomic<bool>> partition_unpacked;
};

// What to do while the GPU packs or unpacks `operation`'s message: for messages large enough that
// transfers posted earlier should move on meanwhile, drive the library's progress engine (libraries
// without a progress thread advance them only inside MPI calls).
gpu::WhileWaiting meanwhile_for(Operation& operation);

// Adds `stream` to `streams` (the streams left with work to synchronize) unless null or there.
void note_stream(gpu::Stream stream, std::vector<gpu::Stream>* streams);

}  // namespace gddt::protocol
