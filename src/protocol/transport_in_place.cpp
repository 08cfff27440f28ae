// The transports that hand the library the user's own memory: forward (host memory, the user's
// arguments unchanged) and device-bytes (contiguous device data in place, as MPI_PACKED).
#include "protocol/route.hpp"

namespace gddt::protocol {

namespace {

bool forward_serves(const Choice& choice) {
  return !choice.device() && !choice.opencl() && (!host_through_gddt() || (kHostSpanForStagedSends && choice.send()));
}

Status hand_unchanged(const Message&, const Call&, Operation*, Side*) { return GDDT_OK; }

// A receive the library writes itself has nothing left to move (a watched one may still resolve a
// marker of the peer protocol first: finish in requests.cpp).
Status empty_nothing(Operation&, std::int64_t, gpu::Stream*) { return GDDT_OK; }

// Never the user's datatype: a CUDA-aware library packs derived types with the CPU, even ones gddt
// finds contiguous (Open MPI 5 + UCX crashed on such structs and resized types).
bool device_bytes_serve(const Choice& choice) {
  return choice.device() && choice.forced == Route::kForward && choice.cuda_aware && choice.message.contiguous() &&
         !choice.call.cpu_copied && !choice.markers_on_host;
}

Status hand_bytes(const Message& message, const Call&, Operation*, Side* side) {
  side->buffer = message.first_byte();
  side->count = static_cast<int>(message.bytes());
  side->datatype = MPI_PACKED;
  return GDDT_OK;
}

}  // namespace

const Transport& forward_transport() {
  static constexpr Transport row = [] {
    Transport t = transport_row(Route::kForward, "forward", counters::Counter::kForwardSides, forward_serves);
    t.hand = hand_unchanged;
    t.empty = empty_nothing;
    return t;
  }();
  return row;
}

const Transport& device_bytes_transport() {
  static constexpr Transport row = [] {
    Transport t =
        transport_row(Route::kDeviceBytes, "device-bytes", counters::Counter::kDeviceBytesSides, device_bytes_serve);
    t.hand = hand_bytes;
    t.empty = empty_nothing;
    return t;
  }();
  return row;
}

}  // namespace gddt::protocol
