// File reads and writes through gddt on buffers of the run's memory kind (--memory; mixed gives
// neighbouring ranks different kinds), with random nested datatypes from the fuzzer's generator,
// against the MPI library alone on host copies of the same bytes (trial.hpp). Every write goes
// through gddt into one file and through PMPI into another, and the two files must then hold the
// same bytes (the source buffers unchanged); every read takes the same region of one file through
// gddt and through PMPI into buffers of the same random bytes, which must come out equal, gaps and
// margins included, with the same status. Every method of file_methods.hpp (explicit offsets,
// individual and shared file pointers, collective, ordered, nonblocking and split collective calls,
// large-count forms where the library has them), under a plain view and under a view whose
// filetype leaves holes; reads that reach the end of the file; erroneous calls, whose error class
// must be the library's. Host memory is staged by gddt only with GDDT_FILE_HOST=gddt (as ctest runs
// it); gddt's counters prove that it was. The files live in TMPDIR (else /tmp) and are deleted.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "file_methods.hpp"
#include "trial.hpp"

namespace gddt_test::file_io {
namespace {

using p2p::Context;
using p2p::expect;
using trial::Bytes;
using trial::Trial;
using trial::Types;

constexpr int kDefaultTypes = 3;
// Random types tried at most to find them (many are left out under MPICH).
constexpr int kMostTypesTried = 100;
// Where the view with holes starts, in bytes.
constexpr MPI_Offset kHoledDisplacement = 100;
// Both written files are this long from the start, zeros where nothing was written: a library that
// writes a view with holes by reading, changing and writing back a whole stretch (ROMIO's data
// sieving) writes whatever its buffer held into the holes past the end of the file.
constexpr MPI_Offset kFileBytes = 256 * 1024;

#if defined(MPICH_VERSION)
const MPI_Datatype kPaddedPairs[] = {MPI_SHORT_INT, MPI_DOUBLE_INT, MPI_LONG_INT};

// Whether an element of `node` leaves a block, run of blocks or struct member empty.
bool has_empty_block(const fuzz::TypeNode& node) {
  const auto has_zero = [](const std::vector<int>& values) {
    return std::find(values.begin(), values.end(), 0) != values.end();
  };
  bool empty = false;
  switch (node.constructor) {
    case fuzz::Constructor::kContiguous: empty = node.count == 0; break;
    case fuzz::Constructor::kVector:
    case fuzz::Constructor::kHvector: empty = node.count == 0 || node.blocklength == 0; break;
    case fuzz::Constructor::kIndexedBlock:
    case fuzz::Constructor::kHindexedBlock: empty = node.blocklength == 0 || node.displacements.empty(); break;
    case fuzz::Constructor::kIndexed:
    case fuzz::Constructor::kHindexed:
    case fuzz::Constructor::kStruct: empty = node.blocklengths.empty() || has_zero(node.blocklengths); break;
    case fuzz::Constructor::kSubarray: empty = has_zero(node.subsizes); break;
    default: break;
  }
  return empty || std::any_of(node.children.begin(), node.children.end(), has_empty_block);
}
#endif

// The random types: small ones. MPICH 4.0's ROMIO, with or without gddt (usage.md), writes zeros
// for the pair types with padding, reads nothing into them (while counting them read) and spins under
// a view with holes; places elsewhere the bytes of many types whose bounds reach before the buffer
// pointer or that leave a block empty; and asks MPI_Type_get_envelope about the types, which aborts on those made
// by large-count constructors.
gddt_test::trial::TypeChoice file_types() {
  gddt_test::trial::TypeChoice choice;
  choice.max_span = 4096;
#if defined(MPICH_VERSION)
  choice.large_count_constructors = false;
  choice.left_out = [](const fuzz::TypeNode& node, MPI_Datatype datatype) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    MPI_Type_get_extent(datatype, &lb, &extent);
    MPI_Type_get_true_extent(datatype, &true_lb, &true_extent);
    return lb < 0 || true_lb < 0 || has_empty_block(node) ||
           std::any_of(std::begin(kPaddedPairs), std::end(kPaddedPairs),
                       [&](MPI_Datatype pair) { return fuzz::contains_named_type(node, pair); });
  };
#endif
  return choice;
}

// The run's files: one written through gddt, one through the library alone; the reads take the
// library's, through a handle of their own each way, so that file pointers move alike.
class Files {
 public:
  Files() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    const char* directory = std::getenv("TMPDIR");
    int job = static_cast<int>(getpid());
    MPI_Bcast(&job, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const std::string stem = std::string(directory != nullptr && *directory ? directory : "/tmp") +
                             "/gddt-file-io-" + std::to_string(job);
    paths_[0] = stem + "-gddt.dat";
    paths_[1] = stem + "-library.dat";
    for (int i = 0; i < 4; ++i) {
      MPI_File_open(MPI_COMM_WORLD, paths_[i == 0 ? 0 : 1].c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                    &handles_[i]);
      MPI_File_set_errhandler(handles_[i], MPI_ERRORS_RETURN);
    }
    resize(kFileBytes);
  }
  ~Files() {
    for (MPI_File& handle : handles_) MPI_File_close(&handle);
    if (rank_ == 0)
      for (const std::string& path : paths_) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;

  MPI_File written(bool reference) const { return handles_[reference ? 1 : 0]; }
  MPI_File read(bool reference) const { return handles_[reference ? 2 : 3]; }
  MPI_File taken(bool reads, bool reference) const { return reads ? read(reference) : written(reference); }

  // Every handle's view: MPI_BYTE etypes laid out by `filetype` from `displacement` bytes on.
  void view(MPI_Offset displacement, MPI_Datatype filetype) {
    for (MPI_File handle : handles_)
      P2P_EXPECT_SUCCESS(MPI_File_set_view(handle, displacement, MPI_BYTE, filetype, "native", MPI_INFO_NULL));
  }

  // Both written files hold the same bytes (rank 0 compares them while the others wait).
  void expect_same_bytes(const std::string& what) {
    P2P_EXPECT_SUCCESS(MPI_File_sync(written(false)));
    P2P_EXPECT_SUCCESS(MPI_File_sync(written(true)));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0) compare(what);
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // Makes both written files `bytes` long.
  void resize(MPI_Offset bytes) {
    P2P_EXPECT_SUCCESS(MPI_File_set_size(written(false), bytes));
    P2P_EXPECT_SUCCESS(MPI_File_set_size(written(true), bytes));
  }

 private:
  void compare(const std::string& what) const {
    const Bytes through_gddt = contents(paths_[0]), library = contents(paths_[1]);
    const auto mismatch = std::mismatch(through_gddt.begin(), through_gddt.end(), library.begin(), library.end());
    expect(through_gddt.size() == library.size() && mismatch.first == through_gddt.end(),
           what + ": the file written through gddt (" + std::to_string(through_gddt.size()) +
               " bytes) differs from the library's (" + std::to_string(library.size()) + " bytes) at byte " +
               std::to_string(mismatch.first - through_gddt.begin()));
  }

  static Bytes contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    Bytes bytes(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return bytes;
  }
  int rank_ = 0;
  std::string paths_[2];
  // gddt's written file, the library's, and the library's file again for each way of reading.
  MPI_File handles_[4] = {MPI_FILE_NULL, MPI_FILE_NULL, MPI_FILE_NULL, MPI_FILE_NULL};
};

// Runs `method` as `io` says, from its place: an individual file pointer sought to the offset first,
// the shared one to the view's start (Open MPI shares it between the two handles of a file), ranks
// taking it one by one in rank order; an explicit offset needs neither.
int run_method(const Method& method, bool reference, const Io& io) {
  int rc = MPI_SUCCESS;
  if (method.place == Place::kIndividual) rc = MPI_File_seek(io.file, io.offset, MPI_SEEK_SET);
  if (method.place == Place::kShared || method.place == Place::kOrdered)
    rc = MPI_File_seek_shared(io.file, 0, MPI_SEEK_SET);
  if (rc != MPI_SUCCESS) return rc;
  if (method.place != Place::kShared) return method.call(reference, io);
  int rank = 0, size = 0, called = MPI_SUCCESS;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int turn = 0; turn < size; ++turn) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (turn == rank) called = method.call(reference, io);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the last turn is over before anyone moves the pointer again
  return called;
}

// The elements and bytes a status counts, as text.
std::string counted(const MPI_Status& status, MPI_Datatype datatype) {
  int elements = 0, bytes = 0;
  MPI_Get_count(&status, datatype, &elements);
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  return std::to_string(elements) + " elements, " + std::to_string(bytes) + " bytes";
}

// One method on `count` elements of `t` at this rank's place in the current view: a write into both
// files, or a read of the library's file, through gddt and through the library.
void run_through_both(const Context& context, Files& files, const Method& method, const Types& t, int count,
                      MPI_Offset offset, std::uint64_t seed, const std::string& what) {
  Trial trial(context, what, seed);
  trial.add({{count, t.datatype, 0}});
  MPI_Status statuses[2];
  trial.run([&](bool reference, const std::vector<void*>& b) {
    const Io io{files.taken(method.reads, reference), offset, b[0], count, t.datatype, &statuses[reference ? 1 : 0]};
    return run_method(method, reference, io);
  });
  const std::string through_gddt = counted(statuses[0], t.datatype), library = counted(statuses[1], t.datatype);
  expect(through_gddt == library, what + ": the status through gddt counts " + through_gddt + ", the library's " +
                                      library);
  if (method.reads) {
    MPI_Barrier(MPI_COMM_WORLD);  // no rank writes the next method's bytes while another still reads
  } else {
    files.expect_same_bytes(what);
  }
}

// Every method with `t` under the plain view and under one with holes, in the table's order: each
// write puts rank r's elements at r times their size in the view (the first one is at explicit
// offsets), where the reads after it take them.
void every_method(const Context& context, Files& files, const Types& t, int count, std::uint64_t seed) {
  MPI_Datatype holed, blocks;
  MPI_Type_vector(2, 3, 5, MPI_BYTE, &blocks);
  MPI_Type_create_resized(blocks, 0, 16, &holed);
  MPI_Type_commit(&holed);
  int size = 0;
  MPI_Type_size(t.datatype, &size);
  const MPI_Offset offset = static_cast<MPI_Offset>(context.rank) * count * size;
  const std::vector<Method> methods = file_methods();
  for (const bool with_holes : {false, true}) {
    const std::string view = with_holes ? " under a view with holes" : "";
    files.view(with_holes ? kHoledDisplacement : 0, with_holes ? holed : MPI_BYTE);
    for (std::size_t m = 0; m < methods.size(); ++m) {
      const std::string what =
          std::string(methods[m].name) + " of " + std::to_string(count) + " x " + t.description + view;
      run_through_both(context, files, methods[m], t, count, offset, p2p::mix_seed(seed, m + (with_holes ? 100 : 0)),
                       what);
    }
  }
  MPI_Type_free(&holed);
  MPI_Type_free(&blocks);
}

// Open MPI 4.1 never completes a nonblocking read that reaches the end of the file (MPI_Wait spins
// in its asynchronous I/O), with or without gddt.
bool open_mpi() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  return std::string(version, static_cast<std::size_t>(length)).find("Open MPI") != std::string::npos;
}

// Reads that reach the end of the file get what lies before it: an independent read of ints (which
// the library moves straight into the buffer) leaves the rest of the buffer as it was, and so must
// gddt. (Collective reads leave it undefined: the library copies its own buffer's bytes there.)
void end_of_file(const Context& context, Files& files) {
  constexpr MPI_Offset kEndBytes = 4096, kBeforeEnd = 40;
  constexpr int kInts = 100;
  Types ints{MPI_INT, sizeof(int), "MPI_INT"};
  files.view(0, MPI_BYTE);
  const Method write = file_methods().front();
  const int share = static_cast<int>(kEndBytes / context.size / sizeof(int));
  run_through_both(context, files, write, ints, share, MPI_Offset{context.rank} * share * sizeof(int), context.seed,
                   "filling the file");
  files.resize(kEndBytes);
  std::uint64_t seed = context.seed;
  for (const Method& method : file_methods()) {
    if (!method.reads || method.collective() || method.place == Place::kShared ||
        (method.nonblocking() && open_mpi()))
      continue;
    run_through_both(context, files, method, ints, kInts, kEndBytes - kBeforeEnd, ++seed,
                     std::string(method.name) + " across the end of the file");
  }
}

// Erroneous calls give the library's error class through gddt too, on buffers of the run's kind.
void bad_arguments(const Context& context, Files& files) {
  gddt_test::Buffer buffer(context.memory, 64 * sizeof(int));
  void* data = buffer.data();
  MPI_Datatype uncommitted;
  MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
  MPI_File file = files.written(false);
  files.view(0, MPI_BYTE);
  MPI_Status status;
  const std::vector<trial::ErroneousCall> calls = {
      {"MPI_File_write_at of a negative count",
       [&](bool ref) { return CALL(ref, MPI_File_write_at, file, 0, data, -1, MPI_INT, &status); }},
      {"MPI_File_read of MPI_DATATYPE_NULL",
       [&](bool ref) { return CALL(ref, MPI_File_read, file, data, 1, MPI_DATATYPE_NULL, &status); }},
      {"MPI_File_iwrite_at_all of a datatype not committed",
       [&](bool ref) {
         MPI_Request request;
         return CALL(ref, MPI_File_iwrite_at_all, file, 0, data, 2, uncommitted, &request);
       }},
      {"MPI_File_read_all_begin on MPI_FILE_NULL",
       [&](bool ref) { return CALL(ref, MPI_File_read_all_begin, MPI_FILE_NULL, data, 1, MPI_INT); }},
      {"MPI_File_iread of a negative count",
       [&](bool ref) {
         MPI_Request request;
         return CALL(ref, MPI_File_iread, file, data, -3, MPI_INT, &request);
       }},
  };
  trial::expect_library_classes(calls);
  MPI_Type_free(&uncommitted);
}

}  // namespace
}  // namespace gddt_test::file_io

int main(int argc, char** argv) {
  using namespace gddt_test::file_io;
  using gddt_test::p2p::Context;
  gddt_test::p2p::Suite suite(&argc, &argv, "file_io", MPI_THREAD_SINGLE, 1);
  const long long stand_ins_before = gddt_test::trial::counter_value("file.stand-ins");
  {
    Files files;
    suite.run("random_types", [&files](const Context& context) {
      const long types = context.messages > 0 ? context.messages : kDefaultTypes;
      int tested = 0;
      for (int index = 0; tested < types && index < kMostTypesTried; ++index) {
        Types t;
        if (!gddt_test::trial::random_type(context, index, &t, file_types())) continue;
        ++tested;
        for (int count : {1, 3}) every_method(context, files, t, count, gddt_test::p2p::mix_seed(context.seed, index));
        MPI_Type_free(&t.datatype);
      }
      gddt_test::p2p::expect(tested > 0, "some random types were not empty");
      gddt_test::p2p::note(std::to_string(tested) + " random types tested");
    });
    suite.run("end_of_file", [&files](const Context& context) { end_of_file(context, files); });
    suite.run("bad_arguments", [&files](const Context& context) { bad_arguments(context, files); });
  }
  suite.run("gddt_staged_the_buffers", [stand_ins_before](const Context& context) {
    const bool staged = context.memory == gddt_test::MemoryKind::kDevice || getenv("GDDT_FILE_HOST") != nullptr;
    if (!staged) return;
    const long long now = gddt_test::trial::counter_value("file.stand-ins");
    gddt_test::p2p::expect(now > stand_ins_before, "gddt's file.stand-ins counter grew (" + std::to_string(now) + ")");
  });
  return suite.finish();
}
