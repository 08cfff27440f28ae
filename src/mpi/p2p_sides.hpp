// What the point-to-point calls (p2p.cpp) and their request calls (p2p_requests.cpp) share: a
// call's sides prepared for the transports, and an operation's completion. Internal to mpi/.
#pragma once

#include <mpi.h>

#include <memory>

#include "core/gpu.hpp"
#include "mpi/send_calls.hpp"
#include "protocol/requests.hpp"
#include "protocol/transport.hpp"

namespace gddt::mpi::p2p {

using protocol::Call;
using protocol::Operation;
using protocol::Side;

// One side of a call, checked and handed to the transports: MPI_SUCCESS or the class raised on `comm`.
int prepare(const Call& asked, const void* buf, int count, MPI_Datatype datatype, int peer, MPI_Comm comm,
            Side* side);
// A send side, prepared and readied to post (ready_to_post).
int prepare_send(bool cpu_copied, const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 Side* side, bool lends_buffer = false);
int ready_to_post(int prepared, Side* side);
int pack_outgoing(Operation& operation);
int queue_outgoing_reporting(Operation& operation, gpu::Stream* stream);
RequestSend persistent_twin(RequestSend call);
bool start_held(const Operation& operation);
int post_deferred(RequestSend init, Side& side, int dest, int tag, MPI_Comm comm, MPI_Request* request);

// Completion: an operation's outcome as the call's MPI error class.
int finish_reporting(Operation& operation, int error, MPI_Status& status);
int complete(MPI_Request handle, Operation* operation, int error, MPI_Status& status);
int track(std::unique_ptr<Operation> operation, bool persistent, MPI_Request request);
MPI_Status* status_or_local(MPI_Status* status, MPI_Status* local);
int exchange(Side& out, Side& in, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status);

}  // namespace gddt::mpi::p2p
