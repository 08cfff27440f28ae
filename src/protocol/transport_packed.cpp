// The transports whose library moves packed bytes that gddt packs and unpacks: device-staged
// (device scratch, for a CUDA-aware library) and host-staged (host staging; the last row, it serves
// every side no other row takes).
#include <algorithm>
#include <climits>
#include <mutex>
#include <unordered_map>

#include "protocol/operation.hpp"
#include "protocol/transfer.hpp"
#include "protocol/route.hpp"

namespace gddt::protocol {

namespace {

namespace holed {

std::mutex mutex;
std::unordered_map<int, MPI_Datatype>& types() {
  static auto* map = new std::unordered_map<int, MPI_Datatype>;
  return *map;
}
// Types of so many sizes are kept; beyond that all are freed and made anew (the library keeps a
// type freed while a receive uses it until the receive completes).
constexpr std::size_t kMostKept = 256;

// With the mutex held.
void free_all() {
  for (auto& entry : types()) PMPI_Type_free(&entry.second);
  types().clear();
}

// The datatype of `bytes` bytes of holed receive staging (MPI_DATATYPE_NULL if the library refuses
// to make one).
MPI_Datatype of(int bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto found = types().find(bytes);
  if (found != types().end()) return found->second;
  if (types().size() >= kMostKept) free_all();
  const int lengths[] = {bytes, 1};
  const MPI_Aint displacements[] = {0, static_cast<MPI_Aint>(bytes) + 1};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  if (PMPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &type) != MPI_SUCCESS ||
      PMPI_Type_commit(&type) != MPI_SUCCESS)
    return MPI_DATATYPE_NULL;
  types()[bytes] = type;
  return type;
}

}  // namespace holed

bool device_staged_serves(const Choice& choice) {
  if (!choice.device() || choice.call.cpu_copied || choice.markers_on_host ||
      (kHostSpanForExchangeReceives && choice.call.exchange_receive))
    return false;
  return choice.forced == Route::kDeviceStaged || (choice.forced == Route::kForward && choice.cuda_aware && !choice.small());
}

bool holed_receive(const Message& message, const Call& call) {
  return kHoledReceiveStaging && call.kind == Operation::Kind::kReceive && message.bytes() + kHoleBytes <= INT_MAX;
}

std::int64_t packed_staging_bytes(const Message& message, const Call& call) {
  // An empty receive is described as one of a byte: a block of no bytes would leave a contiguous
  // byte after the hole, which the library copies into as it would into any.
  return holed_receive(message, call) ? std::max<std::int64_t>(message.bytes(), 1) + kHoleBytes : message.bytes();
}

Status hand_packed(const Message& message, const Call& call, Operation* operation, Side* side) {
  side->buffer = operation->staging.data();
  side->count = static_cast<int>(message.bytes());
  side->datatype = MPI_PACKED;
  if (!holed_receive(message, call)) return GDDT_OK;
  const int holed_bytes = static_cast<int>(std::max<std::int64_t>(message.bytes(), 1));
  side->count = 1;
  side->datatype = holed::of(holed_bytes);
  return side->datatype == MPI_DATATYPE_NULL ? GDDT_ERR_MPI : GDDT_OK;
}

Status fill_packed(Operation& operation, gpu::Stream* queued_on) {
  if (queued_on == nullptr) return pack_message(operation.message, operation.staging, meanwhile_for(operation));
  return queue_pack(operation.message, operation.staging, queued_on, meanwhile_for(operation));
}

Status empty_packed(Operation& operation, std::int64_t received, gpu::Stream* queued_on) {
  gpu::Stream stream = nullptr;
  if (queued_on != nullptr) GDDT_CHECK(message_stream(operation.message, operation.staging, &stream));
  GDDT_CHECK(unpack_message(operation.message, operation.staging, received, stream, meanwhile_for(operation),
                            operation.ordering));
  if (queued_on != nullptr) *queued_on = stream;
  return GDDT_OK;
}

// Device scratch for a CUDA-aware library is packed and unpacked by kernels launched for the
// message, never by the resident kernel: through the CUDA-aware bundle (UCX) on two H100s, 16 to
// 64 KiB ping-pongs took 1.2-1.65x as long when the resident kernel moved them, in each of eight
// type and size pairs (performance.md, section 4). A caller that waits gets the work queued as for
// one that does not, then waited for.
Status wait_if_queued(Operation& operation, gpu::Stream stream) {
  return stream == nullptr ? GDDT_OK : gpu::stream_wait(stream, meanwhile_for(operation));
}

Status fill_launched(Operation& operation, gpu::Stream* queued_on) {
  if (queued_on != nullptr) return fill_packed(operation, queued_on);
  gpu::Stream stream = nullptr;
  GDDT_CHECK(fill_packed(operation, &stream));
  return wait_if_queued(operation, stream);
}

Status empty_launched(Operation& operation, std::int64_t received, gpu::Stream* queued_on) {
  if (queued_on != nullptr) return empty_packed(operation, received, queued_on);
  gpu::Stream stream = nullptr;
  GDDT_CHECK(empty_packed(operation, received, &stream));
  return wait_if_queued(operation, stream);
}

bool always(const Choice&) { return true; }

void release_holed_types() {
  std::lock_guard<std::mutex> lock(holed::mutex);
  holed::free_all();
}

// The two rows differ in their test and where their staging is.
constexpr Transport packed_row(Route route, const char* name, counters::Counter sides, bool (*serves)(const Choice&),
                               bool device_staging) {
  Transport t = transport_row(route, name, sides, serves);
  t.staging_bytes = packed_staging_bytes;
  t.device_staging = device_staging;
  t.hand = hand_packed;
  t.fill = device_staging ? fill_launched : fill_packed;
  t.empty = device_staging ? empty_launched : empty_packed;
  t.packed = true;
  t.release = release_holed_types;
  return t;
}

}  // namespace

const Transport& device_staged_transport() {
  static constexpr Transport row = packed_row(Route::kDeviceStaged, "device-staged",
                                              counters::Counter::kDeviceStagedSides, device_staged_serves, true);
  return row;
}

const Transport& host_staged_transport() {
  static constexpr Transport row =
      packed_row(Route::kHostStaged, "host-staged", counters::Counter::kHostStagedSides, always, false);
  return row;
}

}  // namespace gddt::protocol
