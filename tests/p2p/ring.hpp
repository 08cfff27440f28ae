// Most cases pass messages around the ring of ranks: each rank sends to its next neighbour and
// receives from its previous one, which works the same for 2, 3 and 4 ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "harness.hpp"
#include "message.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

// Seed of message `index` sent by rank `source` in the current case.
std::uint64_t message_seed(const Context& context, int source, int index);

// Data elements of `type` in `bytes`, as MPI_Get_count reports them.
int count_of(const TypeCase& type, std::int64_t bytes);

// Message `index` from this rank to the next one, and the same-numbered message from the
// previous rank. Both sides send the same number of bytes; the types may differ (same
// signature).
class RingMessage {
 public:
  RingMessage(const Context& context, const TypeCase& send_type, int send_count,
              const TypeCase& recv_type, int recv_count, int index);

  // Fills the send buffer again with a message numbered `index` (reused buffers).
  void renumber(int index);

  // Expects the previous rank's message in the receive buffer, `status` (unless null) to
  // describe it, and the send buffer untouched.
  void check(const MPI_Status* status, const std::string& what) const;

  std::int64_t bytes() const { return send.data_bytes(); }
  // The message's number, which is also its tag unless a case says otherwise.
  int index() const { return index_; }

  TypedBuffer send;
  TypedBuffer recv;

 private:
  const Context* context_;
  int index_;
};

}  // namespace gddt_test::p2p
