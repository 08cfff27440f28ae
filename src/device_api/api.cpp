// The host functions of gddt/gddt_device.h: device handles made from MPI
// handles, and the proxy's progress for programs whose proxy has no thread.
#include <mpi.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "core/gpu.hpp"
#include "device_api/errors.hpp"
#include "device_api/proxy.hpp"
#include "gddt/gddt_device.h"
#include "mpi/errors.hpp"
#include "type/datatype.hpp"

namespace gddt::device_api {
namespace {

int initialized() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init != 0 && fin == 0;
}

// gddt's layout as kernels walk it (gddt_device.h).
std::vector<unsigned char> device_image(const type::Layout &l) {
  const std::size_t npieces = l.pieces.size();
  std::vector<unsigned char> image(sizeof(gddt_device_layout_t) +
                                   (std::max<std::size_t>(npieces, 1) - 1) * sizeof(gddt_device_piece_t));
  auto *out = reinterpret_cast<gddt_device_layout_t *>(image.data());
  out->size = l.size;
  out->extent = l.extent;
  out->group_bytes = l.group_bytes;
  out->npieces = static_cast<std::int32_t>(npieces);
  out->nrepeat = l.nrepeat;
  out->width = static_cast<std::int32_t>(l.alignment);
  for (int d = 0; d < l.nrepeat; ++d) out->repeat[d] = gddt_device_dim_t{l.repeat[d].count, l.repeat[d].stride};
  for (std::size_t i = 0; i < npieces; ++i) {
    const type::StridedBlock &p = l.pieces[i];
    gddt_device_piece_t &q = out->pieces[i];
    q.offset = p.offset;
    q.block = p.block;
    q.packed_begin = l.piece_begin[i];
    q.ndims = p.ndims;
    for (int d = 0; d < p.ndims; ++d) q.dims[d] = gddt_device_dim_t{p.dims[d].count, p.dims[d].stride};
  }
  return image;
}

}  // namespace
}  // namespace gddt::device_api

using namespace gddt;  // NOLINT: the C entry points below are outside namespace
                       // gddt

extern "C" {

int gddt_device_comm_create(MPI_Comm comm, gddt_device_comm_t *out) {
  constexpr const char *kCall = "gddt_device_comm_create";
  if (!device_api::initialized()) return MPI_ERR_OTHER;  // no error handler to call yet
  if (comm == MPI_COMM_NULL) return device_api::raise(comm, MPI_ERR_COMM, kCall, "MPI_COMM_NULL");
  if (out == nullptr) return device_api::raise(comm, MPI_ERR_ARG, kCall, "null handle");
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter != 0)
    return device_api::raise(comm, MPI_ERR_COMM, kCall, "an intercommunicator");
  gddt_device_comm_t made{};
  MPI_Comm_rank(comm, &made.rank);
  MPI_Comm_size(comm, &made.size);
  int *tag_ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  made.tag_ub = flag != 0 ? *tag_ub : 32767;
  Status status = device_api::ring(&made.ring);
  if (is_error(status)) return device_api::raise(comm, mpi::error_class(status), kCall, "no ring");
  MPI_Comm dup = MPI_COMM_NULL;
  const int rc = PMPI_Comm_dup(comm, &dup);
  if (rc != MPI_SUCCESS) return rc;  // raised by the library
  status = device_api::add_comm(comm, dup, &made.index);
  if (is_error(status)) {
    PMPI_Comm_free(&dup);
    return device_api::raise(comm, mpi::error_class(status), kCall, "no table entry");
  }
  *out = made;
  return MPI_SUCCESS;
}

int gddt_device_comm_free(gddt_device_comm_t *comm) {
  constexpr const char *kCall = "gddt_device_comm_free";
  if (comm == nullptr) return device_api::raise(MPI_COMM_SELF, MPI_ERR_ARG, kCall, "null handle");
  MPI_Comm dup = MPI_COMM_NULL;
  if (is_error(device_api::remove_comm(comm->index, &dup)))
    return device_api::raise(MPI_COMM_SELF, MPI_ERR_COMM, kCall, "not a device communicator");
  PMPI_Comm_free(&dup);
  *comm = gddt_device_comm_t{};
  return MPI_SUCCESS;
}

int gddt_device_type_create(MPI_Datatype type, gddt_device_type_t *out) {
  constexpr const char *kCall = "gddt_device_type_create";
  if (!device_api::initialized()) return MPI_ERR_OTHER;  // no error handler to call yet
  if (out == nullptr) return device_api::raise(MPI_COMM_SELF, MPI_ERR_ARG, kCall, "null handle");
  if (type == MPI_DATATYPE_NULL || !type::is_known_committed(type))
    return device_api::raise(MPI_COMM_SELF, MPI_ERR_TYPE, kCall, "a null or uncommitted datatype");
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  const int rc = MPI_Type_dup(type, &dup);
  if (rc != MPI_SUCCESS) return rc;  // raised by the library
  type::LayoutPtr layout;
  Status status = type::lookup(dup, &layout);
  device_api::DeviceCopy copy;
  if (!is_error(status)) {
    const std::vector<unsigned char> image = device_api::device_image(*layout);
    status = copy.assign(image.data(), image.size());
  }
  gddt_device_type_t made{};
  made.layout = static_cast<const gddt_device_layout_t *>(copy.ptr);
  if (!is_error(status)) status = device_api::add_type(dup, std::move(copy), &made.index);
  if (is_error(status)) {
    MPI_Type_free(&dup);
    return device_api::raise(MPI_COMM_SELF, mpi::error_class(status), kCall, "no device copy of its layout");
  }
  *out = made;
  return MPI_SUCCESS;
}

int gddt_device_type_free(gddt_device_type_t *type) {
  constexpr const char *kCall = "gddt_device_type_free";
  if (type == nullptr) return device_api::raise(MPI_COMM_SELF, MPI_ERR_ARG, kCall, "null handle");
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  if (is_error(device_api::remove_type(type->index, &dup)))
    return device_api::raise(MPI_COMM_SELF, MPI_ERR_TYPE, kCall, "not a device datatype");
  MPI_Type_free(&dup);
  *type = gddt_device_type_t{};
  return MPI_SUCCESS;
}

int gddt_device_progress(int *active) {
  device_api::progress(active);
  return MPI_SUCCESS;
}

int gddt_device_stream_synchronize(void *stream) {
  const bool threaded = device_api::threaded();
  for (;;) {
    bool done = false;
    const Status status = gpu::stream_query(stream, &done);
    if (is_error(status)) return mpi::error_class(status);
    if (done) return MPI_SUCCESS;
    // The proxy thread usually shares this thread's core (launchers bind a rank to one): CUDA's
    // own synchronize spins there and left the proxy a scheduler slice every few milliseconds.
    if (threaded) {
      std::this_thread::yield();
    } else {
      device_api::progress(nullptr);
    }
  }
}

}  // extern "C"
