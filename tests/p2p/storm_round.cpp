// One round of the storm on this rank (storm_round.hpp).
#include "storm_round.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "ring.hpp"
#include "storm_plan.hpp"

namespace gddt_test::p2p {

StormRound::StormRound(const Context& context, const std::vector<PlannedMessage>& plan, Random* random)
    : context_(context), random_(random) {
  for (const PlannedMessage& m : plan) {
    if (m.dest == context.rank) {
      receives_.push_back(make_operation(m, true));
    } else if (m.source == context.rank) {
      sends_.push_back(make_operation(m, false));
    }
  }
}

void StormRound::run() {
  for (Operation& receive : receives_) {
    if (receive_posted_early(receive.message->recv_mode)) post_receive(&receive);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (Operation& send : sends_) {
    if (!send_blocks(send.message->send_mode)) post_send(&send);
  }
  blocking_phase();
  complete_everything();
  check();
}

std::int64_t StormRound::bytes_received() const {
  std::int64_t bytes = 0;
  for (const Operation& receive : receives_) bytes += receive.message->bytes();
  return bytes;
}

Operation StormRound::make_operation(const PlannedMessage& m, bool is_receive) {
  Operation operation;
  operation.message = &m;
  operation.is_receive = is_receive;
  const std::uint64_t seed = mix_seed(context_.seed, static_cast<std::uint64_t>(m.id));
  if (is_receive) {
    operation.buffer = std::make_unique<TypedBuffer>(*m.recv_type, m.recv_count, context_.memory,
                                                     mix_seed(seed, 1));
  } else {
    operation.buffer = std::make_unique<TypedBuffer>(*m.send_type, m.send_count, context_.memory,
                                                     mix_seed(seed, 2));
    operation.buffer->fill(seed);
  }
  return operation;
}

void StormRound::post_receive(Operation* op) {
  const PlannedMessage& m = *op->message;
  if (m.recv_mode == RecvMode::kRecvInit) {
    op->persistent = true;
    P2P_EXPECT_SUCCESS(MPI_Recv_init(op->buffer->address(), m.recv_count, m.recv_type->type,
                                     m.recv_source, m.recv_tag, MPI_COMM_WORLD, &op->request));
    P2P_EXPECT_SUCCESS(MPI_Start(&op->request));
  } else {
    P2P_EXPECT_SUCCESS(MPI_Irecv(op->buffer->address(), m.recv_count, m.recv_type->type,
                                 m.recv_source, m.recv_tag, MPI_COMM_WORLD, &op->request));
  }
}

void StormRound::post_send(Operation* op) {
  const PlannedMessage& m = *op->message;
  void* address = op->buffer->address();
  const MPI_Datatype type = m.send_type->type;
  switch (m.send_mode) {
    case SendMode::kIsend:
      P2P_EXPECT_SUCCESS(
          MPI_Isend(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD, &op->request));
      break;
    case SendMode::kIssend:
      P2P_EXPECT_SUCCESS(
          MPI_Issend(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD, &op->request));
      break;
    case SendMode::kIbsend:
      P2P_EXPECT_SUCCESS(
          MPI_Ibsend(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD, &op->request));
      break;
    case SendMode::kIrsend:
      P2P_EXPECT_SUCCESS(
          MPI_Irsend(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD, &op->request));
      break;
    case SendMode::kSendInit:
      op->persistent = true;
      P2P_EXPECT_SUCCESS(MPI_Send_init(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD,
                                       &op->request));
      P2P_EXPECT_SUCCESS(MPI_Start(&op->request));
      break;
    case SendMode::kSend:
      P2P_EXPECT_SUCCESS(MPI_Send(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD));
      op->completed = true;
      break;
    case SendMode::kSsend:
      P2P_EXPECT_SUCCESS(MPI_Ssend(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD));
      op->completed = true;
      break;
    case SendMode::kBsend:
      P2P_EXPECT_SUCCESS(MPI_Bsend(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD));
      op->completed = true;
      break;
    case SendMode::kRsend:
      P2P_EXPECT_SUCCESS(MPI_Rsend(address, m.send_count, type, m.dest, m.tag, MPI_COMM_WORLD));
      op->completed = true;
      break;
  }
}

void StormRound::receive_late(Operation* op) {
  const PlannedMessage& m = *op->message;
  void* address = op->buffer->address();
  const MPI_Datatype type = m.recv_type->type;
  MPI_Status probed;
  MPI_Message handle;
  switch (m.recv_mode) {
    case RecvMode::kRecv:
      P2P_EXPECT_SUCCESS(MPI_Recv(address, m.recv_count, type, m.recv_source, m.recv_tag,
                                  MPI_COMM_WORLD, &op->status));
      op->completed = true;
      return;
    case RecvMode::kProbeRecv:
      P2P_EXPECT_SUCCESS(MPI_Probe(m.recv_source, m.recv_tag, MPI_COMM_WORLD, &probed));
      expect_probed(probed, m, "MPI_Probe");
      break;
    case RecvMode::kIprobeRecv:
      poll_until(
          [&] {
            int found = 0;
            P2P_EXPECT_SUCCESS(
                MPI_Iprobe(m.recv_source, m.recv_tag, MPI_COMM_WORLD, &found, &probed));
            return found != 0;
          },
          m.describe() + ", MPI_Iprobe loop");
      expect_probed(probed, m, "MPI_Iprobe");
      break;
    case RecvMode::kMprobeMrecv:
      P2P_EXPECT_SUCCESS(MPI_Mprobe(m.recv_source, m.recv_tag, MPI_COMM_WORLD, &handle, &probed));
      expect_probed(probed, m, "MPI_Mprobe");
      P2P_EXPECT_SUCCESS(MPI_Mrecv(address, m.recv_count, type, &handle, &op->status));
      op->completed = true;
      return;
    case RecvMode::kImprobe:
      poll_until(
          [&] {
            int found = 0;
            P2P_EXPECT_SUCCESS(
                MPI_Improbe(m.recv_source, m.recv_tag, MPI_COMM_WORLD, &found, &handle, &probed));
            return found != 0;
          },
          m.describe() + ", MPI_Improbe loop");
      expect_probed(probed, m, "MPI_Improbe");
      P2P_EXPECT_SUCCESS(MPI_Imrecv(address, m.recv_count, type, &handle, &op->request));
      return;
    default:
      return;
  }
  // Probed: receive exactly what the probe found.
  P2P_EXPECT_SUCCESS(MPI_Recv(address, m.recv_count, type, probed.MPI_SOURCE, probed.MPI_TAG,
                              MPI_COMM_WORLD, &op->status));
  op->completed = true;
}

void StormRound::expect_probed(const MPI_Status& probed, const PlannedMessage& m, const char* how) {
  expect_status(probed, m.source, m.tag, m.recv_type->type, count_of(*m.recv_type, m.bytes()),
                m.describe() + ", " + how);
}

void StormRound::blocking_phase() {
  // Sends and receives of this rank merged in plan order.
  std::vector<Operation*> ordered;
  for (Operation& op : sends_) {
    if (send_blocks(op.message->send_mode)) ordered.push_back(&op);
  }
  for (Operation& op : receives_) {
    if (!receive_posted_early(op.message->recv_mode)) ordered.push_back(&op);
  }
  std::sort(ordered.begin(), ordered.end(), [](const Operation* a, const Operation* b) {
    return a->message->id < b->message->id;
  });
  for (Operation* op : ordered) {
    if (op->is_receive) {
      receive_late(op);
    } else {
      post_send(op);
    }
  }
}

void StormRound::complete_everything() {
  std::vector<Operation*> pending;
  for (std::vector<Operation>* list : {&receives_, &sends_}) {
    for (Operation& op : *list) {
      if (!op.completed) pending.push_back(&op);
    }
  }
  for (std::size_t i = pending.size(); i > 1; --i) {
    std::swap(pending[i - 1], pending[random_->between(0, static_cast<std::int64_t>(i) - 1)]);
  }
  std::size_t start = 0;
  while (start < pending.size()) {
    const std::size_t size = static_cast<std::size_t>(
        random_->between(1, static_cast<std::int64_t>(pending.size() - start)));
    complete_group(
        std::vector<Operation*>(pending.begin() + start, pending.begin() + start + size));
    start += size;
  }
  for (Operation* op : pending) {
    if (op->persistent) P2P_EXPECT_SUCCESS(MPI_Request_free(&op->request));
  }
}

void StormRound::complete_group(const std::vector<Operation*>& group) {
  const int count = static_cast<int>(group.size());
  std::vector<MPI_Request> requests(count);
  for (int i = 0; i < count; ++i) requests[i] = group[i]->request;
  std::vector<MPI_Status> statuses(count);
  std::vector<int> indices(count);
  auto finished = [&](int index, const MPI_Status& status) {
    Operation* op = group[index];
    if (op->completed) fail(op->message->describe() + ": completed twice");
    op->completed = true;
    op->status = status;
    // Persistent requests stay allocated (inactive) for MPI_Request_free.
    op->request = requests[index];
  };
  auto all_finished = [&] {
    return std::all_of(group.begin(), group.end(),
                       [](const Operation* op) { return op->completed; });
  };
  const char* how = "";
  switch (random_->between(0, 7)) {
    case 0:
      how = "MPI_Waitall";
      P2P_EXPECT_SUCCESS(MPI_Waitall(count, requests.data(), statuses.data()));
      for (int i = 0; i < count; ++i) finished(i, statuses[i]);
      break;
    case 1:
      how = "MPI_Waitany";
      for (int n = 0; n < count; ++n) {
        int index = MPI_UNDEFINED;
        MPI_Status status;
        P2P_EXPECT_SUCCESS(MPI_Waitany(count, requests.data(), &index, &status));
        if (index < 0 || index >= count) break;
        finished(index, status);
      }
      break;
    case 2:
      how = "MPI_Waitsome";
      while (!all_finished()) {
        int done = 0;
        P2P_EXPECT_SUCCESS(
            MPI_Waitsome(count, requests.data(), &done, indices.data(), statuses.data()));
        if (done == MPI_UNDEFINED) break;
        for (int i = 0; i < done; ++i) finished(indices[i], statuses[i]);
      }
      break;
    case 3:
      how = "MPI_Wait";
      for (int i = 0; i < count; ++i) {
        MPI_Status status;
        P2P_EXPECT_SUCCESS(MPI_Wait(&requests[i], &status));
        finished(i, status);
      }
      break;
    case 4:
      how = "MPI_Testall";
      poll_until(
          [&] {
            int done = 0;
            P2P_EXPECT_SUCCESS(MPI_Testall(count, requests.data(), &done, statuses.data()));
            if (done) {
              for (int i = 0; i < count; ++i) finished(i, statuses[i]);
            }
            return done != 0;
          },
          "storm MPI_Testall loop");
      break;
    case 5:
      how = "MPI_Testany";
      poll_until(
          [&] {
            int index = MPI_UNDEFINED, done = 0;
            MPI_Status status;
            P2P_EXPECT_SUCCESS(MPI_Testany(count, requests.data(), &index, &done, &status));
            if (done && index == MPI_UNDEFINED) return true;
            if (done) finished(index, status);
            return all_finished();
          },
          "storm MPI_Testany loop");
      break;
    case 6:
      how = "MPI_Testsome";
      poll_until(
          [&] {
            int done = 0;
            P2P_EXPECT_SUCCESS(
                MPI_Testsome(count, requests.data(), &done, indices.data(), statuses.data()));
            if (done == MPI_UNDEFINED) return true;
            for (int i = 0; i < done; ++i) finished(indices[i], statuses[i]);
            return all_finished();
          },
          "storm MPI_Testsome loop");
      break;
    default:
      how = "MPI_Test";
      poll_until(
          [&] {
            for (int i = 0; i < count; ++i) {
              if (group[i]->completed) continue;
              int done = 0;
              MPI_Status status;
              P2P_EXPECT_SUCCESS(MPI_Test(&requests[i], &done, &status));
              if (done) finished(i, status);
            }
            return all_finished();
          },
          "storm MPI_Test loop");
  }
  for (const Operation* op : group) {
    expect(op->completed, op->message->describe() + ": not completed by " + how);
  }
}

void StormRound::check() {
  for (const Operation& op : receives_) {
    const PlannedMessage& m = *op.message;
    const std::string what = m.describe();
    op.buffer->expect_message(mix_seed(context_.seed, static_cast<std::uint64_t>(m.id)),
                              m.bytes(), what);
    expect_status(op.status, m.source, m.tag, m.recv_type->type,
                  count_of(*m.recv_type, m.bytes()), what);
    int elements = -1;
    P2P_EXPECT_SUCCESS(MPI_Get_elements(&op.status, m.recv_type->type, &elements));
    const std::int64_t expected =
        m.bytes() / m.recv_type->unit.bytes * m.recv_type->unit.basic_elements;
    expect(elements == expected, what + ": MPI_Get_elements " + std::to_string(elements) +
                                     ", expected " + std::to_string(expected));
  }
  for (const Operation& op : sends_) {
    op.buffer->expect_unchanged(op.message->describe() + ", send buffer");
  }
}

}  // namespace gddt_test::p2p
