// The host-span transport: the typed span copied to host staging, gaps included, and the library
// packs or unpacks the user's own datatype there (MPICH 4.0's quirks: route.hpp).
#include "protocol/operation.hpp"
#include "protocol/route.hpp"
#include "protocol/transfer.hpp"

namespace gddt::protocol {

namespace {

bool host_span_serves(const Choice& choice) {
  if (choice.opencl()) return false;
  return (kHostSpanForStagedSends && choice.send()) || (kHostSpanForExchangeReceives && choice.call.exchange_receive);
}

std::int64_t span_staging_bytes(const Message& message, const Call&) { return message.span_bytes(); }

Status hand_span(const Message& message, const Call& call, Operation* operation, Side* side) {
  side->buffer = static_cast<char*>(operation->staging.data()) - message.span_lb();
  // The library writes the typemap of a receive there; the gaps go back as they were.
  return call.kind == Operation::Kind::kReceive ? copy_span(message, operation->staging) : GDDT_OK;
}

// The copies are done on return: queue_outgoing and empty_incoming leave *queued_on null.
Status fill_span(Operation& operation, gpu::Stream*) { return copy_span(operation.message, operation.staging); }

Status empty_span(Operation& operation, std::int64_t, gpu::Stream*) {
  return copy_span_back(operation.message, operation.staging);
}

}  // namespace

const Transport& host_span_transport() {
  static constexpr Transport row = [] {
    Transport t = transport_row(Route::kHostSpan, "host-span", counters::Counter::kHostSpanSides, host_span_serves);
    t.staging_bytes = span_staging_bytes;
    t.hand = hand_span;
    t.fill = fill_span;
    t.empty = empty_span;
    return t;
  }();
  return row;
}

}  // namespace gddt::protocol
