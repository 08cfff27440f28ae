#include "mpi/pack_api.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/counters.hpp"
#include "core/config.hpp"
#include "core/gpu.hpp"
#include "core/memory.hpp"
#include "gddt/gddt_mpi.h"
#include "mpi/classify.hpp"
#include "mpi/errors.hpp"
#include "protocol/transfer.hpp"

namespace gddt::mpi {
namespace {

bool host_packing_by_gddt() {
  static const bool by_gddt = config::pack_host() == config::PackHost::kGddt;
  return by_gddt;
}

// A buffer argument that is NULL (MPI_BOTTOM) is legal only when the datatype's displacements
// are absolute addresses; the first byte touched inside the lowest 64 KiB cannot be one.
constexpr std::int64_t kLowestValidAddress = 64 * 1024;

// Bounds of a datatype gddt cannot express, from the library, so the span checks and the
// bounce path still work.
Status bounds_from_library(MPI_Datatype datatype, type::Layout* bounds) {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size_x(datatype, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent_x(datatype, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent_x(datatype, &true_lb, &true_extent) != MPI_SUCCESS)
    return GDDT_ERR_INVALID_TYPE;
  bounds->size = size;
  bounds->lb = lb;
  bounds->extent = extent;
  bounds->true_lb = true_lb;
  bounds->true_ub = true_lb + true_extent;
  return GDDT_OK;
}

// What one MPI_Pack or MPI_Unpack call moves, once its arguments are checked.
struct Plan {
  type::LayoutPtr layout;    // bounds only (no pieces) when !expressible
  bool expressible = true;
  std::int64_t bytes = 0;    // packed bytes moved
  char* typed_first = nullptr;  // lowest typed byte touched
  memory::Kind typed, packed;
};

// The plan's layout: gddt's, or only the library's bounds for a type gddt cannot express.
Status plan_layout(MPI_Datatype datatype, Plan* plan) {
  const Status status = resolve_datatype(datatype, &plan->layout);
  if (status != GDDT_ERR_UNSUPPORTED) return status;
  auto bounds = std::make_shared<type::Layout>();
  GDDT_CHECK(bounds_from_library(datatype, bounds.get()));
  plan->layout = std::move(bounds);
  plan->expressible = false;
  return GDDT_OK;
}

// The plan's typed span of `count` elements at `typed`, and where both buffers live;
// `packed_at` is the first packed byte moved.
Status plan_buffers(const void* typed, int count, MPI_Datatype datatype, const void* packed_at, Plan* plan) {
  plan->typed_first = const_cast<char*>(static_cast<const char*>(typed)) + plan->layout->span_lb(count);
  if (reinterpret_cast<std::uintptr_t>(plan->typed_first) < kLowestValidAddress) return GDDT_ERR_BUFFER;
  if (packed_at == nullptr) return GDDT_ERR_BUFFER;
  GDDT_CHECK(classify_typed(datatype, plan->typed_first, &plan->typed));
  return memory::classify(packed_at, &plan->packed);
}

// The checks MPI_Pack and MPI_Unpack share. The typed side is `count` elements of `datatype`
// at `typed`; the packed side is `packed` + *position within `packed_size` bytes.
Status plan_transfer(const void* typed, int count, MPI_Datatype datatype, const void* packed,
                     int packed_size, const int* position, Plan* plan) {
  if (position == nullptr || packed_size < 0) return GDDT_ERR_INVALID_ARG;
  if (count < 0) return GDDT_ERR_COUNT;
  GDDT_CHECK(plan_layout(datatype, plan));
  if (*position < 0 || *position > packed_size) return GDDT_ERR_INVALID_ARG;
  plan->bytes = static_cast<std::int64_t>(count) * plan->layout->size;
  if (plan->bytes > packed_size - *position) return GDDT_ERR_TRUNCATE;
  if (plan->bytes == 0) return GDDT_OK;
  const char* packed_at = packed != nullptr ? static_cast<const char*>(packed) + *position : nullptr;
  return plan_buffers(typed, count, datatype, packed_at, plan);
}

bool on_host_only(const Plan& plan) { return !plan.typed.is_device() && !plan.packed.is_device(); }

// For a datatype gddt cannot express on a device buffer: the library packs a host copy of
// the typed span. Slow, but correct for anything the library itself handles.
struct HostSpan {
  std::vector<char> bytes;
  std::int64_t lb = 0;
  char* base() { return bytes.data() - lb; }  // the typed buffer pointer for the copy
};

Status copy_span_to_host(const Plan& plan, int count, HostSpan* span) {
  span->lb = plan.layout->span_lb(count);
  span->bytes.resize(static_cast<std::size_t>(plan.layout->span_ub(count) - span->lb));
  return protocol::copy_and_wait(span->bytes.data(), plan.typed_first, span->bytes.size(), plan.typed.device);
}

Status bounce_pack(const Plan& plan, int count, MPI_Datatype datatype, char* out, MPI_Comm comm) {
  HostSpan span;
  GDDT_CHECK(copy_span_to_host(plan, count, &span));
  std::vector<char> packed(static_cast<std::size_t>(plan.bytes));
  int position = 0;
  if (PMPI_Pack(span.base(), count, datatype, packed.data(), static_cast<int>(plan.bytes), &position, comm) != MPI_SUCCESS)
    return GDDT_ERR_MPI;
  return protocol::copy_and_wait(out, packed.data(), packed.size(), plan.packed.device);
}

Status bounce_unpack(const Plan& plan, const char* in, int count, MPI_Datatype datatype, MPI_Comm comm) {
  HostSpan span;
  GDDT_CHECK(copy_span_to_host(plan, count, &span));
  std::vector<char> packed(static_cast<std::size_t>(plan.bytes));
  GDDT_CHECK(protocol::copy_and_wait(packed.data(), in, packed.size(), plan.packed.device));
  int position = 0;
  if (PMPI_Unpack(packed.data(), static_cast<int>(plan.bytes), &position, span.base(), count, datatype, comm) != MPI_SUCCESS)
    return GDDT_ERR_MPI;
  return protocol::copy_and_wait(plan.typed_first, span.bytes.data(), span.bytes.size(), plan.typed.device);
}

// ---- MPI_Pack_external / MPI_Unpack_external ---------------------------------------------------
// external32 fixes a byte order and a size for every base type, which only the library knows
// for every datatype, so gddt does no conversion of its own: where a buffer is in device memory
// the library converts host copies. Bad arguments go to the library unchanged, which reports
// them as it always does.

constexpr char kExternal32[] = "external32";

// Copies `bytes` between host memory and memory of `kind` (a plain copy unless it is on a GPU).
Status copy_with(const memory::Kind& kind, void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return GDDT_OK;
  if (kind.is_device()) return protocol::copy_and_wait(dst, src, bytes, kind.device);
  std::memcpy(dst, src, bytes);
  return GDDT_OK;
}

// Whether an external call needs host copies: a buffer on a GPU, or (GDDT_PACK_HOST=gddt, for
// tests without one) any buffers. Fills the plan's bounds, buffer kinds and external size.
bool external_needs_copies(const char* datarep, const void* typed, int count, MPI_Datatype datatype,
                           const void* packed_at, Plan* plan) {
  if ((!gpu::available() && !host_packing_by_gddt()) || datarep == nullptr || count <= 0 ||
      std::strcmp(datarep, kExternal32) != 0)
    return false;
  if (is_error(plan_layout(datatype, plan)) || plan->layout->size == 0 ||
      is_error(plan_buffers(typed, count, datatype, packed_at, plan)))
    return false;
  if (on_host_only(*plan) && !host_packing_by_gddt()) return false;
  MPI_Aint size = 0;
  if (PMPI_Pack_external_size(kExternal32, count, datatype, &size) != MPI_SUCCESS) return false;
  plan->bytes = size;
  return true;
}

// The typed side of an external call in host memory: the typed span copied where it is not.
Status host_typed_span(const Plan& plan, int count, HostSpan* span, bool* copied) {
  *copied = plan.typed.is_device();
  return *copied ? copy_span_to_host(plan, count, span) : GDDT_OK;
}

// Errors gddt finds itself. The call has no communicator: the world's handler takes them.
int raise_external(Status status) { return raise(MPI_COMM_WORLD, status); }

}  // namespace

int pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                  MPI_Aint outsize, MPI_Aint* position) {
  const auto forward = [&] { return PMPI_Pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position); };
  if (position == nullptr || *position < 0 || *position > outsize) return forward();
  char* out = static_cast<char*>(outbuf) + *position;
  Plan plan;
  if (!external_needs_copies(datarep, inbuf, incount, datatype, out, &plan)) return forward();
  // Checked here: MPICH 4.0 packs past the end of a buffer one byte short, which would be the end
  // of gddt's host copy.
  if (outsize - *position < plan.bytes) return raise_external(GDDT_ERR_TRUNCATE);
  HostSpan span;
  bool copied = false;
  Status status = host_typed_span(plan, incount, &span, &copied);
  if (is_error(status)) return raise_external(status);
  std::vector<char> packed(static_cast<std::size_t>(plan.bytes));
  MPI_Aint written = 0;
  const int rc = PMPI_Pack_external(datarep, copied ? span.base() : inbuf, incount, datatype, packed.data(),
                                    static_cast<MPI_Aint>(packed.size()), &written);
  if (rc != MPI_SUCCESS) return rc;
  status = copy_with(plan.packed, out, packed.data(), static_cast<std::size_t>(written));
  if (is_error(status)) return raise_external(status);
  *position += written;
  return MPI_SUCCESS;
}

int unpack_external(const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                    int outcount, MPI_Datatype datatype) {
  const auto forward = [&] {
    return PMPI_Unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype);
  };
  if (position == nullptr || *position < 0 || *position > insize) return forward();
  const char* in = static_cast<const char*>(inbuf) + *position;
  Plan plan;
  if (!external_needs_copies(datarep, outbuf, outcount, datatype, in, &plan)) return forward();
  if (insize - *position < plan.bytes) return raise_external(GDDT_ERR_TRUNCATE);
  std::vector<char> packed(static_cast<std::size_t>(plan.bytes));
  Status status = copy_with(plan.packed, packed.data(), in, packed.size());
  HostSpan span;
  bool copied = false;
  if (!is_error(status)) status = host_typed_span(plan, outcount, &span, &copied);
  if (is_error(status)) return raise_external(status);
  MPI_Aint read = 0;
  const int rc = PMPI_Unpack_external(datarep, packed.data(), static_cast<MPI_Aint>(packed.size()), &read,
                                      copied ? span.base() : outbuf, outcount, datatype);
  if (rc != MPI_SUCCESS) return rc;
  // The whole span goes back, gaps included: they hold what the copy found there.
  if (copied) status = protocol::copy_and_wait(plan.typed_first, span.bytes.data(), span.bytes.size(), plan.typed.device);
  if (is_error(status)) return raise_external(status);
  *position += read;
  return MPI_SUCCESS;
}

namespace {

// The window API's checks: no communicator, statuses returned.
Status plan_window(MPI_Datatype datatype, MPI_Count count, const void* typed, const void* packed,
                   MPI_Count offset, MPI_Count length, type::LayoutPtr* layout, memory::Kind* typed_kind,
                   memory::Kind* packed_kind) {
  if (count < 0) return GDDT_ERR_COUNT;
  GDDT_CHECK(resolve_datatype(datatype, layout));
  if (offset < 0 || length < 0 || offset + length > count * (*layout)->size) return GDDT_ERR_INVALID_ARG;
  if (length == 0) return GDDT_OK;
  const char* first = static_cast<const char*>(typed) + (*layout)->span_lb(count);
  if (reinterpret_cast<std::uintptr_t>(first) < kLowestValidAddress || packed == nullptr) return GDDT_ERR_BUFFER;
  GDDT_CHECK(classify_typed(datatype, first, typed_kind));
  return memory::classify(packed, packed_kind);
}

}  // namespace

namespace {

// MPI_Pack or MPI_Unpack of a datatype declaring an OpenCL buffer (gddt_type_opencl): the
// typed side is that buffer, the packed side must be host memory.
int opencl_pack_or_unpack(bool packing, const memory::OpenclBuffer& typed, int count, MPI_Datatype datatype,
                          const void* packed, int packed_size, int* position, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  if (position == nullptr || packed_size < 0 || *position < 0 || *position > packed_size)
    return raise(comm, GDDT_ERR_INVALID_ARG);
  if (count < 0) return raise(comm, GDDT_ERR_COUNT);
  type::LayoutPtr layout;
  Status status = resolve_datatype(datatype, &layout);
  if (is_error(status)) return raise(comm, status);
  const std::int64_t bytes = static_cast<std::int64_t>(count) * layout->size;
  if (bytes > packed_size - *position) return raise(comm, GDDT_ERR_TRUNCATE);
  if (bytes == 0) return MPI_SUCCESS;
  if (packed == nullptr) return raise(comm, GDDT_ERR_BUFFER);
  char* packed_at = const_cast<char*>(static_cast<const char*>(packed)) + *position;
  memory::Kind packed_kind;
  status = memory::classify(packed_at, &packed_kind);
  if (!is_error(status) && !packed_kind.host_accessible()) status = GDDT_ERR_UNSUPPORTED;
  if (is_error(status)) return raise(comm, status);
  const memory::Kind typed_kind{GDDT_MEMORY_OPENCL, -1};
  const pack::Window window{layout.get(), count, 0, bytes};
  const protocol::Way way = protocol::choose(typed_kind, packed_kind, bytes);
  status = packing ? protocol::pack(window, &typed, typed_kind, packed_at, packed_kind, nullptr, way)
                   : protocol::unpack(window, const_cast<memory::OpenclBuffer*>(&typed), typed_kind, packed_at,
                                      packed_kind, nullptr, way);
  if (is_error(status)) return raise(comm, status);
  *position += static_cast<int>(bytes);
  counters::add(packing ? counters::Counter::kPacks : counters::Counter::kUnpacks, 1);
  return MPI_SUCCESS;
}

// What MPI_Pack and MPI_Unpack share. `forward` hands the call to the library, `move` moves
// the bytes of a datatype gddt expresses, `bounce` those of one it does not.
template <typename Forward, typename Move, typename Bounce>
int pack_or_unpack(counters::Counter done, const void* typed, int count, MPI_Datatype datatype, const void* packed,
                   int packed_size, int* position, MPI_Comm comm, Forward&& forward, Move&& move, Bounce&& bounce) {
  if ((!gpu::available() && !host_packing_by_gddt()) || comm == MPI_COMM_NULL) return forward();
  memory::Kind packed_kind;
  if (!host_packing_by_gddt() && position != nullptr && on_library_memory(typed, datatype) &&
      memory::classify(static_cast<const char*>(packed) + *position, &packed_kind) == GDDT_OK &&
      !packed_kind.is_device())
    return forward();
  Plan plan;
  Status status = plan_transfer(typed, count, datatype, packed, packed_size, position, &plan);
  if (is_error(status)) return raise(comm, status);
  if (plan.bytes == 0) return MPI_SUCCESS;
  if (on_host_only(plan) && !(host_packing_by_gddt() && plan.expressible)) return forward();
  const protocol::Way way = protocol::choose(plan.typed, plan.packed, plan.bytes);
  status = plan.expressible ? move(plan, pack::Window{plan.layout.get(), count, 0, plan.bytes}, way) : bounce(plan);
  if (is_error(status)) return raise(comm, status);
  *position += static_cast<int>(plan.bytes);
  counters::add(done, 1);
  return MPI_SUCCESS;
}

}  // namespace

int pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
         int* position, MPI_Comm comm) {
  memory::OpenclBuffer opencl;
  if (opencl_memory(datatype, inbuf, &opencl))
    return opencl_pack_or_unpack(true, opencl, incount, datatype, outbuf, outsize, position, comm);
  char* out = static_cast<char*>(outbuf) + (position != nullptr ? *position : 0);
  return pack_or_unpack(
      counters::Counter::kPacks, inbuf, incount, datatype, outbuf, outsize, position, comm,
      [&] { return PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm); },
      [&](const Plan& plan, const pack::Window& window, protocol::Way way) {
        return protocol::pack(window, inbuf, plan.typed, out, plan.packed, nullptr, way);
      },
      [&](const Plan& plan) { return bounce_pack(plan, incount, datatype, out, comm); });
}

int unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
           MPI_Datatype datatype, MPI_Comm comm) {
  memory::OpenclBuffer opencl;
  if (opencl_memory(datatype, outbuf, &opencl))
    return opencl_pack_or_unpack(false, opencl, outcount, datatype, inbuf, insize, position, comm);
  const char* in = static_cast<const char*>(inbuf) + (position != nullptr ? *position : 0);
  return pack_or_unpack(
      counters::Counter::kUnpacks, outbuf, outcount, datatype, inbuf, insize, position, comm,
      [&] { return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm); },
      [&](const Plan& plan, const pack::Window& window, protocol::Way way) {
        return protocol::unpack(window, outbuf, plan.typed, in, plan.packed, nullptr, way);
      },
      [&](const Plan& plan) { return bounce_unpack(plan, in, outcount, datatype, comm); });
}

int pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  if ((!gpu::available() && !host_packing_by_gddt()) || comm == MPI_COMM_NULL)
    return PMPI_Pack_size(incount, datatype, comm, size);
  if (size == nullptr) return raise(comm, GDDT_ERR_INVALID_ARG);
  if (incount < 0) return raise(comm, GDDT_ERR_COUNT);
  type::LayoutPtr layout;
  Status status = resolve_datatype(datatype, &layout);
  if (is_error(status) && status != GDDT_ERR_UNSUPPORTED) return raise(comm, status);
  // The library's bound is kept: it is never below what gddt writes (count * type size), and
  // buffers sized by it must also hold data the library itself packs.
  return PMPI_Pack_size(incount, datatype, comm, size);
}

}  // namespace gddt::mpi

using namespace gddt;

extern "C" gddt_status_t gddt_pack_window(MPI_Datatype datatype, MPI_Count count, const void* typed,
                                          void* packed, MPI_Count offset, MPI_Count length,
                                          void* cuda_stream) {
  type::LayoutPtr layout;
  memory::Kind typed_kind, packed_kind;
  GDDT_CHECK(mpi::plan_window(datatype, count, typed, packed, offset, length, &layout, &typed_kind, &packed_kind));
  pack::Window window{layout.get(), count, offset, length};
  return protocol::pack(window, typed, typed_kind, packed, packed_kind, cuda_stream,
                        protocol::choose(typed_kind, packed_kind, length));
}

extern "C" gddt_status_t gddt_unpack_window(MPI_Datatype datatype, MPI_Count count, void* typed,
                                            const void* packed, MPI_Count offset, MPI_Count length,
                                            void* cuda_stream) {
  type::LayoutPtr layout;
  memory::Kind typed_kind, packed_kind;
  GDDT_CHECK(mpi::plan_window(datatype, count, typed, packed, offset, length, &layout, &typed_kind, &packed_kind));
  pack::Window window{layout.get(), count, offset, length};
  return protocol::unpack(window, typed, typed_kind, packed, packed_kind, cuda_stream,
                          protocol::choose(typed_kind, packed_kind, length));
}
