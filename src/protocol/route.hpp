// A row of the transport table (transports.def, transport.cpp): the route it names, what a call
// asks of a side (Call), what every row's test decides on (Choice), and the library quirks and
// settings those tests read. Each row lives in the file of its transport.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>

#include "core/counters.hpp"
#include "protocol/message.hpp"

namespace gddt::protocol {

struct Operation;  // operation.hpp

// What an operation is (Operation::Kind).
enum class OperationKind { kSend, kReceive, kCollective };

// How one side of a call reaches the MPI library: the name of a row of the transport table.
enum class Route {
  kForward,       // the user's buffer and datatype go to the MPI library unchanged (host memory)
  kDeviceBytes,   // contiguous device data: its bytes go to a CUDA-aware library in place, as MPI_PACKED
  kDeviceStaged,  // packed into device scratch; the (CUDA-aware) library moves device memory
  kHostStaged,    // packed into host staging; the library moves host memory
  kHostSpan,      // the typed span copied to host staging, gaps included; the library packs or
                  // unpacks the user's own datatype there
  kPeerInline,    // peer protocol (peers.hpp): the packed bytes ride in the header, a marker on the
                  // user's communicator stands for them
  kPeerIpc,       // peer protocol: the receiver reads the packed bytes in the sender's device
                  // scratch through CUDA IPC
  kPeerStaged,    // peer protocol: the packed bytes go as a message on the private data twin
};

// What one call asks of a side beyond its message.
struct Call {
  OperationKind kind = OperationKind::kSend;
  // The library copies the send data aside with the CPU (the buffered modes into the attached
  // buffer; Open MPI 5.0's MPI_Isendrecv_replace into a buffer of its own, which crashes on device
  // memory even for MPI_INT): device data goes to it only as host staging.
  bool cpu_copied = false;
  // The receive half of an MPI_Isendrecv (kHostSpanForExchangeReceives below: MPICH's status of it
  // is empty).
  bool exchange_receive = false;
  // Sends: the destination and tag (the peer protocol's header goes there too).
  int peer = MPI_PROC_NULL;
  int tag = 0;
  // Sends: the receiver may read the user's buffer until the send completes (blocking and
  // nonblocking sends; not buffered, persistent or exchange ones, which complete apart from it).
  bool lends_buffer = false;
  // MPI_Psend_init, MPI_Precv_init: the library moves the staging's partitions itself, so the
  // message never takes the peer protocol.
  bool partitioned = false;
  // MPI_Recv, which probes first where its message may be a marker (peers::probes_for_marker):
  // the node's senders are not told otherwise in between.
  bool blocking_receive = false;
};

// One side of a call as the MPI library will see it: the user's own arguments when the message is
// forwarded, the staging otherwise.
struct Side {
  void* buffer = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  std::unique_ptr<Operation> operation;  // null when nothing is left to do around the library's call
};

// What every row's test decides on, settled before the first row is asked.
struct Choice {
  const Message& message;
  const Call& call;
  MPI_Comm comm;
  bool cuda_aware;  // the library takes device pointers
  Route forced;     // GDDT_PROTOCOL's route for device messages; kForward for "auto"
  // A receive that may be handed a marker of the peer protocol whose message is read through CUDA
  // IPC or arrives in the staged plane's parts (peers.hpp): neither crosses the receive's staging,
  // and reading a marker out of device memory is a copy and a wait for the GPU (10 us on an H200).
  bool markers_on_host;
  // The receiver's process in the node table for the peer rows (peer/transports.cpp: -1 where the
  // send cannot take the peer protocol), found by the first of them that asks.
  mutable std::optional<int> receiver_slot;
  bool device() const { return message.kind.is_device(); }
  // An OpenCL buffer: only its packed bytes, in host staging, can reach the library.
  bool opencl() const { return message.kind.type == GDDT_MEMORY_OPENCL; }
  bool send() const { return call.kind == OperationKind::kSend; }
  // A CUDA-aware library's device path costs more per message than a host one; small messages save
  // more there than a GPU-to-host copy costs them.
  bool small() const;
};

// One row: a transport, filled by field name in its own file.
struct Transport {
  Route route = Route::kForward;
  const char* name = "";
  counters::Counter sides = counters::Counter::kForwardSides;  // counts the sides it takes
  bool (*serves)(const Choice& choice) = nullptr;
  // How much staging it needs; null for transports that hand the library the user's memory.
  std::int64_t (*staging_bytes)(const Message& message, const Call& call) = nullptr;
  // Whether its staging is device scratch of the message's GPU (host staging where the pool has
  // none now: resource exhaustion degrades, the route stays).
  bool device_staging = false;
  // Fills in what the library is handed (operation: null without staging).
  Status (*hand)(const Message& message, const Call& call, Operation* operation, Side* side) = nullptr;
  // Before the library sends; with `queued_on`, GPU work may be left queued there.
  Status (*fill)(Operation& operation, gpu::Stream* queued_on) = nullptr;
  // After the library received `received` bytes (packed bytes; 0 where the library wrote the user's
  // typemap itself).
  Status (*empty)(Operation& operation, std::int64_t received, gpu::Stream* queued_on) = nullptr;
  // The library moves packed bytes, which gddt packs and unpacks (launches may be shared, starts
  // held until the pack is done); false: the library moves the user's datatype.
  bool packed = false;
  // A send of the peer protocol: a marker goes to the library in the message's place, and the
  // operation keeps the communicator's channel (peers.hpp).
  bool marker = false;
  // Frees what the transport made of the library (datatypes), at MPI_Finalize; may be null.
  void (*release)() = nullptr;
};

// A row's name, counter and test, which every row has; its file fills in the rest by field name.
constexpr Transport transport_row(Route route, const char* name, counters::Counter sides,
                                  bool (*serves)(const Choice& choice)) {
  Transport t;
  t.route = route;
  t.name = name;
  t.sides = sides;
  t.serves = serves;
  return t;
}

// The rows, in the table's order (transports.def), each defined in the file of its transport.
#define GDDT_TRANSPORT(function) const Transport& function();
#include "protocol/transports.def"
#undef GDDT_TRANSPORT

// MPICH 4.0 receives a large message into a struct of mixed basic types, a pair type such as
// MPI_SHORT_INT, or some resized types only from a sender whose datatype has the same layout:
// MPI_PACKED data, or data declared as any gap-free type of the same signature, is refused or
// truncated. So under MPICH a staged send hands the library the user's own datatype on a host copy
// of the elements (the host-span transport), and plain MPICH peers always understand it. MPICH
// 4.0's MPI_Isendrecv leaves its status empty (no count, source or tag), so a receive half staged
// as packed bytes could not tell how many arrived: there the library receives the user's own
// datatype on a host copy of the span too.
#if defined(MPICH_VERSION)
constexpr bool kHostSpanForStagedSends = true;
constexpr bool kHostSpanForExchangeReceives = true;
#else
constexpr bool kHostSpanForStagedSends = false;
constexpr bool kHostSpanForExchangeReceives = false;
#endif

// Open MPI 4 (ob1 over shared memory with a single-copy mechanism) copies the whole of a long
// message into a contiguous receive buffer, past its end, when the message is longer than the
// buffer; the library alone does so too, but only for contiguous receives, and a staged receive of
// a derived datatype would be one. So there gddt describes N bytes of receive staging by a datatype
// that leaves a hole after them: N bytes, a hole of one byte, one more byte. The library then
// copies through its datatype engine, which stops at the end of the typemap, and a message of N + 1
// bytes, which the library takes without complaint, is gddt's to report as truncated (finish in
// requests.cpp). Measured on Open MPI 4.1.4 over shared memory (gddt-bench-receive-hole), the holed
// receive takes 0.84-1.51x the time of a contiguous one from 1 KiB to 4 MiB.
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
constexpr bool kHoledReceiveStaging = true;
#else
constexpr bool kHoledReceiveStaging = false;
#endif
constexpr std::int64_t kHoleBytes = 2;  // the hole and the byte after it

// The route GDDT_PROTOCOL forces on device messages; kForward when it is "auto".
Route device_route_forced();

// GDDT_P2P_HOST=gddt: host messages are staged by gddt too.
bool host_through_gddt();

// Whether a receive of no bytes must be staged too (Open MPI 4 writes a longer message past a
// contiguous receive buffer).
constexpr bool stages_empty_receives() { return kHoledReceiveStaging; }

// Whether the status of an MPI_Isendrecv tells its receive's count and source (not under MPICH 4.0).
constexpr bool exchange_statuses_complete() { return !kHostSpanForExchangeReceives; }

}  // namespace gddt::protocol
