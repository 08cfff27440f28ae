#include "ring.hpp"

namespace gddt_test::p2p {

std::uint64_t message_seed(const Context& context, int source, int index) {
  return mix_seed(mix_seed(context.seed, static_cast<std::uint64_t>(source)),
                  static_cast<std::uint64_t>(index));
}

int count_of(const TypeCase& type, std::int64_t bytes) {
  return bytes % type.size == 0 ? static_cast<int>(bytes / type.size) : MPI_UNDEFINED;
}

RingMessage::RingMessage(const Context& context, const TypeCase& send_type, int send_count,
                         const TypeCase& recv_type, int recv_count, int index)
    : send(send_type, send_count, context.memory, message_seed(context, context.rank, -index)),
      recv(recv_type, recv_count, context.memory, message_seed(context, context.rank, ~index)),
      context_(&context),
      index_(index) {
  send.fill(message_seed(context, context.rank, index));
}

void RingMessage::renumber(int index) {
  index_ = index;
  send.fill(message_seed(*context_, context_->rank, index));
}

void RingMessage::check(const MPI_Status* status, const std::string& what) const {
  const std::string label =
      what + ", message " + std::to_string(index_) + " from rank " + std::to_string(context_->prev);
  recv.expect_message(message_seed(*context_, context_->prev, index_), bytes(), label);
  if (status != nullptr) {
    expect_status(*status, context_->prev, index_, recv.type().type, count_of(recv.type(), bytes()),
                  label);
  }
  send.expect_unchanged(what + ", send buffer of message " + std::to_string(index_));
}

}  // namespace gddt_test::p2p
