// MPI_Sendrecv_replace and MPI_Isendrecv_replace (with their _c forms where the library has them)
// around the ring of ranks, on buffers of the run's memory kind with random nested datatypes from
// the fuzzer's generator, against the MPI library's MPI_Sendrecv_replace alone on host copies of the
// same bytes (trial.hpp): every byte of the buffer, gaps and margins included, and the status must
// come out as the library's. (MPICH 4.0's own MPI_Isendrecv_replace puts a derived datatype's bytes
// elsewhere than its MPI_Sendrecv_replace, 4 bytes on in the second element of MPI_LONG_INT, and
// leaves its status empty: the blocking call is the reference, and the plain peers' call, except on
// memory gddt leaves to the library, where the library's own call is.) Also with a plain MPI peer
// (odd ranks call PMPI_* on host memory, as a process without gddt would), with MPI_PROC_NULL on
// either side, and truncated: the library's error class for the same call, and nothing written
// outside the buffer's typemap. A plain peer cannot read the peer protocol, so this runs with
// GDDT_PEERS=off; p2p_entry_points covers the calls between gddt peers.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "mpi/entry_points.hpp"
#include "trial.hpp"

namespace gddt_test::p2p {
namespace {

using trial::Bytes;
using trial::Trial;
using trial::Types;

constexpr int kDefaultTypes = 12;
constexpr int kTag = 31;

// What a status says, as text to compare.
std::string described(const MPI_Status& status, MPI_Datatype datatype) {
  int elements = 0, bytes = 0;
  MPI_Get_count(&status, datatype, &elements);
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  return "source " + std::to_string(status.MPI_SOURCE) + ", tag " + std::to_string(status.MPI_TAG) + ", " +
         std::to_string(elements) + " elements, " + std::to_string(bytes) + " bytes";
}

// The calls under test, each blocking from the caller's view.
enum class Call { kBlocking, kNonblocking, kBlockingLarge, kNonblockingLarge };

// The nonblocking calls get a duplicate of the datatype, left to the library: MPICH 4.0 releases the
// datatypes MPI_Isendrecv_replace is given when it completes, with or without gddt (usage.md).
int replace(Call call, bool library, void* buffer, int count, MPI_Datatype datatype, int dest, int source,
            MPI_Comm comm, MPI_Status* status) {
  MPI_Request request;
  MPI_Datatype own = datatype;
  if (call == Call::kNonblocking || call == Call::kNonblockingLarge) MPI_Type_dup(datatype, &own);
  switch (call) {
    case Call::kBlocking:
      return CALL(library, MPI_Sendrecv_replace, buffer, count, datatype, dest, kTag, source, kTag, comm, status);
#if GDDT_HAVE_MPI_Isendrecv_replace
    case Call::kNonblocking: {
      const int rc = CALL(library, MPI_Isendrecv_replace, buffer, count, own, dest, kTag, source, kTag, comm, &request);
      return rc != MPI_SUCCESS ? rc : CALL(library, MPI_Wait, &request, status);
    }
#endif
#if GDDT_HAVE_MPI_Sendrecv_replace_c && GDDT_HAVE_MPI_Isendrecv_replace_c
    case Call::kBlockingLarge:
      return CALL(library, MPI_Sendrecv_replace_c, buffer, MPI_Count{count}, datatype, dest, kTag, source, kTag,
                  comm, status);
    case Call::kNonblockingLarge: {
      const int rc = CALL(library, MPI_Isendrecv_replace_c, buffer, MPI_Count{count}, own, dest, kTag, source, kTag,
                          comm, &request);
      return rc != MPI_SUCCESS ? rc : CALL(library, MPI_Wait, &request, status);
    }
#endif
    default:
      (void)request;
      return MPI_ERR_OTHER;
  }
}

// The calls this library has.
std::vector<std::pair<Call, std::string>> calls() {
  std::vector<std::pair<Call, std::string>> all = {{Call::kBlocking, "MPI_Sendrecv_replace"}};
#if GDDT_HAVE_MPI_Isendrecv_replace
  all.push_back({Call::kNonblocking, "MPI_Isendrecv_replace + MPI_Wait"});
#endif
#if GDDT_HAVE_MPI_Sendrecv_replace_c && GDDT_HAVE_MPI_Isendrecv_replace_c
  all.push_back({Call::kBlockingLarge, "MPI_Sendrecv_replace_c"});
  all.push_back({Call::kNonblockingLarge, "MPI_Isendrecv_replace_c + MPI_Wait"});
#endif
  return all;
}

// Whether gddt moves buffers of `memory` (else it hands the calls to the library unchanged).
bool moved_by_gddt(MemoryKind memory) {
  const char* host = std::getenv("GDDT_P2P_HOST");
  return memory == MemoryKind::kDevice || memory == MemoryKind::kManaged ||
         (host != nullptr && std::string(host) == "gddt");
}

// One exchange with `dest` and `source` through gddt and through the library alone, compared. With
// `plain_peer`, odd ranks stand for a process without gddt in the run through gddt too.
void exchange(const Context& context, const Types& t, int count, Call call, const std::string& name, int dest,
              int source, bool plain_peer, std::uint64_t seed) {
  [[maybe_unused]] const bool nonblocking = call == Call::kNonblocking || call == Call::kNonblockingLarge;
#if defined(MPICH_VERSION)
  // There MPICH's own MPI_Isendrecv_replace moves the data, and the bytes it leaves differ from call
  // to call.
  if (nonblocking && !moved_by_gddt(context.memory)) return;
#endif
  const bool plain = plain_peer && context.rank % 2 == 1;
  const std::string what = name + (plain_peer ? " with plain peers" : "") + " of " + std::to_string(count) + " x " +
                           t.description + " to " + std::to_string(dest) + " from " + std::to_string(source);
  Trial trial(context, what, seed, plain ? MemoryKind::kHost : context.memory);
  trial.add({{count, t.datatype, 0}});
  MPI_Status statuses[2];
  trial.run([&](bool reference, const std::vector<void*>& b) {
    const bool blocking = plain || (reference && moved_by_gddt(context.memory));
    return replace(blocking ? Call::kBlocking : call, reference || plain, b[0], count, t.datatype, dest, source,
                   MPI_COMM_WORLD, &statuses[reference ? 1 : 0]);
  });
#if defined(MPICH_VERSION)
  if (nonblocking) return;  // MPICH leaves that status empty
#endif
  const std::string through_gddt = described(statuses[0], t.datatype), library = described(statuses[1], t.datatype);
  expect(through_gddt == library, what + ": the status through gddt says " + through_gddt + ", the library's " +
                                      library);
}

// Around the ring: to the next rank, from the previous one.
void random_types(const Context& context, bool plain_peer) {
  const long types = context.messages > 0 ? context.messages : kDefaultTypes;
  int tested = 0;
  for (int index = 0; index < types; ++index) {
    Types t;
    if (!trial::random_type(context, index, &t)) continue;
    ++tested;
    for (const auto& [call, name] : calls())
      for (int count : {1, 3})
        exchange(context, t, count, call, name, context.next, context.prev, plain_peer,
                 mix_seed(context.seed, index * 16 + count + 4 * static_cast<int>(call)));
    MPI_Type_free(&t.datatype);
  }
  expect(tested > 0, "some random types were not empty");
  note(std::to_string(tested) + " random types of " + std::to_string(types) + " tested");
}

// Contiguous named types, which a CUDA-aware library is handed as device bytes in place (where
// its own MPI_Sendrecv_replace crashed on device memory), up to a message of 400 KB.
void named_types(const Context& context) {
  const Types named[] = {{MPI_INT, sizeof(int), "MPI_INT"}, {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"}};
  for (const Types& t : named)
    for (const auto& [call, name] : calls())
      for (int count : {1, 1000, 100000})
        exchange(context, t, count, call, name, context.next, context.prev, false,
                 mix_seed(context.seed, count + static_cast<int>(call)));
}

// Even ranks send to the next rank, odd ones send nothing; so a rank after an odd one receives
// nothing: MPI_PROC_NULL on one side or both.
void proc_null(const Context& context) {
  Types t;
  for (int index = 0; !trial::random_type(context, index, &t); ++index) {
  }
  const int dest = context.rank % 2 == 0 ? context.next : MPI_PROC_NULL;
  const int source = context.prev % 2 == 0 ? context.prev : MPI_PROC_NULL;
  for (const auto& [call, name] : calls()) {
    exchange(context, t, 2, call, name, dest, source, false, mix_seed(context.seed, static_cast<int>(call)));
#if defined(MPICH_VERSION)
    // MPICH 4.0's own MPI_Isendrecv_replace crashes with no peer on either side (usage.md).
    if (call == Call::kNonblocking || call == Call::kNonblockingLarge) continue;
#endif
    exchange(context, t, 2, call, name, MPI_PROC_NULL, MPI_PROC_NULL, false,
             mix_seed(context.seed, 8 + static_cast<int>(call)));
  }
  MPI_Type_free(&t.datatype);
}

// The bytes of `count` elements of `datatype` at `origin` of an image of `size` bytes that the
// library's unpack writes: its typemap.
std::vector<bool> typemap_bytes(int count, MPI_Datatype datatype, std::int64_t origin, std::size_t size) {
  int packed_size = 0;
  MPI_Pack_size(count, datatype, MPI_COMM_SELF, &packed_size);
  std::vector<bool> written(size, false);
  for (const unsigned char fill : {0x00, 0xff}) {
    Bytes packed(static_cast<std::size_t>(packed_size), fill), image(size, static_cast<unsigned char>(~fill));
    int position = 0;
    PMPI_Unpack(packed.data(), packed_size, &position, image.data() + origin, count, datatype, MPI_COMM_SELF);
    for (std::size_t i = 0; i < size; ++i) written[i] = written[i] || image[i] == fill;
  }
  return written;
}

// Every rank sends count + rank % 2 elements and receives as many as it sends: a rank after an odd
// one receives a message one element longer than its buffer. The library's error class for the same
// call through gddt, and no byte written outside the buffer's typemap (inside it the contents are
// undefined).
void truncation(const Context& context) {
  Types t;
  for (int index = 0; !trial::random_type(context, index, &t); ++index) {
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int count = 2 + context.rank % 2;
  const bool truncated = context.prev % 2 == 1 && context.rank % 2 == 0;
  std::int64_t low = 0, high = 0;
  trial::touched({{count, t.datatype, 0}}, &low, &high);
  const std::int64_t origin = trial::kMargin - low;
  Bytes initial(static_cast<std::size_t>(high - low + 2 * trial::kMargin));
  fuzz::Rng rng(context.seed);
  for (unsigned char& byte : initial) byte = static_cast<unsigned char>(rng.next());
  const std::vector<bool> inside = typemap_bytes(count, t.datatype, origin, initial.size());
  for (const auto& [call, name] : calls()) {
    gddt_test::Buffer buffer(context.memory, initial.size());
    buffer.upload(initial.data(), initial.size());
    Bytes copy = initial;
    int classes[2] = {};
    for (const bool library : {false, true}) {
      void* at = library ? static_cast<void*>(copy.data() + origin) : static_cast<void*>(buffer.data() + origin);
      MPI_Status status;
      MPI_Error_class(replace(call, library, at, count, t.datatype, context.next, context.prev, comm, &status),
                      &classes[library ? 1 : 0]);
    }
    const std::string what = name + " of " + std::to_string(count) + " x " + t.description;
    // MPICH 4.0's and Open MPI 5.0's MPI_Isendrecv_replace report no truncation: only the blocking
    // call must. Where such a library stays silent, gddt may report the standard's MPI_ERR_TRUNCATE.
    const bool blocking = call == Call::kBlocking || call == Call::kBlockingLarge;
    const bool standard_over_silence =
        !blocking && truncated && classes[1] == MPI_SUCCESS && classes[0] == MPI_ERR_TRUNCATE;
    expect((classes[0] == classes[1] || standard_over_silence) &&
               (!blocking || (classes[1] == MPI_ERR_TRUNCATE) == truncated),
           what + ": through gddt class " + std::to_string(classes[0]) + ", the library's " +
               std::to_string(classes[1]));
    const Bytes got = buffer.download();
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (inside[i] || got[i] == initial[i]) continue;
      fail(what + ": byte " + std::to_string(static_cast<std::int64_t>(i) - origin) +
           " from the buffer pointer, outside the typemap, was written");
      break;
    }
  }
  MPI_Comm_free(&comm);
  MPI_Type_free(&t.datatype);
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_sendrecv_replace");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  suite.run("random_types", [](const Context& context) { random_types(context, false); });
  suite.run("plain_peer", [](const Context& context) { random_types(context, true); });
  suite.run("named_types", named_types);
  suite.run("proc_null", proc_null);
  suite.run("truncation", truncation);
  return suite.finish();
}
