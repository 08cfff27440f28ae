// What the files of the peer protocol (peers.hpp) share: the node's table in shared memory
// (node_table.hpp), the channels of agreed communicators, the header that says where a message's
// packed bytes wait, and the functions one file of the protocol calls in another; each group names
// the file defining it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/event_pool.hpp"
#include "core/gpu.hpp"
#include "pack/engine.hpp"
#include "protocol/peer/eager_hold.hpp"
#include "protocol/peer/lending.hpp"
#include "protocol/peer/node_table.hpp"
#include "protocol/peer/peers.hpp"
#include "type/layout.hpp"

namespace gddt::protocol::peers {

// The backend the engine picks for windows between two buffers of `memory` (one always exists for
// host and for device memory).
inline const pack::Backend& within(gddt_memory_type_t memory) { return *pack::backend_for(memory, memory); }

// --- agreed communicators and their private twins (channels.cpp) ---

// Kept by the table of agreed communicators and by the operations posted on one (Operation::
// channel), so that a communicator freed with operations pending keeps its twins until they
// complete: the last holder frees them.
struct Channel : std::enable_shared_from_this<Channel> {
  MPI_Comm headers = MPI_COMM_NULL;  // headers, tagged with the user's tag
  MPI_Comm data = MPI_COMM_NULL;     // completions, tagged with the transfer
  std::vector<int> slot_of_rank;     // each rank's entry in the node table
  int rank = 0;                      // this process's
  // Each member's serial for the communicator (agree): with windows_made, names the cell of a
  // window that member publishes in the node table (windows.cpp). Empty where they are unknown.
  std::vector<std::uint64_t> serial_of_rank;
  std::atomic<std::uint64_t> windows_made{0};
  std::atomic<std::uint64_t> next_sequence{0};  // of this process's markers on the communicator
  std::mutex stash_mutex;
  // Headers taken off the header twin before their markers were resolved, by (source, tag,
  // sequence): receives complete, and are resolved, in any order.
  std::map<std::tuple<int, int, std::uint64_t>, std::vector<char>> stash;

  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  // An operation that outlived MPI_Finalize leaves the twins to the library's end.
  ~Channel() {
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (finalized) return;
    if (headers != MPI_COMM_NULL) PMPI_Comm_free(&headers);
    if (data != MPI_COMM_NULL) PMPI_Comm_free(&data);
  }
};

struct Channels {
  std::shared_mutex mutex;
  std::unordered_map<std::uint64_t, std::shared_ptr<Channel>> of_comm;
};

Channels& channels();
std::uint64_t key_of(MPI_Comm comm);
// Runs the marker finisher set by set_marker_finisher (peers.hpp), if any (receive.cpp).
void finish_arrived_markers(MPI_Comm comm);

Channel* channel_of(MPI_Comm comm);

// Collective over `comm`: every member decides alike, from the node table they share.
void agree(MPI_Comm comm);

// --- the eager path's flags (flags.cpp; FlagLease: eager_hold.hpp) ---

struct Header;

// False where no flag is free, or the GPU's flags could not be had.
bool take_flag(int device, FlagLease* lease);
void give_back(const FlagLease& lease);
// Names the lease's word and value in the header (flag_*).
void name_flag(const FlagLease& lease, Header* header);
void free_flags();

// --- events that order a receiver's read after the sender's pack (pack_events.cpp) ---

// A sender records one after queueing the pack of a message read through CUDA IPC, so that the
// header and marker leave while the GPU packs and the receiver's GPU, not the sender's host, waits
// for the pack. Each is lent to one transfer until its release (the receiver has waited for it by
// then), at most kMostPackEvents at once; beyond, the sender waits for its pack itself.
struct PackEvent {
  gpu::Event event = nullptr;
  int device = -1;
  std::uint32_t id = 0;  // unique in this process; 0 for none
  unsigned char handle[gpu::kIpcHandleBytes] = {};
};

// Events recorded after the packs of a staged message's parts.
gpu::EventPool& part_events();
bool take_pack_event(int device, PackEvent* taken);
void give_back(const PackEvent& event);
void destroy_pack_events();

// --- requests that outlive their sends (lingering.cpp) ---

// A request of gddt's own with what it needs alive until it completes: the bytes a send reads, the
// staging a receiver reads through CUDA IPC until its release message comes.
struct Pending {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<char> bytes;
  std::shared_ptr<Staging> staging;  // shared by the parts of a staged message
  std::int64_t scratch_held = 0;  // device scratch counted in scratch_held_for_ipc
  PackEvent pack_event;           // lent to the transfer until its release (id 0: none)
  EagerHold eager;                // the eager path's flag and pack (eager.cpp)
};

// Device scratch that transfers through CUDA IPC hold until their release: at most half of
// GDDT_POOL_DEVICE_MAX (a window of 64 messages of 4 MiB with the default), so that the raw format,
// which new messages take beyond it, still finds scratch for its own pipeline.
extern std::atomic<std::int64_t> scratch_held_for_ipc;

std::int64_t ipc_scratch_budget();

struct Lingering {
  std::mutex mutex;
  std::atomic<bool> any{false};
  std::vector<Pending> pending;
  std::uint64_t retired = 0;  // entries completed so far
};

Lingering& lingering();
void linger(Pending entry);
void linger(MPI_Request* request, std::vector<char>* bytes);
void complete_lingering();
std::uint64_t lingering_retired();

// At MPI_Finalize: waits for the releases still due, then leaves what never completed (a message
// its receiver never took) to the library, its memory kept to the end since the library may still
// read it.
void abandon_lingering();

// --- the header ---

// Where the packed bytes wait for the receiver: in the header; in device scratch of the sender,
// read through CUDA IPC, or written by the sender into the receiver's landing (small messages);
// in a message on the data twin; not packed at all, the receiver reading
// the sender's own buffer through CUDA IPC (the sender's layout follows the header).
enum class Plane : std::uint8_t { kInline = 1, kIpc = 2, kStaged = 3, kDirect = 4 };

constexpr std::uint32_t kMagic = 0x67646470;  // "gddp"

struct Header {
  std::uint32_t magic = kMagic;
  Plane plane = Plane::kInline;
  std::int32_t transfer = 0;
  std::uint64_t sequence = 0;  // the marker's
  std::int64_t bytes = 0;  // packed bytes of the message
  std::int64_t part = 0;   // the staged plane: packed bytes per data message (the last may hold fewer)
  // CUDA IPC: where the packed bytes (the direct plane: the user's buffer) are in the sender's
  // allocation, or in the receiver's landing (landing_gpu >= 0).
  std::int64_t offset = 0;
  // The direct plane: the elements of the sender's datatype, whose layout's bytes follow the header,
  // and the state of the lending in the node table (the sender's entry, its slot and generation).
  std::int64_t count = 0;
  std::uint64_t layout_bytes = 0;
  std::int32_t lent_owner = -1;
  std::int32_t lent_slot = -1;
  std::uint32_t lent_generation = 0;
  std::uint64_t buffer_id = 0;
  std::int32_t pid = 0;
  std::uint64_t base = 0;  // the allocation's address in the sender (a message to itself reads there)
  std::uint64_t size = 0;  // and its bytes
  gpu::DeviceUuid uuid;
  unsigned char handle[gpu::kIpcHandleBytes] = {};
  // The event recorded after the pack, which the receiver's GPU waits for before it reads (id 0:
  // the bytes were in place when the header left): opened by its handle, or used as it is (`local`)
  // by a receiver in the sender's own process.
  std::uint32_t event_id = 0;
  std::uint64_t event_local = 0;
  unsigned char event_handle[gpu::kIpcHandleBytes] = {};
  // The eager path (flags.cpp): the word of the sender's allocation `flag_buffer_id` that its
  // resident kernel sets to `flag_value` once the pack is done (0: no flag; the event says when).
  std::uint64_t flag_value = 0;
  std::uint64_t flag_buffer_id = 0;
  std::uint64_t flag_base = 0;
  std::uint64_t flag_size = 0;
  std::uint64_t flag_offset = 0;
  unsigned char flag_handle[gpu::kIpcHandleBytes] = {};
  // The eager path into the receiver's landing (landing.cpp): the index of the receiver's GPU in
  // its node entry whose landing holds the packed bytes at `offset` and the flag at `flag_offset`
  // (-1: the bytes are in the sender's scratch).
  std::int32_t landing_gpu = -1;
};

// Tags on the data twin, within what every library allows (MPI_TAG_UB >= 32767): a transfer's data
// message goes from sender to receiver with its number, its release from receiver to sender with
// the number plus kReleaseTags, so the two directions never match each other's.
constexpr int kReleaseTags = 16384;
// A transfer's number (send.cpp).
int new_transfer();

// Posts `header` on the header twin to the send's receiver, with `carried` (header.bytes packed
// bytes; null: none) after it (send.cpp).
Status send_header(Channel& channel, const Header& header, const void* carried, PeerSend& send);

// --- the eager path (eager.cpp) ---

// Sends a message below GDDT_PEER_IPC_MIN through CUDA IPC where the resident kernel of its GPU
// runs: the kernel packs it into the receiver's landing (landing_of), else into device scratch,
// and sets a flag there (else flags.cpp) that the receiver's GPU waits for, while the header
// leaves at once; the send waits for the pack when it completes (finish_send). *sent is false
// where the kernel declines (it is idle: the inline pack starts it; the window is too scattered
// for it; without a landing, no flag is free): nothing was sent, and the caller sends the message
// inline, as the packed-bytes format would.
Status send_eager(Operation& operation, Channel& channel, Header& header, bool* sent);

// Whether the eager path serves a send to the process at node slot `receiver` now: none of its
// transfers to it awaits its release. A message after one still in flight comes in a stream
// (sends one after another, the receiver behind): there the receiver's wait for each pack and
// its read across the link cost 2.5-4 us a message more than the packed-bytes format, whose
// packs and unpacks overlap (gddt-bench-flood, two H200s, performance.md), while a message
// answering one (a ping-pong, a halo exchange) took 3-8 us less at 4 KiB.
bool eager_clear_to(int receiver);

// Retires a transfer of the eager path once its release came (lingering.cpp).
void release_eager(const EagerHold& eager);

// Unpacks a message of the eager path out of `packed` (the receiver's landing, or the sender's
// scratch mapped here) on the current GPU: the resident kernel waits for the flag `after`, unpacks
// and is waited for. *moved is false where it declines or gave up
// waiting (or may have: the bytes are then written again); the caller then unpacks on a stream
// that waits for the flag (stream_after_pack).
Status unpack_after_flag(Operation& operation, pack::DeviceFlag after, std::int64_t bytes, const char* packed,
                         bool* moved);

// --- landings: the eager path's bytes written into the receiver's memory (landing.cpp) ---

// The largest message a landing's slot holds.
constexpr std::int64_t kLandingSlotBytes = 16 << 10;

// Where a sender's resident kernel writes a message into its receiver's landing.
struct Landing {
  char* packed = nullptr;   // mapped here
  pack::DeviceFlag flag;    // mapped here, and the value to set once the bytes are written
  int gpu_index = -1;       // the receiver's GPU, in its node entry
  std::int64_t offset = 0;  // of the bytes in the landing
  std::uint64_t flag_offset = 0;
};

// Makes and publishes this process's landing on GPU `device` where it has none yet (once per GPU:
// an allocation and its export), so that the next eager messages to it land there.
void prepare_landing(int device);

// Where GPU `device` of this process writes a message of `bytes` packed bytes to the process at
// node slot `receiver`: its landing on the GPU of its latest device receive, mapped once. False
// where it has none there (yet), `device` cannot reach that GPU, or the message exceeds a slot. The
// caller must hold the only transfer of the eager path to that receiver (claim_landing): each
// sender has one slot in each landing.
bool landing_of(int receiver, int device, std::int64_t bytes, Landing* landing);

// The receiver's side: the GPU whose landing holds the bytes of `header` (landing_gpu >= 0), where
// they are and the flag the sender sets.
Status reach_landing(const Header& header, std::int64_t bytes, int* device, char** packed, pack::DeviceFlag* flag);

// At MPI_Finalize: closes the mappings of other processes' landings and frees this process's own.
void free_landings();

// The byte count of a direct-plane copy's header where the sender could not make the copy (its
// `part` then holds the sender's Status, which the receive reports too).
constexpr std::int64_t kNoCopy = -1;

// --- CUDA IPC caches (ipc_caches.cpp) ---

Status export_of(const void* pointer, gpu::IpcExport* exported);

// Names in the header what the receiver maps through CUDA IPC: the exported allocation (its GPU,
// handle and id) and where `at` lies in it.
Status name_in_export(const gpu::IpcExport& exported, const void* at, Header* header);

// What the user queued on the legacy default stream before the call is done, so that another
// process's GPU reads or writes the buffer only after it (gddt's own kernels are ordered after that
// stream alike).
Status user_work_done(int device);

// Where the buffer that `named` names (an offset in another process's exported allocation, or in
// this process's own) is for GPU `device` of this process: mapped through CUDA IPC, or the address
// itself where the allocation is this process's.
Status map_named(const Header& named, int device, char** at);

// From the first gathered unpack until queue_gathered launched them all, the mappings they read
// stay open.
void keep_mappings_for_gathering();
void end_keeping_mappings();

void close_mappings();

// The sender's flag of `header` (flag_value != 0) as GPU `device` of this process reads it.
Status flag_of(const Header& header, int device, pack::DeviceFlag* flag);

// The sender's pack event of `header` as GPU `device` of this process waits for it.
Status pack_event_of(const Header& header, int device, gpu::Event* event);
void close_opened_events();

// --- releases held until the unpacks reading the sender's scratch are done (releases.cpp) ---

// Sends the held releases whose unpacks are done and marks the lent buffers whose reads are (all of
// them, waiting, with `wait`). A receiver about to block in the library first waits for them all:
// the sender it waits for may be waiting for one of those marks.
void send_held_releases(bool wait);

// Marks the lent buffer of `state` (its `generation`) read once the read now queued on `reading` is
// done (send_held_releases); false where no event could be had (the caller then waits and marks it).
bool hold_read(gpu::Stream reading, lending::Slot& state, std::uint32_t generation);

// Releases the sender's scratch of `transfer` once the unpack queued on `reading` (null: none) has
// read it: held (*held) until an event recorded after the unpack has passed (send_held_releases),
// else after waiting for `reading` here, whose failure becomes *outcome unless it holds one.
Status release_scratch(gpu::Stream reading, MPI_Comm data, int sender, int transfer, Status* outcome, bool* held);

// --- the routing model and the peer rows of the transport table (transports.cpp) ---

// Whether a message of `bytes` packed bytes is below GDDT_PEER_IPC_MIN: CUDA IPC moves it only on
// the eager path (GDDT_PEER_EAGER), packed into the receiver's landing or scratch, never lent (the
// direct plane).
bool eager_sized(std::int64_t bytes);

// Whether a send of `message` may lend its buffer at all (the direct plane), before its allocation
// is asked (reachable_in_place): the call may (Call::lends_buffer), GDDT_PEER_DIRECT, not eager-sized,
// device memory, and not through a CUDA-aware library (whose own CUDA IPC may have mapped the user's
// allocation in the receiver already).
bool may_lend(const Message& message, bool lends_buffer);

// Whether another process's GPU may reach `message`'s buffer in place (a lent send's, a receive's
// asked to be written): its span lies in a device allocation CUDA IPC exports (*exported) of at
// least kDirectLeastAllocation bytes, and its layout has at most kDirectMostPieces pieces (encoded
// into *wire).
bool reachable_in_place(const Message& message, gpu::IpcExport* exported, std::vector<char>* wire);

// Whether GDDT_IPC=auto lends a buffer (the direct plane) rather than packing it into scratch:
// always to a receiver on the sender's own GPU; to one on another GPU below 1 MiB. Between two
// H200s over NVLink the direct plane took 0.7-0.8x the scratch plane's time for single messages
// of 64 KiB and the halo exchange of 62 KiB faces (115 against 150 us), while from 1 MiB the
// scratch plane moved windows 1.2-4x faster (the receiver's kernel gathering small words across
// the link reads far more than it keeps: 4 MiB of the 3-D face 27 against 107 GB/s;
// performance.md). GDDT_IPC=on lends wherever the direct plane may.
bool lends_to(int sender_device, int receiver_slot, std::int64_t bytes);

// --- the staged plane (staged_plane.cpp) ---

// The staged plane's part size between this process and `peer` of the channel: the larger of the
// two sides' own (GDDT_STAGING_CHUNK, a gddt-tune profile's measured chunk, raised to
// GDDT_STAGING_CHUNK_MIN), so that neither pays the per-message cost of parts smaller than its
// curves call for.
std::int64_t agreed_staged_part(const Channel& channel, int peer);

// Staging for a staged send: device scratch of GPU `device` where the parts go GPU to GPU
// (on_device), else pinned host memory. Sent parts keep theirs until the receiver took them, which
// in a window of large messages can spend the pool's limit while earlier parts still cross; taking
// slower memory then costs more than waiting for them, so the send first drives the library's
// progress while parts keep completing.
Status take_staged_send_staging(Staging& staging, bool on_device, int device, std::int64_t bytes);

// Packs and sends the parts of a staged message whose header is out. Where the GPU packs them
// (one launch each on the message's stream), the packs of up to kStagedPartsAhead parts are
// queued ahead of the part being sent, each followed by an event that the send of its part
// waits for: the GPU packs the next parts while a part crosses, and the receiver unpacks the one
// before. Elsewhere each part is packed, then sent.
Status send_staged(Operation& operation, Channel& channel, int dest, const Header& header,
                   const std::shared_ptr<Staging>& staging);

// Receives the parts of a staged message, each unpacked (the first `bytes` packed bytes in all) while
// the next ones arrive: on the GPU, queued on its stream; by this thread otherwise. Every part is
// received whatever happens to the unpacks, so that none is left on the data twin.
Status receive_staged(Operation& operation, const Header& header, int source, Channel& channel, std::int64_t bytes);

// --- the CUDA IPC plane (scratch_plane.cpp) ---

// Packs a message that its receiver reads through CUDA IPC into `staging` (scratch of GPU
// `device`). Where the GPU packs it, the pack is left running: an event recorded after it, lent as
// *event, goes in *header for the receiver's GPU to wait for, and the send waits for the pack when
// it completes (finish_send). Without an event to lend, it waits now.
Status queue_ipc_pack(Operation& operation, const Staging& staging, int device, Header* header, PackEvent* event);

// Exposes the packed bytes in `staging` through CUDA IPC (the header's plane and names); false
// where the staging is not device scratch CUDA IPC exports.
bool expose_scratch(const Staging& staging, Header* header);

// Takes `bytes` of scratch on GPU `device` from the shared pool into *staging and exposes it
// (*exposed, expose_scratch); where CUDA IPC cannot export it, takes instead staging the library may
// be handed (take_staged_send_staging): never the shared pool's, and host staging for a library
// without device memory.
Status take_exposed_scratch(std::shared_ptr<Staging>* staging, int device, std::int64_t bytes, Header* header,
                            bool* exposed);

// Keeps the scratch of a message exposed through CUDA IPC until the receiver's release.
Status hold_until_release(Channel& channel, int dest, const Header& header, std::shared_ptr<Staging> staging,
                          PackEvent pack_event, EagerHold eager = {});

// Where the bytes that `header` names (its offset in the sender's allocation) are for this
// process, and the GPU that reads them into the receive of `message` (reading_gpu): mapped through
// CUDA IPC, or the sender's own address where the sender is this process.
Status reach_sender(const Message& message, const Header& header, int* device, char** at);

// Whether GPU `device` writes the receive buffer of `message` itself (else through staging).
bool writes_directly(const Message& message, int device);

// Copies `bytes` packed bytes that the GPU of `stream` reads at `packed` into staging where the
// receive buffer can be written from, then unpacks them there, once what `stream` had queued is done.
Status land_and_unpack(Operation& operation, const void* packed, std::int64_t bytes, gpu::Stream stream);

// Unpacks `bytes` packed bytes that lie in the sender's device scratch, mapped here through CUDA
// IPC: one kernel reading them across where the receive buffer is device-accessible on the GPU
// that reads (or pinned), else a copy into staging first. With `queued_on`, the kernel may be left
// running: *queued_on is then its stream (null when the bytes are in place). With `gather`, that
// kernel is not launched but described there (gather->operation set), its stream waiting for the
// sender's pack, for queue_gathered to launch with others.
Status unpack_remote(Operation& operation, const Header& header, std::int64_t bytes, gpu::Stream* queued_on,
                     GatheredUnpack* gather = nullptr);

// --- the direct plane, the receiver's side (direct_receive.cpp) ---

// Layouts of other processes' buffers (the direct plane), by their bytes, so that one read again
// keeps what the backends attached to it (the CUDA backend's piece table on the GPU): at most
// kMostRemoteLayouts, all forgotten when full (those in use live on with their messages).
constexpr std::size_t kMostRemoteLayouts = 256;
struct RemoteLayouts {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const type::Layout>> by_bytes;
};

RemoteLayouts& remote_layouts();
Status remote_layout(const char* wire, std::size_t size, std::shared_ptr<const type::Layout>* layout);

// Queues on `stream` one kernel moving the first `bytes` packed bytes of `from` into `to`, both
// reachable from the stream's GPU: the pack of `from` into a contiguous `to`, the unpack of `to`
// out of a contiguous `from`, or the backend's transcribe from one layout into the other.
// *served is false where none can (the transcribe declines); nothing is queued then.
Status move_in_one_kernel(const Message& from, const Message& to, std::int64_t bytes, gpu::Stream stream, bool* served);

// Resolves a marker of the direct plane: takes the sender's lending (header.lent_*) and moves its
// buffer's first `moved` packed bytes (none: only marks it done), read here or, where asks_to_write
// says so, written by the sender; or, where the sender took the buffer back first, takes its copy.
// With `queued_on`, a read by one kernel may be left running (*queued_on: its stream, else null),
// the buffer marked read once it is done (hold_read), or, between two typed layouts, left to launch
// with the others of its batch (launch_gathered_reads).
Status resolve_lent(Operation& operation, const Header& header, const std::vector<char>& bytes, int source,
                    Channel& channel, std::int64_t moved, gpu::Stream* queued_on);

// Launches the reads of lent buffers that resolve_lent left to go together (with `queued_on`,
// between two typed layouts), those of one stream in as few launches as the backend takes
// (pack::Backend::transcribe_set), each buffer marked read once its kernel is done (hold_read). A
// thread calls it before it blocks in the library (send_held_releases) and at the end of its
// batch (queue_gathered).
void launch_gathered_reads();

// --- the direct plane, the sender's side (direct_send.cpp) ---

// Whether the receiver may read this send's own buffer (the direct plane): a device allocation that
// CUDA IPC exports, of a send whose request may wait for the receiver, with a layout small enough
// to travel in the header (appended to *wire). Not through a CUDA-aware library: its own CUDA IPC
// may have mapped the user's allocation in the receiver already, and a process maps an allocation
// once ("resource already mapped", seen through UCX).
bool lends_user_buffer(const Operation& operation, gpu::IpcExport* lent, std::vector<char>* wire);

// Posts the header of the direct plane, with the sender's layout after it: the receiver may read
// the user's buffer from now on until the send settles the lending (finish_send).
Status post_lent(Operation& operation, Channel& channel, Header& header, const gpu::IpcExport& lent,
                 const std::vector<char>& wire, int slot, std::uint32_t generation);

// Serves the requests to write that receivers put to this process's waiting sends: claims each
// (lending::claim), writes and answers written; where the write fails, answers declined and the
// receiver reads.
void serve_asked_writes();

// Ends a send's lending of its buffer (the direct plane) before the send completes: waits while
// the receiver reads it or has it written (serve_asked_writes); where the receiver has not begun,
// waits up to GDDT_PEER_DIRECT_PATIENCE microseconds for it to, if it resolved a marker of the
// direct plane within that time before; else takes the buffer back and sends a copy (send_copy).
// Every wait is bounded by the patience or by a move under way, never by the receiver's next MPI
// call, so no program MPI lets finish hangs.
Status settle_lent(PeerSend& send);

}  // namespace gddt::protocol::peers
