// One-sided communication through gddt against the MPI library's own result (onesided_trial.hpp):
// every operation under every synchronization mode, on windows of every flavor and of several
// displacement units, with random nested datatypes of the fuzzer's generator (origin, target and
// result types differing), predefined accumulate operations, MPI_REPLACE and MPI_NO_OP, and
// ranks that call the library themselves beside ranks through gddt. Buffers and windows are of
// the run's memory kind (--memory; mixed gives neighbouring ranks different kinds); host memory
// takes gddt's way only with GDDT_RMA_HOST=gddt (as ctest runs it), which gddt's counters prove.
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../p2p/harness.hpp"
#include "onesided_trial.hpp"
#include "onesided_types.hpp"

namespace gddt_test::onesided {
namespace {

using p2p::Context;
using p2p::expect;

// The same function through gddt or, for the reference, the library alone.
#define CALL(library, name, ...) ((library) ? P##name(__VA_ARGS__) : name(__VA_ARGS__))

constexpr std::int64_t kMaxSpan = 512;
constexpr int kDispUnits[] = {1, 3, 4, 8, 16};

// The predefined operations that apply to a leaf type (accumulating calls), MPI_REPLACE and, for
// the calls that fetch, MPI_NO_OP.
std::vector<MPI_Op> operations(MPI_Datatype leaf, bool fetches) {
  std::vector<MPI_Op> ops = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_REPLACE};
  if (leaf == MPI_INT) ops.insert(ops.end(), {MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR});
  if (fetches) ops.push_back(MPI_NO_OP);
  return ops;
}

bool accumulates(Op op) { return op != Op::kPut && op != Op::kGet && op != Op::kRput && op != Op::kRget; }
bool fetches(Op op) {
  return op == Op::kGetAccumulate || op == Op::kRgetAccumulate || op == Op::kFetchAndOp;
}

// Whether the library's MPI_Win_create windows accumulate as MPI says, asked once (collectively,
// before the cases) of a window each rank's neighbour accesses: Open MPI 4.1's (osc/rdma) leave the
// target alone under the logical operations and return zeros (or nothing) as the fetched values
// of get-accumulates through a derived target datatype, so its own results are no reference
// there. Such trials then run on allocated windows, where it applies them.
// Whether the library alone makes a window over host memory here: some builds select no one-sided
// component on some machines and fail every MPI_Win_create (MPI_ERR_WIN), gddt or not.
bool library_makes_windows() {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int memory[4] = {};
  MPI_Win win = MPI_WIN_NULL;
  int made = PMPI_Win_create(memory, sizeof memory, sizeof(int), MPI_INFO_NULL, comm, &win) == MPI_SUCCESS;
  if (made) PMPI_Win_free(&win);
  MPI_Allreduce(MPI_IN_PLACE, &made, 1, MPI_INT, MPI_LAND, comm);
  MPI_Comm_free(&comm);
  return made != 0;
}

bool created_windows_accumulate() {
  static const bool right = [] {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int memory[4] = {0x12345678, 0x12345679, 0x1234567a, 0x1234567b};
    int ones[2] = {1, 1}, fetched[2] = {0, 0};
    MPI_Datatype strided;
    PMPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    PMPI_Type_commit(&strided);
    MPI_Win win;
    PMPI_Win_create(memory, sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    PMPI_Win_fence(0, win);
    const int next = (rank + 1) % size;
    PMPI_Get_accumulate(ones, 2, MPI_INT, fetched, 2, MPI_INT, next, 0, 1, strided, MPI_SUM, win);
    PMPI_Accumulate(ones, 1, MPI_INT, next, 1, 1, MPI_INT, MPI_LOR, win);
    PMPI_Win_fence(0, win);
    PMPI_Win_free(&win);
    PMPI_Type_free(&strided);
    int applied = fetched[0] == 0x12345678 && fetched[1] == 0x1234567a && memory[0] == 0x12345679 && memory[1] == 1;
    MPI_Allreduce(MPI_IN_PLACE, &applied, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return applied != 0;
  }();
  return right;
}

bool logical(MPI_Op op) { return op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR; }

// Trial `index` of a run: operation, mode, flavor, displacement unit, leaf, operation and types
// all follow from it, so every pair of operation and mode comes up (request-based calls in
// passive-target modes only).
struct Trial {
  Plan plan;
  TypeTriple types;
};

bool make_trial(const Context& context, int index, bool plain_peers, Trial* trial) {
  constexpr int kOps = 10, kSyncs = 10;
  const int combination = index % (kOps * kSyncs);
  Plan& plan = trial->plan;
  plan.op = static_cast<Op>(combination % kOps);
  plan.sync = static_cast<Sync>(combination / kOps);
  if (request_based(plan.op) && !passive(plan.sync)) return false;
  plan.flavor = static_cast<Flavor>(index % 3);
  plan.disp_unit = plan.flavor == Flavor::kDynamic ? 1 : kDispUnits[index % 5];
  plan.seed = p2p::mix_seed(context.seed, static_cast<std::uint64_t>(index));
  plan.plain_peers = plain_peers;
  plan.large_count = index % 4 == 1;
  plan.leaf = index % 2 == 0 ? MPI_INT : MPI_DOUBLE;
  if (plan.op == Op::kCompareAndSwap) plan.leaf = MPI_INT;  // an integer type, as MPI asks
  const std::vector<MPI_Op> ops = operations(plan.leaf, fetches(plan.op));
  plan.reduce = ops[static_cast<std::size_t>(index / 7) % ops.size()];
  if ((logical(plan.reduce) || fetches(plan.op)) && !created_windows_accumulate()) plan.flavor = Flavor::kAllocate;
  // Puts and gets take types of mixed leaves half the time; accumulates need one predefined type.
  const bool mixed = !accumulates(plan.op) && index % 2 == 1;
  make_triple(plan.seed, mixed ? MPI_DATATYPE_NULL : plan.leaf, kMaxSpan, &trial->types);
  plan.types = &trial->types;
  return true;
}

// `count` trials from `first` on; a run of fewer than a hundred steps through the pairs of
// operation and mode, so that a short one still meets many of each.
void random_trials(const Context& context, int first, int count, bool plain_peers) {
  int tested = 0;
  for (int i = 0; i < count; ++i) {
    const int index = first + i / 100 * 100 + i * 37 % 100;
    Trial trial;
    if (!make_trial(context, index, plain_peers, &trial)) continue;
    check_trial(context, trial.plan);
    ++tested;
  }
  p2p::note(std::to_string(tested) + " trials");
}

// Every operation of a leaf type under fence, one trial each.
void every_operation(const Context& context) {
  if (!created_windows_accumulate())
    p2p::note("the library's MPI_Win_create windows get accumulates wrong: these run on allocated windows only");
  std::uint64_t index = 0;
  for (MPI_Datatype leaf : {MPI_INT, MPI_DOUBLE}) {
    for (Op op : {Op::kAccumulate, Op::kGetAccumulate, Op::kFetchAndOp}) {
      for (MPI_Op reduce : operations(leaf, fetches(op))) {
        Trial trial;
        Plan& plan = trial.plan;
        plan.op = op;
        plan.sync = Sync::kFence;
        if (!created_windows_accumulate()) plan.flavor = Flavor::kAllocate;
        plan.leaf = leaf;
        plan.reduce = reduce;
        plan.disp_unit = leaf == MPI_INT ? 4 : 8;
        plan.seed = p2p::mix_seed(context.seed, index++);
        make_triple(plan.seed, leaf, kMaxSpan, &trial.types);
        plan.types = &trial.types;
        check_trial(context, plan);
      }
    }
  }
}

// Whether windows take gddt's way through CUDA IPC or shared memory (GDDT_RMA_IPC, on by
// default; the peer protocol agreed on the communicators): windows over device memory of every
// rank, and host windows that gddt allocates (MPI_Win_allocate with GDDT_RMA_HOST=gddt). Collective.
enum class Shared { kNone, kAllocatedOnly, kEvery };
Shared shared_windows(const Context& context) {
  const char* ipc = std::getenv("GDDT_RMA_IPC");
  const char* rma_host = std::getenv("GDDT_RMA_HOST");
  int kinds[2] = {context.memory == MemoryKind::kDevice, context.memory == MemoryKind::kHost};
  MPI_Allreduce(MPI_IN_PLACE, kinds, 2, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  // On unless set to one of the false spellings gddt's boolean settings take, in any case.
  std::string setting = ipc == nullptr ? "" : ipc;
  std::transform(setting.begin(), setting.end(), setting.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool ipc_on = !(setting == "0" || setting == "off" || setting == "false" || setting == "no");
  if (!ipc_on || gddt_test::p2p::counter_value("peer.agreed.comms") <= 0) return Shared::kNone;
  if (kinds[0]) return Shared::kEvery;
  return kinds[1] && rma_host != nullptr && std::string(rma_host) == "gddt" ? Shared::kAllocatedOnly : Shared::kNone;
}

// Erroneous calls give the library's error class through gddt too, each made on a window of the
// run's memory kind (served by gddt, whose stand-ins and public copies are in the way) and on the
// library's own window of host memory: counts, datatypes, ranks and operations the call refuses,
// calls outside the epochs they belong in, windows of another flavor. (Not a negative result
// count: Open MPI 4.1's own MPI_Get_accumulate crashes on it.)
void bad_arguments(const Context& context) {
  constexpr int kInts = 64;
  Buffer memory(context.memory, kInts * sizeof(int)), origin(context.memory, kInts * sizeof(int));
  std::vector<int> host_memory(kInts), host_origin(kInts);
  MPI_Datatype uncommitted;
  MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
  MPI_Op own;
  MPI_Op_create([](void*, void*, int*, MPI_Datatype*) {}, 1, &own);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Win win = MPI_WIN_NULL, library_win = MPI_WIN_NULL;
  const int size = context.size;
  // Each call through gddt (false) or the library (true), on the window and buffers of that run.
  const auto window = [&](bool library) { return library ? library_win : win; };
  const auto data = [&](bool library) -> int* {
    return library ? host_origin.data() : reinterpret_cast<int*>(origin.data());
  };
  const std::vector<std::pair<std::string, std::function<int(bool)>>> in_fence = {
      {"MPI_Put of a negative count",
       [&](bool l) { return CALL(l, MPI_Put, data(l), -1, MPI_INT, 0, 0, 1, MPI_INT, window(l)); }},
      {"MPI_Put of MPI_DATATYPE_NULL",
       [&](bool l) { return CALL(l, MPI_Put, data(l), 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, window(l)); }},
      {"MPI_Get of a datatype not committed",
       [&](bool l) { return CALL(l, MPI_Get, data(l), 1, uncommitted, 0, 0, 2, MPI_INT, window(l)); }},
      {"MPI_Put to a rank past the group",
       [&](bool l) { return CALL(l, MPI_Put, data(l), 2, MPI_INT, size, 0, 2, MPI_INT, window(l)); }},
      {"MPI_Accumulate with MPI_OP_NULL",
       [&](bool l) { return CALL(l, MPI_Accumulate, data(l), 2, MPI_INT, 0, 0, 2, MPI_INT, MPI_OP_NULL, window(l)); }},
      {"MPI_Accumulate with a user-defined operation",
       [&](bool l) { return CALL(l, MPI_Accumulate, data(l), 2, MPI_INT, 0, 0, 2, MPI_INT, own, window(l)); }},
      {"MPI_Compare_and_swap of MPI_DATATYPE_NULL",
       [&](bool l) {
         return CALL(l, MPI_Compare_and_swap, data(l), data(l) + 4, data(l) + 8, MPI_DATATYPE_NULL, 0, 0, window(l));
       }},
      {"MPI_Win_lock of an unknown lock type", [&](bool l) { return CALL(l, MPI_Win_lock, 12345, 0, 0, window(l)); }},
      {"MPI_Win_unlock of a window not locked", [&](bool l) { return CALL(l, MPI_Win_unlock, 0, window(l)); }},
      {"MPI_Win_attach to a window not dynamic",
       [&](bool l) { return CALL(l, MPI_Win_attach, window(l), data(l), 8); }},
      {"MPI_Win_create of a negative size",
       [&](bool l) {
         MPI_Win made = MPI_WIN_NULL;
         const int rc = CALL(l, MPI_Win_create, data(l), -8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &made);
         if (rc == MPI_SUCCESS) MPI_Win_free(&made);
         return rc;
       }},
  };
  const auto check = [&] {
    for (MPI_Win w : {win, library_win}) MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    for (MPI_Win w : {win, library_win}) MPI_Win_fence(0, w);
    for (const auto& [what, call] : in_fence) p2p::expect_library_class(what, call);
    // Erroneous, but Open MPI 5's UCX windows take it.
    p2p::expect_library_class(
        "MPI_Win_flush outside a passive-target epoch",
        [&](bool l) { return CALL(l, MPI_Win_flush, 0, window(l)); }, /*library_may_take=*/true);
    for (MPI_Win w : {win, library_win}) MPI_Win_fence(0, w);
    MPI_Win_free(&win);
    PMPI_Win_free(&library_win);
  };
  MPI_Win_create(memory.data(), kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  PMPI_Win_create(host_memory.data(), kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &library_win);
  check();
  // Allocated windows too where gddt shares them (through CUDA IPC or shared memory): their
  // erroneous calls are the library's to judge as well.
  if (shared_windows(context) != Shared::kNone) {
    MPI_Info info;
    MPI_Info_create(&info);
    if (context.memory == MemoryKind::kDevice) MPI_Info_set(info, "gddt_memory_kind", "device");
    void* allocated = nullptr;
    MPI_Win_allocate(kInts * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &allocated, &win);
    PMPI_Win_allocate(kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &allocated, &library_win);
    MPI_Info_free(&info);
    check();
  }
  MPI_Op_free(&own);
  MPI_Type_free(&uncommitted);
}

// What a window over memory gddt serves says of itself: the user's base, the flavor asked for, the
// separate model (unified where every member reaches the others' memory); shared-memory windows
// refuse device memory.
void attributes(const Context& context) {
  const bool served = context.memory == MemoryKind::kDevice || std::getenv("GDDT_RMA_HOST") != nullptr;
  const int model_served = shared_windows(context) == Shared::kEvery ? MPI_WIN_UNIFIED : MPI_WIN_SEPARATE;
  Buffer memory(context.memory, 256);
  MPI_Win win;
  MPI_Win_create(memory.data(), 256, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  void* base = nullptr;
  int* model = nullptr;
  int* flavor = nullptr;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  expect(flag && base == memory.data(), "MPI_WIN_BASE is the user's memory");
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  expect(flag && *model == (served ? model_served : *model),
         "MPI_WIN_MODEL is MPI_WIN_SEPARATE where gddt serves through public copies, MPI_WIN_UNIFIED through CUDA IPC");
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  expect(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR of MPI_Win_create");
  MPI_Win_free(&win);

  MPI_Info info;
  MPI_Info_create(&info);
  if (context.memory == MemoryKind::kDevice) MPI_Info_set(info, "gddt_memory_kind", "device");
  void* allocated = nullptr;
  MPI_Win_allocate(256, 1, info, MPI_COMM_WORLD, &allocated, &win);
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  expect(flag && base == allocated, "MPI_WIN_BASE of MPI_Win_allocate is the memory it returned");
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  expect(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "MPI_WIN_CREATE_FLAVOR of MPI_Win_allocate");
  MPI_Win_free(&win);

  // Refused whatever the memory kind: the info key asks for what a shared window cannot be.
  MPI_Info_set(info, "gddt_memory_kind", "device");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = MPI_Win_allocate_shared(256, 1, info, MPI_COMM_WORLD, &allocated, &win);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  expect(error_class == MPI_ERR_UNSUPPORTED_OPERATION,
         "MPI_Win_allocate_shared of device memory: MPI_ERR_UNSUPPORTED_OPERATION, got class " +
             std::to_string(error_class));
  if (rc == MPI_SUCCESS) MPI_Win_free(&win);
  MPI_Info_free(&info);
}

}  // namespace
}  // namespace gddt_test::onesided

int main(int argc, char** argv) {
  using namespace gddt_test::onesided;
  using gddt_test::p2p::Context;
  gddt_test::p2p::Suite suite(&argc, &argv, "onesided");
  using gddt_test::p2p::counter_value;
  const long long stand_ins = counter_value("rma.stand-ins"), copies = counter_value("rma.public-copies");
  const long long direct_calls = counter_value("rma.direct.calls");
  if (!library_makes_windows()) suite.skip("the MPI library alone makes no window here (MPI_Win_create fails)");
  created_windows_accumulate();  // collective: asked before the cases, which ask on some ranks only
  suite.run("random_types", [](const Context& context) {
    random_trials(context, 0, context.messages > 0 ? static_cast<int>(context.messages) : 100, false);
  });
  suite.run("plain_peers", [](const Context& context) { random_trials(context, 1000, 30, true); });
  suite.run("every_operation", every_operation);
  suite.run("attributes", attributes);
  suite.run("bad_arguments", bad_arguments);
  suite.run("gddt_took_the_path", [&](const Context& context) {
    const bool shared = shared_windows(context) != Shared::kNone;
    if (context.memory != gddt_test::MemoryKind::kDevice && std::getenv("GDDT_RMA_HOST") == nullptr) return;
    expect(counter_value("rma.stand-ins") > stand_ins, "gddt's rma.stand-ins counter grew");
    expect(counter_value("rma.public-copies") > copies, "gddt's rma.public-copies counter grew");
    if (shared)
      expect(counter_value("rma.direct.calls") > direct_calls, "gddt's rma.direct.calls counter grew");
  });
  return suite.finish();
}
