#include "device_api/proxy.hpp"

#include <sys/prctl.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "core/gpu.hpp"
#include "core/hooks.hpp"
#include "core/log.hpp"
#include "core/memory.hpp"
#include "device_api/device_memory.hpp"
#include "gddt/gddt_device_core.h"
#include "pack/engine.hpp"
#include "protocol/transport.hpp"

namespace gddt::device_api {
namespace {

struct CommEntry {
  MPI_Comm comm = MPI_COMM_NULL;  // the user's: point-to-point
  MPI_Comm dup = MPI_COMM_NULL;   // private: barrier and allreduce
};

struct TypeEntry {
  MPI_Datatype type = MPI_DATATYPE_NULL;  // gddt's duplicate of the user's type
  DeviceCopy layout;
};

// A post the proxy handed to MPI, until its request completes.
struct InFlight {
  std::uint64_t ticket = 0;
  gddt_device_post_t post{};
  MPI_Request request = MPI_REQUEST_NULL;
  std::chrono::steady_clock::time_point since;
  bool reported = false;  // outstanding past GDDT_DEVICE_TIMEOUT, said so once
};

struct State {
  std::mutex tables_mutex;
  std::vector<CommEntry> comms;  // indices are the handles' entries; freed ones stay empty
  std::vector<TypeEntry> types;

  std::mutex run_mutex;  // one runner of the proxy at a time
  bool made = false;     // under tables_mutex
  gddt_device_ring_t device_ring{};
  gddt_device_post_t *posts = nullptr;  // host addresses of the mapped ring
  gddt_device_completion_t *completions = nullptr;
  unsigned char *staging = nullptr;
  DeviceCopy device_part;  // tail, slot_ticket and pending
  std::uint64_t next = 0;  // the next ticket to take
  std::vector<InFlight> in_flight;
  std::atomic<int> active{0};

  bool thread_mode = false;
  std::atomic<bool> running{false};  // posts are taken (until MPI_Finalize)
  std::atomic<bool> stop{false};
  std::thread thread;
};

State &state() {
  static State *s = new State;  // outlives static destructors run after MPI_Finalize
  return *s;
}

// The proxy's own MPI calls land in gddt's progress hook again: it must not run
// itself there.
thread_local bool inside_proxy = false;

int error_class_of(int code) {
  int cls = MPI_ERR_OTHER;
  MPI_Error_class(code, &cls);
  return cls;
}

MPI_Datatype basic_type(std::uint32_t basic) {
  switch (basic) {
    case GDDT_DEVICE_CHAR:
      return MPI_SIGNED_CHAR;
    case GDDT_DEVICE_INT:
      return MPI_INT;
    case GDDT_DEVICE_UNSIGNED:
      return MPI_UNSIGNED;
    case GDDT_DEVICE_LONG_LONG:
      return MPI_LONG_LONG;
    case GDDT_DEVICE_UNSIGNED_LONG_LONG:
      return MPI_UNSIGNED_LONG_LONG;
    case GDDT_DEVICE_FLOAT:
      return MPI_FLOAT;
    case GDDT_DEVICE_DOUBLE:
      return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op reduce_op(std::uint32_t reduce) {
  switch (reduce) {
    case GDDT_DEVICE_SUM:
      return MPI_SUM;
    case GDDT_DEVICE_PROD:
      return MPI_PROD;
    case GDDT_DEVICE_MIN:
      return MPI_MIN;
    case GDDT_DEVICE_MAX:
      return MPI_MAX;
  }
  return MPI_OP_NULL;
}

// The fields, then the stamp the waiter polls for.
void fill_completion(gddt_device_completion_t &c, std::uint64_t stamp, int error, int source, int tag,
                     std::int64_t bytes) {
  c.error = error;
  c.source = source;
  c.tag = tag;
  c.bytes = bytes;
  __atomic_store_n(&c.stamp, stamp, __ATOMIC_RELEASE);
}

void write_completion(State &s, std::uint64_t ticket, int error, int source, int tag, std::int64_t bytes,
                      bool counted = true) {
  fill_completion(s.completions[ticket % s.device_ring.nslots], ticket + 1, error, source, tag, bytes);
  if (counted) counters::add(counters::Counter::kDeviceCompletions, 1);
}

bool packed_op(std::uint32_t op) { return op == GDDT_DEVICE_OP_SEND_PACKED || op == GDDT_DEVICE_OP_RECV_PACKED; }

// The end of an operation: in the ring, or, for one with staging of its own, in its own
// completion (whose host address its post carries in `count`).
void finish_post(State &s, std::uint64_t ticket, const gddt_device_post_t &post, int error, int source, int tag,
                 std::int64_t bytes) {
  if (!packed_op(post.op)) {
    write_completion(s, ticket, error, source, tag, bytes);
    return;
  }
  auto *own = reinterpret_cast<gddt_device_completion_t *>(static_cast<std::uintptr_t>(post.count));
  fill_completion(*own, 1, error, source, tag, bytes);
  counters::add(counters::Counter::kDeviceCompletions, 1);
}

unsigned char *staging_of(State &s, std::uint64_t ticket) {
  return s.staging + (ticket % s.device_ring.nslots) * static_cast<std::uint64_t>(s.device_ring.slot_bytes);
}

// Hands one post to MPI; an operation MPI refuses completes at once with its
// error class.
void issue(State &s, std::uint64_t ticket, const gddt_device_post_t &post) {
  counters::add(counters::Counter::kDevicePosts, 1);
  GDDT_LOG(kDebug, "device API: ticket %llu, %s, peer %d, tag %d, %llu bytes", static_cast<unsigned long long>(ticket),
           device::op_name(post.op), post.peer, post.tag, static_cast<unsigned long long>(post.bytes));
  MPI_Comm comm = MPI_COMM_NULL, dup = MPI_COMM_NULL;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  {
    std::lock_guard<std::mutex> lock(s.tables_mutex);
    if (post.comm < s.comms.size()) {
      comm = s.comms[post.comm].comm;
      dup = s.comms[post.comm].dup;
    }
    if (post.type < s.types.size()) type = s.types[post.type].type;
  }
  const bool direct = post.op == GDDT_DEVICE_OP_SEND_DIRECT || post.op == GDDT_DEVICE_OP_RECV_DIRECT;
  int error = MPI_SUCCESS;
  if (comm == MPI_COMM_NULL) error = MPI_ERR_COMM;
  if (error == MPI_SUCCESS && direct && type == MPI_DATATYPE_NULL) error = MPI_ERR_TYPE;
  if (error == MPI_SUCCESS && (post.bytes > INT_MAX || (!packed_op(post.op) && post.count > INT_MAX)))
    error = MPI_ERR_COUNT;
  if (direct) counters::add(counters::Counter::kDeviceDirect, 1);
  if (packed_op(post.op)) counters::add(counters::Counter::kDeviceOwnStaging, 1);
  void *buffer = reinterpret_cast<void *>(post.buffer);
  const int bytes = static_cast<int>(post.bytes);
  const int count = static_cast<int>(post.count);
  MPI_Request request = MPI_REQUEST_NULL;
  if (error == MPI_SUCCESS) {
    int rc = MPI_SUCCESS;
    switch (post.op) {
      case GDDT_DEVICE_OP_SEND:
        rc = MPI_Isend(staging_of(s, ticket), bytes, MPI_PACKED, post.peer, post.tag, comm, &request);
        break;
      case GDDT_DEVICE_OP_RECV:
        rc = MPI_Irecv(staging_of(s, ticket), bytes, MPI_PACKED, post.peer, post.tag, comm, &request);
        break;
      case GDDT_DEVICE_OP_SEND_PACKED:
        rc = MPI_Isend(buffer, bytes, MPI_PACKED, post.peer, post.tag, comm, &request);
        break;
      case GDDT_DEVICE_OP_RECV_PACKED:
        rc = MPI_Irecv(buffer, bytes, MPI_PACKED, post.peer, post.tag, comm, &request);
        break;
      case GDDT_DEVICE_OP_SEND_DIRECT: {
        const protocol::LibraryHostOnly host_only;
        rc = MPI_Isend(buffer, count, type, post.peer, post.tag, comm, &request);
        break;
      }
      case GDDT_DEVICE_OP_RECV_DIRECT: {
        const protocol::LibraryHostOnly host_only;
        rc = MPI_Irecv(buffer, count, type, post.peer, post.tag, comm, &request);
        break;
      }
      case GDDT_DEVICE_OP_BARRIER:
        rc = MPI_Ibarrier(dup, &request);
        break;
      case GDDT_DEVICE_OP_ALLREDUCE: {
        const MPI_Datatype basic = basic_type(post.type);
        int basic_bytes = 1;
        if (basic != MPI_DATATYPE_NULL) MPI_Type_size(basic, &basic_bytes);
        rc = basic == MPI_DATATYPE_NULL ? MPI_ERR_TYPE
             : reduce_op(post.reduce) == MPI_OP_NULL
                 ? MPI_ERR_OP
                 : MPI_Iallreduce(MPI_IN_PLACE, staging_of(s, ticket), bytes / basic_bytes, basic,
                                  reduce_op(post.reduce), dup, &request);
        break;
      }
      default:
        rc = MPI_ERR_ARG;
        break;
    }
    if (rc != MPI_SUCCESS) error = error_class_of(rc);
  }
  if (error != MPI_SUCCESS) {
    finish_post(s, ticket, post, error, post.peer, post.tag, 0);
    return;
  }
  s.in_flight.push_back(InFlight{ticket, post, request, std::chrono::steady_clock::now(), false});
}

// The completion of a request MPI completed with `rc` and `status`.
void complete(State &s, const InFlight &f, int rc, const MPI_Status &status) {
  const gddt_device_post_t &post = f.post;
  const int error = rc == MPI_SUCCESS ? MPI_SUCCESS : error_class_of(rc);
  int source = post.peer, tag = post.tag;
  std::int64_t bytes = static_cast<std::int64_t>(post.bytes);
  const std::uint32_t op = post.op;
  if (op == GDDT_DEVICE_OP_RECV || op == GDDT_DEVICE_OP_RECV_DIRECT || op == GDDT_DEVICE_OP_RECV_PACKED) {
    source = status.MPI_SOURCE;
    tag = status.MPI_TAG;
    int received = 0;
    bytes = error == MPI_SUCCESS && MPI_Get_count(&status, MPI_BYTE, &received) == MPI_SUCCESS ? received : 0;
  } else if (op == GDDT_DEVICE_OP_BARRIER || op == GDDT_DEVICE_OP_ALLREDUCE) {
    source = MPI_ANY_SOURCE;
    tag = MPI_ANY_TAG;
  }
  GDDT_LOG(kDebug, "device API: ticket %llu complete, error class %d, %lld bytes",
           static_cast<unsigned long long>(f.ticket), error, static_cast<long long>(bytes));
  finish_post(s, f.ticket, post, error, source, tag, bytes);
}

void report(const InFlight &f, const char *why) {
  GDDT_LOG(kWarn, "device request ticket %llu (%s, peer %d, tag %d, %llu bytes) %s",
           static_cast<unsigned long long>(f.ticket), device::op_name(f.post.op), f.post.peer, f.post.tag,
           static_cast<unsigned long long>(f.post.bytes), why);
}

// One pass: every new post, then every request in flight. True when anything
// happened.
bool run_once(State &s) {
  bool progressed = false;
  const std::uint32_t nslots = s.device_ring.nslots;
  for (;;) {
    gddt_device_post_t &slot = s.posts[s.next % nslots];
    if (__atomic_load_n(&slot.stamp, __ATOMIC_ACQUIRE) != s.next + 1) break;
    const gddt_device_post_t post = slot;
    // The poster of an operation with its own completion frees the ticket once it reads this.
    if (packed_op(post.op)) write_completion(s, s.next, MPI_SUCCESS, post.peer, post.tag, 0, false);
    issue(s, s.next, post);
    s.next += post.nslots == 0 ? 1 : post.nslots;
    progressed = true;
  }
  const std::uint64_t timeout = config::settings().device_timeout;
  const auto now = std::chrono::steady_clock::now();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < s.in_flight.size(); ++i) {
    InFlight &f = s.in_flight[i];
    int done = 0;
    MPI_Status status;
    const int rc = MPI_Test(&f.request, &done, &status);
    if (done != 0 || rc != MPI_SUCCESS) {
      complete(s, f, rc, status);
      progressed = true;
      continue;
    }
    if (timeout != 0 && !f.reported && now - f.since > std::chrono::seconds(timeout)) {
      report(f, "still outstanding after GDDT_DEVICE_TIMEOUT");
      f.reported = true;
    }
    if (kept != i) s.in_flight[kept] = f;
    ++kept;
  }
  s.in_flight.resize(kept);
  s.active.store(static_cast<int>(kept), std::memory_order_relaxed);
  return progressed;
}

// Runs the proxy on the calling thread unless another thread is running it or
// this one is inside it already.
void run_here(State &s) {
  if (inside_proxy || !s.running.load(std::memory_order_acquire)) return;
  std::unique_lock<std::mutex> lock(s.run_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  inside_proxy = true;
  run_once(s);
  inside_proxy = false;
}

void progress_hook() {
  State &s = state();
  if (!s.thread_mode) run_here(s);
}

// How long the proxy thread keeps polling after its last post or completion, and while
// requests are in flight, before it sleeps between polls: a kernel's next post usually follows
// within an iteration's compute, and MPI progresses only while it is polled.
constexpr auto kPollAfterWork = std::chrono::microseconds(500);
// Idle longer than this, it polls every 100 us (leaving the core to the application), else
// every 10 us.
constexpr auto kLongIdle = std::chrono::milliseconds(20);

void proxy_thread(State *s) {
  inside_proxy = true;
  // Sleeps of 10 us would otherwise last the default 50 us of timer slack longer.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  GDDT_LOG(kDebug, "device API: the proxy thread runs");
  auto last_work = std::chrono::steady_clock::now();
  while (!s->stop.load(std::memory_order_acquire)) {
    bool busy;
    {
      std::lock_guard<std::mutex> lock(s->run_mutex);
      busy = run_once(*s) || !s->in_flight.empty();
    }
    const auto now = std::chrono::steady_clock::now();
    if (busy) last_work = now;
    const auto idle = now - last_work;
    if (idle < kPollAfterWork) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(idle > kLongIdle ? 100 : 10));
    }
  }
}

// Stops the proxy before gddt and MPI finalize: what is still outstanding is
// reported and cancelled, the private duplicates and datatypes freed.
void finalize_hook() {
  State &s = state();
  if (!s.running.exchange(false)) return;
  if (s.thread_mode) {
    s.stop.store(true, std::memory_order_release);
    s.thread.join();
  }
  std::lock_guard<std::mutex> lock(s.run_mutex);
  inside_proxy = true;
  run_once(s);
  for (InFlight &f : s.in_flight) {
    report(f, "still outstanding at MPI_Finalize: cancelled");
    MPI_Cancel(&f.request);
    MPI_Request_free(&f.request);
  }
  s.in_flight.clear();
  std::lock_guard<std::mutex> tables(s.tables_mutex);
  for (CommEntry &c : s.comms)
    if (c.dup != MPI_COMM_NULL) MPI_Comm_free(&c.dup);
  for (TypeEntry &t : s.types)
    if (t.type != MPI_DATATYPE_NULL) MPI_Type_free(&t.type);
  s.comms.clear();
  s.types.clear();
  inside_proxy = false;
}

Status make_ring(State &s) {
  const config::Settings &settings = config::settings();
  const std::uint32_t nslots = static_cast<std::uint32_t>(settings.device_ring_slots);
  const std::uint32_t slot_bytes = static_cast<std::uint32_t>((settings.device_slot_bytes + 15) / 16 * 16);
  gddt_device_ring_t &r = s.device_ring;
  void *host = nullptr, *device = nullptr;
  GDDT_CHECK(gpu::mapped_alloc(nslots * sizeof(gddt_device_post_t), &host, &device));
  s.posts = static_cast<gddt_device_post_t *>(host);
  r.posts = static_cast<gddt_device_post_t *>(device);
  GDDT_CHECK(gpu::mapped_alloc(nslots * sizeof(gddt_device_completion_t), &host, &device));
  s.completions = static_cast<gddt_device_completion_t *>(host);
  r.completions = static_cast<gddt_device_completion_t *>(device);
  GDDT_CHECK(gpu::mapped_alloc(2 * std::size_t{nslots} * slot_bytes, &host, &device));
  s.staging = static_cast<unsigned char *>(host);
  r.staging = static_cast<unsigned char *>(device);

  // tail, then slot_ticket[i] = i (every ticket of the first round free), then
  // pending.
  const std::size_t tickets_at = sizeof(unsigned long long);
  const std::size_t pending_at = tickets_at + nslots * sizeof(unsigned long long);
  std::vector<unsigned char> image(pending_at + nslots * sizeof(gddt_device_pending_t), 0);
  for (std::uint32_t i = 0; i < nslots; ++i) {
    const unsigned long long ticket = i;
    std::memcpy(image.data() + tickets_at + i * sizeof ticket, &ticket, sizeof ticket);
  }
  GDDT_CHECK(s.device_part.assign(image.data(), image.size()));
  unsigned char *base = static_cast<unsigned char *>(s.device_part.ptr);
  r.tail = reinterpret_cast<unsigned long long *>(base);
  r.slot_ticket = reinterpret_cast<unsigned long long *>(base + tickets_at);
  r.pending = reinterpret_cast<gddt_device_pending_t *>(base + pending_at);
  r.nslots = nslots;
  r.slot_bytes = slot_bytes;
  r.timeout_ns = settings.device_timeout * 1000000000ull;
  r.thread_pack_max = settings.device_thread_pack_max;
  // Now, while no kernel can be waiting on this proxy, the one-time steps that wait for every
  // kernel running: the proxy's first MPI call and first pack kernel would make them.
  memory::settle_caching();
  GDDT_CHECK(pack::load_device_code());

  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  const config::DeviceProxy mode = config::device_proxy();
  s.thread_mode = mode != config::DeviceProxy::kInline && provided == MPI_THREAD_MULTIPLE;
  if (mode == config::DeviceProxy::kThread && !s.thread_mode)
    GDDT_LOG(kWarn,
             "GDDT_DEVICE_PROXY=thread needs MPI_THREAD_MULTIPLE, which "
             "MPI does not provide: the device API's proxy "
             "runs inside MPI calls, gddt_device_progress and "
             "gddt_device_stream_synchronize instead");
  if (mode == config::DeviceProxy::kAuto && !s.thread_mode)
    GDDT_LOG(kInfo,
             "MPI does not provide MPI_THREAD_MULTIPLE: the device "
             "API's proxy runs inside MPI calls, "
             "gddt_device_progress and gddt_device_stream_synchronize");
  hooks::add(hooks::Event::kFinalize, finalize_hook);
  hooks::add(hooks::Event::kProgress, progress_hook);
  s.running.store(true, std::memory_order_release);
  if (s.thread_mode) s.thread = std::thread(proxy_thread, &s);
  return GDDT_OK;
}

}  // namespace

Status ring(gddt_device_ring_t *out) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.tables_mutex);
  if (!s.made) {
    GDDT_CHECK(make_ring(s));
    s.made = true;
  }
  *out = s.device_ring;
  return GDDT_OK;
}

Status add_comm(MPI_Comm comm, MPI_Comm dup, std::uint32_t *index) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.tables_mutex);
  *index = static_cast<std::uint32_t>(s.comms.size());
  s.comms.push_back(CommEntry{comm, dup});
  return GDDT_OK;
}

Status remove_comm(std::uint32_t index, MPI_Comm *dup) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.tables_mutex);
  if (index >= s.comms.size() || s.comms[index].comm == MPI_COMM_NULL) return GDDT_ERR_INVALID_ARG;
  *dup = s.comms[index].dup;
  s.comms[index] = CommEntry{};
  return GDDT_OK;
}

Status add_type(MPI_Datatype dup, DeviceCopy layout, std::uint32_t *index) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.tables_mutex);
  *index = static_cast<std::uint32_t>(s.types.size());
  s.types.push_back(TypeEntry{dup, std::move(layout)});
  return GDDT_OK;
}

Status remove_type(std::uint32_t index, MPI_Datatype *dup) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.tables_mutex);
  if (index >= s.types.size() || s.types[index].type == MPI_DATATYPE_NULL) return GDDT_ERR_INVALID_TYPE;
  *dup = s.types[index].type;
  s.types[index] = TypeEntry{};
  return GDDT_OK;
}

void progress(int *active) {
  State &s = state();
  if (!s.thread_mode) run_here(s);
  if (active != nullptr) *active = s.active.load(std::memory_order_relaxed);
}

bool threaded() { return state().thread_mode; }

}  // namespace gddt::device_api
