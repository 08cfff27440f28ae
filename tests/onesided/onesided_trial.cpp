#include "onesided_trial.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "fuzz_random.hpp"
#include "mpi/entry_points.hpp"

namespace gddt_test::onesided {
namespace {

using Bytes = std::vector<unsigned char>;
using p2p::Context;

constexpr std::int64_t kMargin = 64;     // around every buffer, and at both ends of a window
constexpr std::int64_t kLocalBytes = 40;  // the slice of its window the owner stores into

// The same function through gddt or, for the reference run (and plain peers), the library alone.
#define CALL(library, name, ...) ((library) ? P##name(__VA_ARGS__) : name(__VA_ARGS__))
// The same in its large-count form where `large` asks for it and the library has one.
#if GDDT_HAVE_MPI_Put_c
#define SIZED(large, name, ...) \
  ((large) ? CALL(library_, name##_c, __VA_ARGS__) : CALL(library_, name, __VA_ARGS__))
#else
#define SIZED(large, name, ...) ((void)(large), CALL(library_, name, __VA_ARGS__))
#endif

Bytes random_bytes(std::uint64_t seed, std::uint64_t purpose, std::int64_t size) {
  fuzz::Rng rng(p2p::mix_seed(seed, purpose));
  Bytes bytes(static_cast<std::size_t>(size));
  for (unsigned char& b : bytes) b = static_cast<unsigned char>(rng.next());
  return bytes;
}

std::int64_t round_up(std::int64_t value, std::int64_t unit) { return (value + unit - 1) / unit * unit; }

int type_size(MPI_Datatype datatype) {
  int size = 0;
  MPI_Type_size(datatype, &size);
  return size;
}

// A buffer of the trial: memory of a kind, or the window memory MPI_Win_allocate made.
class Memory {
 public:
  Memory(MemoryKind kind, const Bytes& initial) : buffer_(kind, initial.size()), kind_(kind), size_(initial.size()) {
    buffer_.upload(initial.data(), initial.size());
    data_ = buffer_.data();
  }
  Memory(MemoryKind kind, unsigned char* data, std::size_t size) : kind_(kind), data_(data), size_(size) {}
  unsigned char* data() const { return data_; }
  Bytes read() const {
    Bytes bytes(size_);
    copy_memory(kind_, bytes.data(), data_, size_);
    return bytes;
  }
  // A store of the owner's into `bytes.size()` bytes from `offset`, and only those.
  void write(std::int64_t offset, const Bytes& bytes) { copy_memory(kind_, data_ + offset, bytes.data(), bytes.size()); }

 private:
  Buffer buffer_;
  MemoryKind kind_;
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Where everything lies, the same on every rank and in both runs.
struct Layout {
  int ranks = 0;
  std::int64_t slice = 0;   // bytes each origin has in every window
  std::int64_t window = 0;  // bytes of a window
  std::int64_t local = 0;   // where the owner's own slice starts
  MPI_Datatype origin_type, target_type, result_type;
  int origin_count, target_count, result_count;
  std::int64_t origin_low, origin_high, result_low, result_high, target_low, target_high;

  Layout(const Plan& plan, int size) : ranks(size) {
    const bool single = plan.op == Op::kFetchAndOp || plan.op == Op::kCompareAndSwap;
    origin_type = single ? plan.leaf : plan.types->origin;
    target_type = single ? plan.leaf : plan.types->target;
    // A get writes its origin buffer; a get-accumulate its result buffer.
    const bool gets = plan.op == Op::kGet || plan.op == Op::kRget;
    result_type = single ? plan.leaf : gets ? plan.types->origin : plan.types->result;
    origin_count = single ? 1 : plan.types->origin_count;
    target_count = single ? 1 : plan.types->target_count;
    result_count = single ? 1 : gets ? plan.types->origin_count : plan.types->result_count;
    touched(origin_type, origin_count, &origin_low, &origin_high);
    touched(result_type, result_count, &result_low, &result_high);
    touched(target_type, target_count, &target_low, &target_high);
    // The target pointer lies inside the slice too: libraries check a dynamic window's
    // displacement itself against the regions attached (Open MPI: MPI_ERR_RMA_RANGE).
    slice = round_up(std::max<std::int64_t>(target_high, 0) - std::min<std::int64_t>(target_low, 0) + plan.disp_unit + 8, 8);
    local = kMargin + ranks * slice;
    window = local + kLocalBytes + kMargin;
  }
  // Byte offset in a window of the target buffer pointer of origin `origin`.
  std::int64_t target_offset(int origin, int disp_unit) const {
    return round_up(kMargin + origin * slice + std::max<std::int64_t>(-target_low, 0), disp_unit);
  }
};

class Run {
 public:
  Run(const Context& context, const Plan& plan, bool reference)
      : context_(context), plan_(plan), layout_(plan, context.size),
        library_(reference || (plan.plain_peers && context.rank != 0)),
        kind_(library_ ? MemoryKind::kHost : context.memory) {}

  Record go() {
    open_window();
    first_epoch();
    MPI_Barrier(MPI_COMM_WORLD);
    read_back();
    record("window", window_->read());
    close_window();
    for (int t = 0; t < context_.size; ++t) {
      record("origin buffer for rank " + std::to_string(t), origins_[t]->read());
      if (results_[t]) record("result buffer for rank " + std::to_string(t), results_[t]->read());
      record("read-back of rank " + std::to_string(t), readback_[t]->read());
    }
    return std::move(record_);
  }

 private:
  void record(const std::string& name, Bytes bytes) { record_.emplace_back(name, std::move(bytes)); }

  std::uint64_t seed(std::uint64_t purpose, int a, int b = 0) const {
    return p2p::mix_seed(plan_.seed, purpose * 4096 + static_cast<std::uint64_t>(a) * 64 + static_cast<std::uint64_t>(b));
  }
  Bytes window_image(int rank) const { return random_bytes(seed(1, rank), 0, layout_.window); }

  void open_window() {
    // A communicator of the trial's own (duplicated through gddt by every rank, plain peers too):
    // gddt names a window by its communicator and the windows made on it so far, which a plain
    // peer's windows on another would leave uncounted.
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    const Bytes image = window_image(context_.rank);
    const int unit = plan_.disp_unit;
    MPI_Info info = MPI_INFO_NULL;
    switch (plan_.flavor) {
      case Flavor::kCreate:
        window_ = std::make_unique<Memory>(kind_, image);
        CALL(library_, MPI_Win_create, window_->data(), layout_.window, unit, MPI_INFO_NULL, comm_, &win_);
        break;
      case Flavor::kAllocate: {
        MPI_Info_create(&info);
        if (kind_ == MemoryKind::kDevice) MPI_Info_set(info, "gddt_memory_kind", "device");
        unsigned char* base = nullptr;
        CALL(library_, MPI_Win_allocate, layout_.window, unit, info, comm_, &base, &win_);
        // Memory the window made is device memory only where gddt was asked for it.
        window_ = std::make_unique<Memory>(kind_ == MemoryKind::kDevice ? kind_ : MemoryKind::kHost, base,
                                           static_cast<std::size_t>(layout_.window));
        window_->write(0, image);
        MPI_Info_free(&info);
        break;
      }
      case Flavor::kDynamic: {
        window_ = std::make_unique<Memory>(kind_, image);
        CALL(library_, MPI_Win_create_dynamic, MPI_INFO_NULL, comm_, &win_);
        CALL(library_, MPI_Win_attach, win_, window_->data(), layout_.window);
        MPI_Aint address = 0;
        CALL(library_, MPI_Get_address, window_->data(), &address);
        addresses_.resize(static_cast<std::size_t>(context_.size));
        MPI_Allgather(&address, 1, MPI_AINT, addresses_.data(), 1, MPI_AINT, comm_);
        break;
      }
    }
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    // The window's first bytes are the owner's stores: public before anyone accesses them.
    expect_ok(CALL(library_, MPI_Win_fence, MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win_), "MPI_Win_fence");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < context_.size; ++t) {
      origins_.push_back(buffer(2, t, layout_.origin_low, layout_.origin_high));
      const bool results = plan_.op != Op::kPut && plan_.op != Op::kAccumulate && plan_.op != Op::kRput &&
                           plan_.op != Op::kRaccumulate;
      results_.push_back(results ? buffer(3, t, layout_.result_low, layout_.result_high) : nullptr);
      compares_.push_back(compare_buffer(t));
    }
  }

  // A buffer for `count` elements of a type touching [low, high), with margins, of random bytes.
  std::unique_ptr<Memory> buffer(std::uint64_t purpose, int target, std::int64_t low, std::int64_t high) {
    return std::make_unique<Memory>(kind_, random_bytes(seed(purpose, context_.rank, target), 0, high - low + 2 * kMargin));
  }
  static unsigned char* pointer(const Memory& memory, std::int64_t low) { return memory.data() + kMargin - low; }

  // MPI_Compare_and_swap's compare value: for every other target the value there, so that some swap.
  std::unique_ptr<Memory> compare_buffer(int target) {
    if (plan_.op != Op::kCompareAndSwap) return nullptr;
    Bytes bytes = random_bytes(seed(4, context_.rank, target), 0, 2 * kMargin + type_size(plan_.leaf));
    if ((context_.rank + target) % 2 == 0) {
      const Bytes there = window_image(target);
      const std::int64_t at = layout_.target_offset(context_.rank, plan_.disp_unit);
      std::copy_n(there.begin() + at, type_size(plan_.leaf), bytes.begin() + kMargin);
    }
    return std::make_unique<Memory>(kind_, bytes);
  }

  MPI_Aint displacement(int target) const {
    const std::int64_t offset = layout_.target_offset(context_.rank, plan_.disp_unit);
    if (plan_.flavor == Flavor::kDynamic) return addresses_[static_cast<std::size_t>(target)] + offset;
    return offset / plan_.disp_unit;
  }

  void expect_ok(int rc, const char* what) {
    p2p::expect(rc == MPI_SUCCESS, std::string(what) + " returned " + std::to_string(rc) + (library_ ? " (library)" : " (through gddt)"));
  }

  // The plan's operation on `target`; request-based ones leave their request in requests_.
  void issue(int target) {
    const Layout& l = layout_;
    const void* origin = pointer(*origins_[target], l.origin_low);
    void* result = results_[target] ? pointer(*results_[target], l.result_low) : nullptr;
    const MPI_Aint disp = displacement(target);
    MPI_Request* request = &requests_[static_cast<std::size_t>(target)];
    const int oc = l.origin_count, tc = l.target_count, rcount = l.result_count;
    const bool large = plan_.large_count;
    int rc = MPI_SUCCESS;
    switch (plan_.op) {
      case Op::kPut: rc = SIZED(large, MPI_Put, origin, oc, l.origin_type, target, disp, tc, l.target_type, win_); break;
      case Op::kGet: rc = SIZED(large, MPI_Get, result, oc, l.origin_type, target, disp, tc, l.target_type, win_); break;
      case Op::kAccumulate:
        rc = SIZED(large, MPI_Accumulate, origin, oc, l.origin_type, target, disp, tc, l.target_type, plan_.reduce, win_);
        break;
      case Op::kGetAccumulate:
        rc = SIZED(large, MPI_Get_accumulate, origin, oc, l.origin_type, result, rcount, l.result_type, target, disp,
                   tc, l.target_type, plan_.reduce, win_);
        break;
      case Op::kFetchAndOp:
        rc = CALL(library_, MPI_Fetch_and_op, origin, result, plan_.leaf, target, disp, plan_.reduce, win_);
        break;
      case Op::kCompareAndSwap:
        rc = CALL(library_, MPI_Compare_and_swap, origin, pointer(*compares_[target], 0), result, plan_.leaf, target,
                  disp, win_);
        break;
      case Op::kRput:
        rc = SIZED(large, MPI_Rput, origin, oc, l.origin_type, target, disp, tc, l.target_type, win_, request);
        break;
      case Op::kRget:
        rc = SIZED(large, MPI_Rget, result, oc, l.origin_type, target, disp, tc, l.target_type, win_, request);
        break;
      case Op::kRaccumulate:
        rc = SIZED(large, MPI_Raccumulate, origin, oc, l.origin_type, target, disp, tc, l.target_type, plan_.reduce,
                   win_, request);
        break;
      case Op::kRgetAccumulate:
        rc = SIZED(large, MPI_Rget_accumulate, origin, oc, l.origin_type, result, rcount, l.result_type, target, disp,
                   tc, l.target_type, plan_.reduce, win_, request);
        break;
    }
    expect_ok(rc, op_name(plan_.op));
  }

  // The results as they stand once the epoch's synchronization or request completed them.
  void record_results(int target) {
    if (results_[target]) record("result for rank " + std::to_string(target) + " at completion", results_[target]->read());
  }
  void record_all_results() {
    for (int t = 0; t < context_.size; ++t) record_results(t);
  }

  // Completes the requests of request-based calls: one by one by MPI_Wait, all by MPI_Waitall, or
  // by polling MPI_Testall.
  void complete_requests(int target) {
    if (!request_based(plan_.op)) return;
    if (target >= 0) {
      expect_ok(CALL(library_, MPI_Wait, &requests_[static_cast<std::size_t>(target)], MPI_STATUS_IGNORE), "MPI_Wait");
    } else if (plan_.sync == Sync::kLockAll) {
      expect_ok(CALL(library_, MPI_Waitall, context_.size, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    } else {
      int done = 0;
      p2p::poll_until([&] {
        expect_ok(CALL(library_, MPI_Testall, context_.size, requests_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
        return done != 0;
      }, "MPI_Testall of one-sided requests");
    }
  }

  void store_locally() { window_->write(layout_.local, random_bytes(seed(5, context_.rank), 0, kLocalBytes)); }

  void first_epoch() {
    const int n = context_.size;
    requests_.assign(static_cast<std::size_t>(n), MPI_REQUEST_NULL);
    switch (plan_.sync) {
      case Sync::kFence:
        expect_ok(CALL(library_, MPI_Win_fence, MPI_MODE_NOPRECEDE, win_), "MPI_Win_fence");
        for (int t = 0; t < n; ++t) issue(t);
        store_locally();
        expect_ok(CALL(library_, MPI_Win_fence, 0, win_), "MPI_Win_fence");
        record_all_results();
        return;
      case Sync::kPscw: {
        MPI_Group group;
        MPI_Win_get_group(win_, &group);
        expect_ok(CALL(library_, MPI_Win_post, group, 0, win_), "MPI_Win_post");
        expect_ok(CALL(library_, MPI_Win_start, group, 0, win_), "MPI_Win_start");
        for (int t = 0; t < n; ++t) issue(t);
        store_locally();
        expect_ok(CALL(library_, MPI_Win_complete, win_), "MPI_Win_complete");
        record_all_results();
        expect_ok(CALL(library_, MPI_Win_wait, win_), "MPI_Win_wait");
        MPI_Group_free(&group);
        return;
      }
      case Sync::kLock:
      case Sync::kLockShared:
        store_locally();
        for (int t = 0; t < n; ++t) {
          const int type = plan_.sync == Sync::kLock ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
          expect_ok(CALL(library_, MPI_Win_lock, type, t, 0, win_), "MPI_Win_lock");
          issue(t);
          complete_requests(t);
          if (request_based(plan_.op)) record_results(t);
          expect_ok(CALL(library_, MPI_Win_unlock, t, win_), "MPI_Win_unlock");
          record_results(t);
        }
        return;
      default:
        break;
    }
    expect_ok(CALL(library_, MPI_Win_lock_all, 0, win_), "MPI_Win_lock_all");
    for (int t = 0; t < n; ++t) issue(t);
    store_locally();
    complete_requests(-1);
    switch (plan_.sync) {
      case Sync::kFlush:
      case Sync::kFlushLocal:
        for (int t = 0; t < n; ++t) {
          expect_ok(plan_.sync == Sync::kFlush ? CALL(library_, MPI_Win_flush, t, win_)
                                               : CALL(library_, MPI_Win_flush_local, t, win_),
                    "MPI_Win_flush(_local)");
          record_results(t);
        }
        break;
      case Sync::kFlushAll:
      case Sync::kFlushLocalAll:
        expect_ok(plan_.sync == Sync::kFlushAll ? CALL(library_, MPI_Win_flush_all, win_)
                                                : CALL(library_, MPI_Win_flush_local_all, win_),
                  "MPI_Win_flush(_local)_all");
        record_all_results();
        break;
      case Sync::kWinSync:
        // The owner's stores public, every access complete at its target, then the owner's view.
        expect_ok(CALL(library_, MPI_Win_flush_all, win_), "MPI_Win_flush_all");
        expect_ok(CALL(library_, MPI_Win_sync, win_), "MPI_Win_sync");
        MPI_Barrier(MPI_COMM_WORLD);
        expect_ok(CALL(library_, MPI_Win_sync, win_), "MPI_Win_sync");
        record("window after MPI_Win_sync", window_->read());
        record_all_results();
        break;
      default:
        // Other calls complete at the unlock.
        if (request_based(plan_.op)) record_all_results();
        break;
    }
    expect_ok(CALL(library_, MPI_Win_unlock_all, win_), "MPI_Win_unlock_all");
  }

  // Every window read whole by every rank, in device memory too where the run's kind is.
  void read_back() {
    const int n = context_.size;
    for (int t = 0; t < n; ++t)
      readback_.push_back(std::make_unique<Memory>(kind_, random_bytes(seed(6, context_.rank, t), 0, layout_.window)));
    const auto gets = [&] {
      for (int t = 0; t < n; ++t) {
        const MPI_Aint disp = plan_.flavor == Flavor::kDynamic ? addresses_[static_cast<std::size_t>(t)] : 0;
        expect_ok(CALL(library_, MPI_Get, readback_[t]->data(), static_cast<int>(layout_.window), MPI_BYTE, t, disp,
                       static_cast<int>(layout_.window), MPI_BYTE, win_),
                  "MPI_Get of a window");
      }
    };
    if (plan_.sync == Sync::kFence) {
      gets();
      expect_ok(CALL(library_, MPI_Win_fence, MPI_MODE_NOSUCCEED, win_), "MPI_Win_fence");
    } else if (plan_.sync == Sync::kPscw) {
      MPI_Group group;
      MPI_Win_get_group(win_, &group);
      expect_ok(CALL(library_, MPI_Win_post, group, MPI_MODE_NOPUT, win_), "MPI_Win_post");
      expect_ok(CALL(library_, MPI_Win_start, group, 0, win_), "MPI_Win_start");
      gets();
      expect_ok(CALL(library_, MPI_Win_complete, win_), "MPI_Win_complete");
      expect_ok(CALL(library_, MPI_Win_wait, win_), "MPI_Win_wait");
      MPI_Group_free(&group);
    } else {
      // The owner's lock makes the epoch's updates visible in its memory.
      expect_ok(CALL(library_, MPI_Win_lock_all, 0, win_), "MPI_Win_lock_all");
      gets();
      expect_ok(CALL(library_, MPI_Win_unlock_all, win_), "MPI_Win_unlock_all");
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }

  void close_window() {
    if (plan_.flavor == Flavor::kDynamic) expect_ok(CALL(library_, MPI_Win_detach, win_, window_->data()), "MPI_Win_detach");
    const bool allocated = plan_.flavor == Flavor::kAllocate;
    expect_ok(CALL(library_, MPI_Win_free, &win_), "MPI_Win_free");
    if (!allocated) record("window after MPI_Win_free", window_->read());
    MPI_Comm_free(&comm_);
  }

  const Context& context_;
  const Plan& plan_;
  Layout layout_;
  bool library_;
  MemoryKind kind_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::unique_ptr<Memory> window_;
  std::vector<MPI_Aint> addresses_;
  std::vector<std::unique_ptr<Memory>> origins_, results_, compares_, readback_;
  std::vector<MPI_Request> requests_;
  Record record_;
};

// Up to 8 bytes from `at`, in hex.
std::string hex(const Bytes& bytes, std::ptrdiff_t at) {
  std::string text;
  char digits[4];
  for (std::ptrdiff_t i = at; i < std::min<std::ptrdiff_t>(at + 8, static_cast<std::ptrdiff_t>(bytes.size())); ++i) {
    std::snprintf(digits, sizeof digits, "%02x", bytes[static_cast<std::size_t>(i)]);
    text += digits;
  }
  return text;
}

}  // namespace

const char* op_name(Op op) {
  static const char* const names[] = {"MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate",
                                      "MPI_Fetch_and_op", "MPI_Compare_and_swap", "MPI_Rput", "MPI_Rget",
                                      "MPI_Raccumulate", "MPI_Rget_accumulate"};
  return names[static_cast<int>(op)];
}

const char* sync_name(Sync sync) {
  static const char* const names[] = {"fence", "post-start-complete-wait", "lock exclusive", "lock shared",
                                      "lock_all", "flush", "flush_all", "flush_local", "flush_local_all",
                                      "MPI_Win_sync"};
  return names[static_cast<int>(sync)];
}

const char* flavor_name(Flavor flavor) {
  static const char* const names[] = {"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_create_dynamic"};
  return names[static_cast<int>(flavor)];
}

bool request_based(Op op) { return op >= Op::kRput; }
bool passive(Sync sync) { return sync != Sync::kFence && sync != Sync::kPscw; }

namespace {

const char* reduce_name(MPI_Op op) {
  const std::pair<MPI_Op, const char*> names[] = {
      {MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"}, {MPI_MAX, "MPI_MAX"},         {MPI_MIN, "MPI_MIN"},
      {MPI_BAND, "MPI_BAND"}, {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"},       {MPI_LAND, "MPI_LAND"},
      {MPI_LOR, "MPI_LOR"},   {MPI_LXOR, "MPI_LXOR"}, {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"}};
  for (const auto& [handle, name] : names)
    if (handle == op) return name;
  return "?";
}

}  // namespace

std::string Plan::describe() const {
  const bool single = op == Op::kFetchAndOp || op == Op::kCompareAndSwap;  // no _c forms
  std::string text = std::string(op_name(op)) + (large_count && !single ? "_c" : "") + " under " + sync_name(sync) + " on " +
                     flavor_name(flavor) + ", disp_unit " + std::to_string(disp_unit);
  if (op != Op::kPut && op != Op::kGet && op != Op::kRput && op != Op::kRget && op != Op::kCompareAndSwap)
    text += std::string(", ") + reduce_name(reduce);
  if (plain_peers) text += ", ranks but 0 without gddt";
  if (single) return text + ", one element";
  return text + ", " + types->description;
}

Record run_trial(const Context& context, const Plan& plan, bool reference) { return Run(context, plan, reference).go(); }

void check_trial(const Context& context, const Plan& plan) {
  const Record through_gddt = run_trial(context, plan, false);
  const Record reference = run_trial(context, plan, true);
  p2p::expect(through_gddt.size() == reference.size(), plan.describe() + ": the runs recorded different buffers");
  for (std::size_t i = 0; i < std::min(through_gddt.size(), reference.size()); ++i) {
    const Bytes& got = through_gddt[i].second;
    const Bytes& want = reference[i].second;
    const auto mismatch = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
    if (mismatch.first == got.end() && mismatch.second == want.end()) continue;
    const auto at = mismatch.first - got.begin();
    p2p::fail(plan.describe() + ": " + through_gddt[i].first + " differs from the library's at byte " +
              std::to_string(at) + " of " + std::to_string(got.size()) + ": " + hex(got, at) + " against " +
              hex(want, at));
  }
}

}  // namespace gddt_test::onesided
