#include "file_methods.hpp"

#include <string>

#include "mpi/entry_points.hpp"

namespace gddt_test::file_io {
namespace {

// The shapes of the calls, by where the call finds its place: at a file pointer or at an offset;
// blocking, returning a request, or the begin of a split collective. `Buffer` is void* for reads
// and const void* for writes, `Count` int or MPI_Count.
template <typename Buffer, typename Count>
using PointerCall = int (*)(MPI_File, Buffer, Count, MPI_Datatype, MPI_Status*);
template <typename Buffer, typename Count>
using OffsetCall = int (*)(MPI_File, MPI_Offset, Buffer, Count, MPI_Datatype, MPI_Status*);
template <typename Buffer, typename Count>
using PointerStart = int (*)(MPI_File, Buffer, Count, MPI_Datatype, MPI_Request*);
template <typename Buffer, typename Count>
using OffsetStart = int (*)(MPI_File, MPI_Offset, Buffer, Count, MPI_Datatype, MPI_Request*);
template <typename Buffer, typename Count>
using PointerBegin = int (*)(MPI_File, Buffer, Count, MPI_Datatype);
template <typename Buffer, typename Count>
using OffsetBegin = int (*)(MPI_File, MPI_Offset, Buffer, Count, MPI_Datatype);
template <typename Buffer>
using End = int (*)(MPI_File, Buffer, MPI_Status*);

// A function through gddt and its library twin.
#define BOTH(name) MPI_##name, PMPI_##name

template <typename T>
T pick(bool reference, T through_gddt, T library) {
  return reference ? library : through_gddt;
}

template <typename Buffer, typename Count>
Method at_pointer(const char* name, bool reads, Place place, PointerCall<Buffer, Count> gddt,
                  PointerCall<Buffer, Count> library) {
  return {name, reads, place, [=](bool reference, const Io& io) {
            return pick(reference, gddt, library)(io.file, static_cast<Buffer>(io.buffer), Count{io.count},
                                                  io.datatype, io.status);
          }};
}

template <typename Buffer, typename Count>
Method at_offset(const char* name, bool reads, OffsetCall<Buffer, Count> gddt, OffsetCall<Buffer, Count> library) {
  return {name, reads, Place::kExplicit, [=](bool reference, const Io& io) {
            return pick(reference, gddt, library)(io.file, io.offset, static_cast<Buffer>(io.buffer), Count{io.count},
                                                  io.datatype, io.status);
          }};
}

// A nonblocking call completes through MPI_Wait, or MPI_Test until it says so.
enum class Completion { kWait, kTest };

int complete(bool reference, int started, MPI_Request* request, Completion completion, MPI_Status* status) {
  if (started != MPI_SUCCESS) return started;
  if (completion == Completion::kWait) return pick(reference, MPI_Wait, PMPI_Wait)(request, status);
  int rc = MPI_SUCCESS;
  for (int done = 0; rc == MPI_SUCCESS && !done;) rc = pick(reference, MPI_Test, PMPI_Test)(request, &done, status);
  return rc;
}

template <typename Buffer, typename Count>
Method started_at_pointer(const char* name, bool reads, Place place, Completion completion,
                          PointerStart<Buffer, Count> gddt, PointerStart<Buffer, Count> library) {
  return {name, reads, place, [=](bool reference, const Io& io) {
            MPI_Request request;
            const int rc = pick(reference, gddt, library)(io.file, static_cast<Buffer>(io.buffer), Count{io.count},
                                                          io.datatype, &request);
            return complete(reference, rc, &request, completion, io.status);
          }};
}

template <typename Buffer, typename Count>
Method started_at_offset(const char* name, bool reads, Completion completion, OffsetStart<Buffer, Count> gddt,
                         OffsetStart<Buffer, Count> library) {
  return {name, reads, Place::kExplicit, [=](bool reference, const Io& io) {
            MPI_Request request;
            const int rc = pick(reference, gddt, library)(io.file, io.offset, static_cast<Buffer>(io.buffer),
                                                          Count{io.count}, io.datatype, &request);
            return complete(reference, rc, &request, completion, io.status);
          }};
}

template <typename Buffer, typename Count>
Method split_at_pointer(const char* name, bool reads, Place place, PointerBegin<Buffer, Count> gddt_begin,
                        PointerBegin<Buffer, Count> library_begin, End<Buffer> gddt_end, End<Buffer> library_end) {
  return {name, reads, place, [=](bool reference, const Io& io) {
            const auto buffer = static_cast<Buffer>(io.buffer);
            const int rc =
                pick(reference, gddt_begin, library_begin)(io.file, buffer, Count{io.count}, io.datatype);
            return rc != MPI_SUCCESS ? rc : pick(reference, gddt_end, library_end)(io.file, buffer, io.status);
          }};
}

template <typename Buffer, typename Count>
Method split_at_offset(const char* name, bool reads, OffsetBegin<Buffer, Count> gddt_begin,
                       OffsetBegin<Buffer, Count> library_begin, End<Buffer> gddt_end, End<Buffer> library_end) {
  return {name, reads, Place::kExplicit, [=](bool reference, const Io& io) {
            const auto buffer = static_cast<Buffer>(io.buffer);
            const int rc = pick(reference, gddt_begin, library_begin)(io.file, io.offset, buffer, Count{io.count},
                                                                      io.datatype);
            return rc != MPI_SUCCESS ? rc : pick(reference, gddt_end, library_end)(io.file, buffer, io.status);
          }};
}

}  // namespace

bool Method::collective() const {
  const std::string text = name;
  return text.find("_all") != std::string::npos || text.find("_ordered") != std::string::npos;
}

bool Method::nonblocking() const { return std::string(name).rfind("MPI_File_i", 0) == 0; }

std::vector<Method> file_methods() {
  constexpr bool kReads = true, kWrites = false;
  std::vector<Method> methods = {
      at_offset("MPI_File_write_at", kWrites, BOTH(File_write_at)),
      at_offset("MPI_File_read_at", kReads, BOTH(File_read_at)),
      at_pointer("MPI_File_write", kWrites, Place::kIndividual, BOTH(File_write)),
      at_pointer("MPI_File_read", kReads, Place::kIndividual, BOTH(File_read)),
      at_pointer("MPI_File_write_all", kWrites, Place::kIndividual, BOTH(File_write_all)),
      at_pointer("MPI_File_read_all", kReads, Place::kIndividual, BOTH(File_read_all)),
      at_offset("MPI_File_write_at_all", kWrites, BOTH(File_write_at_all)),
      at_offset("MPI_File_read_at_all", kReads, BOTH(File_read_at_all)),
      at_pointer("MPI_File_write_shared", kWrites, Place::kShared, BOTH(File_write_shared)),
      at_pointer("MPI_File_read_shared", kReads, Place::kShared, BOTH(File_read_shared)),
      at_pointer("MPI_File_write_ordered", kWrites, Place::kOrdered, BOTH(File_write_ordered)),
      at_pointer("MPI_File_read_ordered", kReads, Place::kOrdered, BOTH(File_read_ordered)),
      started_at_offset("MPI_File_iwrite_at + MPI_Wait", kWrites, Completion::kWait, BOTH(File_iwrite_at)),
      started_at_offset("MPI_File_iread_at + MPI_Wait", kReads, Completion::kWait, BOTH(File_iread_at)),
      started_at_pointer("MPI_File_iwrite + MPI_Test", kWrites, Place::kIndividual, Completion::kTest,
                         BOTH(File_iwrite)),
      started_at_pointer("MPI_File_iread + MPI_Test", kReads, Place::kIndividual, Completion::kTest,
                         BOTH(File_iread)),
      started_at_pointer("MPI_File_iwrite_shared + MPI_Wait", kWrites, Place::kShared, Completion::kWait,
                         BOTH(File_iwrite_shared)),
      started_at_pointer("MPI_File_iread_shared + MPI_Wait", kReads, Place::kShared, Completion::kWait,
                         BOTH(File_iread_shared)),
      started_at_pointer("MPI_File_iwrite_all + MPI_Test", kWrites, Place::kIndividual, Completion::kTest,
                         BOTH(File_iwrite_all)),
      started_at_pointer("MPI_File_iread_all + MPI_Wait", kReads, Place::kIndividual, Completion::kWait,
                         BOTH(File_iread_all)),
      started_at_offset("MPI_File_iwrite_at_all + MPI_Wait", kWrites, Completion::kWait, BOTH(File_iwrite_at_all)),
      started_at_offset("MPI_File_iread_at_all + MPI_Test", kReads, Completion::kTest, BOTH(File_iread_at_all)),
      split_at_pointer("MPI_File_write_all_begin/end", kWrites, Place::kIndividual, BOTH(File_write_all_begin),
                       BOTH(File_write_all_end)),
      split_at_pointer("MPI_File_read_all_begin/end", kReads, Place::kIndividual, BOTH(File_read_all_begin),
                       BOTH(File_read_all_end)),
      split_at_offset("MPI_File_write_at_all_begin/end", kWrites, BOTH(File_write_at_all_begin),
                      BOTH(File_write_at_all_end)),
      split_at_offset("MPI_File_read_at_all_begin/end", kReads, BOTH(File_read_at_all_begin),
                      BOTH(File_read_at_all_end)),
      split_at_pointer("MPI_File_write_ordered_begin/end", kWrites, Place::kOrdered, BOTH(File_write_ordered_begin),
                       BOTH(File_write_ordered_end)),
      split_at_pointer("MPI_File_read_ordered_begin/end", kReads, Place::kOrdered, BOTH(File_read_ordered_begin),
                       BOTH(File_read_ordered_end)),
  };
#if GDDT_HAVE_MPI_File_read_c && GDDT_HAVE_MPI_File_iwrite_at_all_c
  const std::vector<Method> large_count = {
      at_offset("MPI_File_write_at_c", kWrites, BOTH(File_write_at_c)),
      at_pointer("MPI_File_read_c", kReads, Place::kIndividual, BOTH(File_read_c)),
      at_pointer("MPI_File_write_ordered_c", kWrites, Place::kOrdered, BOTH(File_write_ordered_c)),
      at_pointer("MPI_File_read_shared_c", kReads, Place::kShared, BOTH(File_read_shared_c)),
      started_at_offset("MPI_File_iwrite_at_all_c + MPI_Wait", kWrites, Completion::kWait,
                        BOTH(File_iwrite_at_all_c)),
      started_at_pointer("MPI_File_iread_c + MPI_Test", kReads, Place::kIndividual, Completion::kTest,
                         BOTH(File_iread_c)),
      split_at_pointer("MPI_File_write_all_begin_c/end", kWrites, Place::kIndividual, BOTH(File_write_all_begin_c),
                       BOTH(File_write_all_end)),
      split_at_offset("MPI_File_read_at_all_begin_c/end", kReads, BOTH(File_read_at_all_begin_c),
                      BOTH(File_read_at_all_end)),
  };
  methods.insert(methods.end(), large_count.begin(), large_count.end());
#endif
  return methods;
}

}  // namespace gddt_test::file_io
