// The peer protocol: how gddt processes talk to each other when every process of a communicator
// runs gddt. A message then leaves the MPI library's matching exactly as it was (a marker of
// kMarkerBytes bytes goes on the user's communicator and tag, matched by MPI like any message)
// while what it stands for travels on the communicator's private twins: its header (size, plane,
// the CUDA IPC handle of the sender's scratch holding the packed bytes, or the bytes themselves)
// on the header twin with the user's tag, sent before the marker; the marker carries a sequence
// number that names its header. Data messages and releases go on the data twin, with a tag of the
// transfer's own.
//
// Who is a peer is settled without any communication the MPI library would not do anyway, since a
// process without gddt must never be asked to take part: every gddt process of a job registers in
// a table in shared memory of its node before MPI_Init, and after MPI_Init (which synchronizes the
// job's processes) the first one to look seals the node as "all gddt" when every local process
// registered, else as "raw" for good. A communicator is agreed when its node is sealed "all gddt"
// and all its processes are on that node; every member decides the same, and only then does each
// duplicate it twice. Everything else (other communicators, intercommunicators, Fortran programs,
// GDDT_PEERS=off anywhere on the node) keeps the raw format: one message of packed bytes.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <vector>

#include "core/gpu.hpp"
#include "protocol/operation.hpp"
#include "protocol/route.hpp"

namespace gddt::protocol::peers {

namespace detail {
extern std::atomic<bool> active;
}

// True while some communicator is agreed: the MPI layer's fast paths then look further.
inline bool active() { return detail::active.load(std::memory_order_relaxed); }

// Before the library's MPI_Init / MPI_Init_thread: registers this process on its node.
void before_init();
// After it: seals the node and agrees on MPI_COMM_WORLD (collective over it).
void after_init();
// After the library made `comm` with a blocking constructor (collective over `comm`, which may be
// MPI_COMM_NULL where this process is not a member).
void on_comm_created(MPI_Comm comm);
// Before the library frees `comm`.
void on_comm_freed(MPI_Comm comm);
// Before MPI_Finalize: completes what lingers and frees every private communicator.
void finalize();

// Whether `comm` is agreed: its messages between gddt processes may take the peer protocol.
bool agreed(MPI_Comm comm);

// The channel of agreed communicator `comm` for an operation to keep (Operation::channel); null
// where `comm` is not agreed.
std::shared_ptr<Channel> channel_kept(MPI_Comm comm);

// The channel of `comm` for a receive of `capacity` packed bytes on it to keep, where such a
// receive may be handed a marker; null where it may not.
std::shared_ptr<Channel> watching(MPI_Comm comm, std::int64_t capacity);

// Whether CUDA IPC may serve `message` (device memory; GDDT_IPC=on, or auto through a library
// that is not CUDA-aware, from GDDT_PEER_IPC_MIN bytes; below, the eager path where GDDT_IPC is
// not off and the resident kernel serves the GPU now): a send's first condition for it, and what
// a watched receive expects of the messages that fill it.
bool awaits_ipc(const Message& message);

// Whether a blocking receive of `operation` probes for its message before it receives it: one on
// a communicator of peers whose staging is device memory a marker would have to be copied out of
// (a copy and a wait for the GPU, 10 us on an H200), of a size a sender through a CUDA-aware
// library sends through CUDA IPC while the receiver probes (probing_receiver_takes_ipc,
// transports.cpp). A marker then lands in operation.early_marker, packed bytes in the staging.
bool probes_for_marker(const Operation& operation);

// This process's threads in such a probe, published to the node's senders: `begins` true as a
// thread enters one, false as it leaves.
void note_probing_receive(bool begins);

// A receive of `operation` staged or started (a blocking one that probes says so again as it
// begins its probe): where it would be probed for (probes_for_marker) its marker lands in device
// staging, so the node's senders keep the raw format for this process until its next probing
// receive.
void note_unprobed_receive(const Operation& operation);

// Publishes the GPU of a watched device receive to the node's senders (GDDT_IPC=auto asks whether
// the receiver's GPU is another than the sender's).
void note_receive(const Message& message);

// Fills a send of a peer route: packs the message into staging of its own (in the header, in device
// scratch the receiver maps through CUDA IPC, or in host staging for a data message on the data
// twin) and posts the header, and the data message or the receive of the release. The library then
// posts the marker in the user's mode, so the send completes as that mode says while the staging
// lives on until the receiver is done with it (progress()). Where the send lends its buffer
// (Call::lends_buffer, GDDT_PEER_DIRECT) and CUDA IPC can export it, nothing is packed: the header
// carries the buffer's handle and layout, and the receiver reads the buffer itself unless the send
// completes first (finish_send).
Status post_header(Operation& operation);

// Waits for what a send's post_header left the GPU doing with the user's buffer (the pack of a
// message read through CUDA IPC), and ends the lending of the buffer (the direct plane: waiting
// for a read under way, or sending a copy): the send is complete only once it is done. Called when
// the send's request completes and when its operation ends.
Status finish_send(PeerSend& send);

// An unpack out of a sender's scratch mapped through CUDA IPC that resolve() gathered instead of
// launching it, for queue_gathered to launch with others; the stream already waits for the pack.
struct GatheredUnpack {
  Operation* operation = nullptr;
  pack::WindowMove move;
  int device = -1;
  gpu::Stream stream = nullptr;
  MPI_Comm data = MPI_COMM_NULL;  // where the release goes, to `sender` with the transfer's tag
  int sender = -1;
  int transfer = 0;
};

// Resolves a marker that completed `operation` (a watched receive) with `status`: moves the data it
// stands for into the user's buffer and completes the transfer with the sender. *handled is false
// when the message was no marker. With `queued_on`, the GPU may be left unpacking (*queued_on: its
// stream, else null); the sender hears that its bytes were read once the unpack is done
// (release_unpacked, progress). With `gathered` too, an unpack out of a sender's scratch is added
// there instead of being launched (queue_gathered launches it, and releases the scratch after).
Status resolve(Operation& operation, const MPI_Status& status, bool* handled, gpu::Stream* queued_on = nullptr,
               std::vector<GatheredUnpack>* gathered = nullptr);

// Launches the gathered unpacks, those of one stream in as few launches as the backend takes
// (pack::Backend::unpack_set), and holds each sender's release until its unpack is done; a failed
// launch becomes its operations' outcome. Adds the streams left unpacking to *queued (synchronize
// them, then release_unpacked) and empties `gathered`.
void queue_gathered(std::vector<GatheredUnpack>* gathered, std::vector<gpu::Stream>* queued);

// Tells senders whose bytes the unpacks and reads left running by resolve() have read (releases,
// lent buffers marked read), for those done by now: polled while a receiver waits for its next
// arrival, and called after synchronizing the streams resolve() returned.
void release_unpacked();

// How the peer protocol finishes the watched receives on a communicator (MPI_COMM_NULL: on every
// one) whose messages the library has matched, where it needs the markers they took: the request
// table's requests::finish_arrived_markers, handed over once by requests.cpp, which calls into this
// protocol and so may not be called by it by name.
using MarkerFinisher = void (*)(MPI_Comm comm);
void set_marker_finisher(MarkerFinisher finisher);

// A probe that found a marker reports the size of the message it stands for.
void correct_probe(MPI_Comm comm, MPI_Status* status);

// Completes the header and marker sends whose PeerSend is gone; cheap when there are none.
void progress();

// Closes this process's cached CUDA IPC mappings of process `pid`'s allocations that overlap its
// allocation at `base` (`size` bytes): those were freed, and while one stays open the driver refuses
// to map the new one ("resource already mapped").
void close_freed_mappings(std::int32_t pid, std::uint64_t base, std::uint64_t size);

// --- one-sided windows whose members reach each other's memory (windows.cpp) ---
// A window whose every member is a gddt process of this node with its memory on a GPU is reached
// through CUDA IPC (mpi/onesided_direct.hpp). Who takes part is settled with no communication a
// plain process would not do: each member that can publishes its memory in its node entry before
// the library's window creation, which no member leaves before every member entered it; after it,
// every member finds all the others' memory or decides alike that the window is not shared.

// What a member publishes of its window memory: device memory as CUDA IPC exports it, or host
// memory gddt allocated as a POSIX shared memory object of this user (MPI_Win_allocate with
// GDDT_RMA_HOST=gddt), which other processes map by its name.
enum class WindowPlace : std::int32_t { kDevice = 1, kSharedHost = 2 };
constexpr std::size_t kWindowNameBytes = 64;
struct WindowMemory {
  WindowPlace place;
  gpu::IpcExport allocation;    // kDevice: the export of the allocation holding it, in process `pid`
  std::int32_t pid;
  char name[kWindowNameBytes];  // kSharedHost: the object's name
  std::uint64_t offset;         // of the window's first byte in that allocation
  std::int64_t bytes;
  std::int64_t disp_unit;
};
// The words of a member's window that origins lock with (lock/unlock, and accumulating calls).
struct WindowLocks {
  std::atomic<std::uint32_t>* passive = nullptr;
  std::atomic<std::uint32_t>* accumulate = nullptr;
};
constexpr std::uint32_t kExclusiveHolder = 0x80000000u;

// The count of the next window made on `comm`, counted by every member at every MPI_Win_create
// and MPI_Win_allocate on it; 0 where `comm` is not agreed.
std::uint64_t next_window(MPI_Comm comm);
// Publishes this process's memory of window `window` of `comm` in a cell of its node entry;
// false where no cell is free. Returns the cell's key (for withdraw_window) in *key.
bool publish_window(MPI_Comm comm, std::uint64_t window, const WindowMemory& memory, std::uint64_t* key);
// After the library made the window: every member's memory and locks (by rank of `comm`) where
// every member published it, else false. This process's own entry is included.
bool shared_window(MPI_Comm comm, std::uint64_t window, std::vector<WindowMemory>* memory,
                   std::vector<WindowLocks>* locks);
// Takes this process's cell `key` back.
void withdraw_window(std::uint64_t key);

// For gddt-info and tests: whether this process's node was sealed as all gddt.
bool node_agreed();

}  // namespace gddt::protocol::peers
