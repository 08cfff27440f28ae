// The storm's plan (storm_plan.hpp).
#include "storm_plan.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "mpi_quirks.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

const char* send_mode_name(SendMode mode) {
  static const char* const names[] = {"MPI_Isend",  "MPI_Issend",    "MPI_Ibsend",
                                      "MPI_Irsend", "MPI_Send_init", "MPI_Send",
                                      "MPI_Ssend",  "MPI_Bsend",     "MPI_Rsend"};
  return names[static_cast<int>(mode)];
}

const char* recv_mode_name(RecvMode mode) {
  static const char* const names[] = {"MPI_Irecv",
                                      "MPI_Recv_init",
                                      "MPI_Recv",
                                      "MPI_Probe+MPI_Recv",
                                      "MPI_Iprobe+MPI_Recv",
                                      "MPI_Mprobe+MPI_Mrecv",
                                      "MPI_Improbe+MPI_Imrecv"};
  return names[static_cast<int>(mode)];
}


std::vector<PlannedMessage> Planner::round(int round_number, int first_id, int count) {
  std::vector<PlannedMessage> messages;
  std::vector<std::int64_t> buffered_bytes(context_.size, 0);
  for (int i = 0; i < count; ++i) {
    messages.push_back(message(round_number, first_id + i, messages, &buffered_bytes));
  }
  choose_wildcards(&messages);
  return messages;
}

const TypeCase& Planner::pick_type() {
  const std::vector<TypeCase>& all = types_.all();
  return all[random_.between(0, static_cast<std::int64_t>(all.size()) - 1)];
}

const TypeCase& Planner::pick_receive_type(const TypeCase& send_type, std::int64_t bytes) {
  std::vector<const TypeCase*> candidates;
  for (const TypeCase& type : types_.all()) {
    if (type.unit.name != send_type.unit.name) continue;
    if (type.max_count > 0 && type.max_count * type.size < bytes) continue;
    candidates.push_back(&type);
  }
  return *candidates[random_.between(0, static_cast<std::int64_t>(candidates.size()) - 1)];
}

PlannedMessage Planner::message(int round_number, int id, const std::vector<PlannedMessage>& earlier,
                       std::vector<std::int64_t>* buffered_bytes) {
  PlannedMessage m;
  m.id = id;
  m.round = round_number;
  m.source = static_cast<int>(random_.between(0, context_.size - 1));
  m.dest = static_cast<int>(random_.between(0, context_.size - 2));
  if (m.dest >= m.source) ++m.dest;
  // Mostly a handful of tags, so that messages share them; sometimes any tag.
  m.tag = static_cast<int>(random_.one_in(4) ? random_.between(0, 32767) : random_.between(0, 7));

  m.send_type = &pick_type();
  // Sizes spread evenly over orders of magnitude, from empty to 1 MiB.
  const std::int64_t target = random_.between(0, std::int64_t{1} << random_.between(0, 20));
  std::int64_t send_count = target / m.send_type->size;
  if (m.send_type->max_count > 0)
    send_count = std::min<std::int64_t>(send_count, m.send_type->max_count);
  send_count = std::min(send_count, kMaxMessageBytes / m.send_type->size);
  m.send_count = static_cast<int>(send_count);
  m.recv_type = &pick_receive_type(*m.send_type, m.bytes());
  std::int64_t recv_count = (m.bytes() + m.recv_type->size - 1) / m.recv_type->size;
  recv_count += random_.between(0, 2);  // a receive may be longer than the message
  if (m.recv_type->max_count > 0)
    recv_count = std::min<std::int64_t>(recv_count, m.recv_type->max_count);
  m.recv_count = static_cast<int>(recv_count);

  // Messages of one source, destination and tag must keep their order on both sides: they
  // take the phases of the first of them.
  bool blocking_send = random_.one_in(3);
  bool early_receive = !random_.one_in(3);
  for (const PlannedMessage& other : earlier) {
    if (other.source == m.source && other.dest == m.dest && other.tag == m.tag) {
      blocking_send = send_blocks(other.send_mode);
      early_receive = receive_posted_early(other.recv_mode);
      break;
    }
  }
  if (early_receive) {
    m.recv_mode = random_.one_in(5) ? RecvMode::kRecvInit : RecvMode::kIrecv;
  } else {
    static const RecvMode late[] = {RecvMode::kRecv, RecvMode::kProbeRecv, RecvMode::kIprobeRecv,
                                    RecvMode::kMprobeMrecv, RecvMode::kImprobe};
    m.recv_mode = late[random_.between(0, 4)];
  }
  // Standard, synchronous, buffered, or ready (only when the receive is posted early).
  const int kind = static_cast<int>(random_.between(0, early_receive ? 4 : 3));
  if (blocking_send) {
    static const SendMode modes[] = {SendMode::kSend, SendMode::kSsend, SendMode::kBsend,
                                     SendMode::kSend, SendMode::kRsend};
    m.send_mode = modes[kind];
  } else {
    static const SendMode modes[] = {SendMode::kIsend, SendMode::kIssend, SendMode::kIbsend,
                                     SendMode::kSendInit, SendMode::kIrsend};
    m.send_mode = modes[kind];
  }
  if (m.send_mode == SendMode::kBsend || m.send_mode == SendMode::kIbsend) {
    int packed = 0;
    MPI_Pack_size(m.send_count, m.send_type->type, MPI_COMM_WORLD, &packed);
    std::int64_t& used = (*buffered_bytes)[m.source];
    // A library that buffers as MPI_PACKED and cannot receive that into a mixed struct
    // fails its own MPI_Bsend there (see mpi_quirks.hpp).
    const bool library_fails =
        mpi_quirks().packed_into_mixed_struct && m.recv_type->unit.name != "int";
    if (library_fails || m.bytes() > kMaxBufferedBytes ||
        used + packed + MPI_BSEND_OVERHEAD > kBufferedBytesPerRound) {
      m.send_mode = blocking_send ? SendMode::kSend : SendMode::kIsend;
    } else {
      used += packed + MPI_BSEND_OVERHEAD;
    }
  }
  m.recv_source = m.source;
  m.recv_tag = m.tag;
  return m;
}

void Planner::choose_wildcards(std::vector<PlannedMessage>* messages) {
  for (PlannedMessage& m : *messages) {
    bool tag_unique = true, pair_unique = true, dest_unique = true;
    for (const PlannedMessage& other : *messages) {
      if (other.id == m.id || other.dest != m.dest) continue;
      dest_unique = false;
      if (other.tag == m.tag) tag_unique = false;
      if (other.source == m.source) pair_unique = false;
    }
    const bool any_source = random_.one_in(2);
    const bool any_tag = random_.one_in(2);
    if (any_source && any_tag && dest_unique) {
      m.recv_source = MPI_ANY_SOURCE;
      m.recv_tag = MPI_ANY_TAG;
    } else if (any_source && tag_unique) {
      m.recv_source = MPI_ANY_SOURCE;
    } else if (any_tag && pair_unique) {
      m.recv_tag = MPI_ANY_TAG;
    }
  }
}

}  // namespace gddt_test::p2p
