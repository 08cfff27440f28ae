// The large-count forms of packing (MPI_Pack_c, MPI_Unpack_c and their external32 twins), whose
// positions and sizes the narrowed rows' generated shims do not handle (mpi/large_count.hpp says
// what every _c form does). MPI_Pack_size_c, MPI_Get_count_c and MPI_Get_elements_c need no shim:
// they do not depend on where the data lives, and gddt's messages are ordinary ones.
#include <mpi.h>

#include "mpi/entry_points.hpp"

#if GDDT_HAVE_MPI_Send_c

#include <climits>
#include <cstdint>

#include "core/log.hpp"
#include "core/memory.hpp"
#include "mpi/classify.hpp"
#include "mpi/errors.hpp"
#include "mpi/interpose.hpp"
#include "mpi/large_count.hpp"
#include "mpi/pack_api.hpp"

namespace gddt::mpi::large_count {

int count_too_large(MPI_Comm comm) {
  GDDT_LOG(kError,
           "a large-count call on device memory beyond INT_MAX elements or bytes: gddt stages each "
           "message as one MPI_PACKED message of at most INT_MAX bytes");
  return raise(comm, GDDT_ERR_COUNT);
}

}  // namespace gddt::mpi::large_count

namespace gddt::mpi::entry {

using large_count::count_too_large;
using large_count::fits_int;
using large_count::library_takes;
using large_count::narrowed;

// Packing takes the int shims where the count and position fit an int (negative ones too,
// which they reject) and so does the end of the packed data: an outsize or insize beyond an
// int is then cut to INT_MAX, which the data does not reach.
namespace {

bool packs_within_int(MPI_Count count, MPI_Count position, MPI_Count size, MPI_Datatype datatype) {
  if (count < 0 || position < 0) return true;
  if (!fits_int(count) || !fits_int(position)) return false;
  if (fits_int(size)) return true;
  gddt::type::LayoutPtr layout;
  if (gddt::mpi::resolve_datatype(datatype, &layout) != GDDT_OK) return true;  // the int shim says why
  std::int64_t bytes = 0;
  return !__builtin_mul_overflow(layout->size, static_cast<std::int64_t>(count), &bytes) && position + bytes <= INT_MAX;
}

int clamped(MPI_Count size) { return size > INT_MAX ? INT_MAX : narrowed(size); }

}  // namespace

int Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
           MPI_Count* position, MPI_Comm comm) {
  if (position == nullptr) return Pack(inbuf, narrowed(incount), datatype, outbuf, clamped(outsize), nullptr, comm);
  if (packs_within_int(incount, *position, outsize, datatype)) {
    int at = narrowed(*position);
    const int rc = Pack(inbuf, narrowed(incount), datatype, outbuf, clamped(outsize), &at, comm);
    if (rc == MPI_SUCCESS) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Pack_c(inbuf, incount, datatype, outbuf, outsize, position, comm);
  return count_too_large(comm);
}

int Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
             MPI_Datatype datatype, MPI_Comm comm) {
  if (position == nullptr) return Unpack(inbuf, clamped(insize), nullptr, outbuf, narrowed(outcount), datatype, comm);
  if (packs_within_int(outcount, *position, insize, datatype)) {
    int at = narrowed(*position);
    const int rc = Unpack(inbuf, clamped(insize), &at, outbuf, narrowed(outcount), datatype, comm);
    if (rc == MPI_SUCCESS) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Unpack_c(inbuf, insize, position, outbuf, outcount, datatype, comm);
  return count_too_large(comm);
}

// external32 positions and sizes are MPI_Aint in the int calls, as wide as MPI_Count here.
static_assert(sizeof(MPI_Aint) == sizeof(MPI_Count), "MPI_Aint holds every MPI_Count");

int Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                    MPI_Count outsize, MPI_Count* position) {
  if (position == nullptr || large_count::int_call_takes(incount)) {
    MPI_Aint at = position != nullptr ? static_cast<MPI_Aint>(*position) : 0;
    const int rc = Pack_external(datarep, inbuf, narrowed(incount), datatype, outbuf, static_cast<MPI_Aint>(outsize),
                                 position != nullptr ? &at : nullptr);
    if (rc == MPI_SUCCESS && position != nullptr) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Pack_external_c(datarep, inbuf, incount, datatype, outbuf, outsize, position);
  return count_too_large(MPI_COMM_WORLD);
}

int Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                      MPI_Count outcount, MPI_Datatype datatype) {
  if (position == nullptr || large_count::int_call_takes(outcount)) {
    MPI_Aint at = position != nullptr ? static_cast<MPI_Aint>(*position) : 0;
    const int rc = Unpack_external(datarep, inbuf, static_cast<MPI_Aint>(insize), position != nullptr ? &at : nullptr,
                                   outbuf, narrowed(outcount), datatype);
    if (rc == MPI_SUCCESS && position != nullptr) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Unpack_external_c(datarep, inbuf, insize, position, outbuf, outcount, datatype);
  return count_too_large(MPI_COMM_WORLD);
}

}  // namespace gddt::mpi::entry

#endif  // GDDT_HAVE_MPI_Send_c
