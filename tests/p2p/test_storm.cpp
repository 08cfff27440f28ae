// The storm: thousands of random messages between random pairs of ranks, with random sizes (up
// to 1 MiB), datatypes, tags, wildcards, send modes, receive styles and completion functions,
// every byte checked. The plan derives from the run's seed alone, so every rank computes the
// same plan and a failure names the seed that reproduces it.
//
// Messages go in rounds. Within a round each rank
//   1. posts its early receives (MPI_Irecv, or MPI_Recv_init + MPI_Start),
//   2. after a barrier (ready-mode sends need their receives posted), starts its non-blocking
//      sends,
//   3. runs its blocking sends and late receives (blocking receives, probes) in plan order,
//   4. completes everything outstanding with randomly chosen completion functions,
// and ends with a barrier, followed by a round of truncated messages (truncation_phase).
// Blocking operations all run in one global order, and everything
// they could wait for was posted before, so no round can deadlock. Wildcards are used only
// where they cannot match another message of the round, and messages sharing source,
// destination and tag keep sending order equal to receive posting order, so each receive
// knows which message it must get.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "mpi_quirks.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

constexpr int kDefaultMessages = 3000;
constexpr int kMessagesPerRound = 40;
constexpr std::int64_t kMaxMessageBytes = 1 << 20;
constexpr std::int64_t kMaxBufferedBytes = 256 * 1024;  // largest Bsend message
constexpr int kAttachedBytes = 8 << 20;                 // per rank
constexpr int kBufferedBytesPerRound = kAttachedBytes / 2;

enum class SendMode { kIsend, kIssend, kIbsend, kIrsend, kSendInit, kSend, kSsend, kBsend, kRsend };
enum class RecvMode { kIrecv, kRecvInit, kRecv, kProbeRecv, kIprobeRecv, kMprobeMrecv, kImprobe };

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

bool send_blocks(SendMode mode) { return mode >= SendMode::kSend; }
bool receive_posted_early(RecvMode mode) {
  return mode == RecvMode::kIrecv || mode == RecvMode::kRecvInit;
}

struct PlannedMessage {
  int id = 0;
  int round = 0;
  int source = 0;
  int dest = 0;
  int tag = 0;
  const TypeCase* send_type = nullptr;
  int send_count = 0;
  const TypeCase* recv_type = nullptr;
  int recv_count = 0;
  SendMode send_mode = SendMode::kIsend;
  RecvMode recv_mode = RecvMode::kIrecv;
  int recv_source = 0;  // what the receive (or probe) names: the source or MPI_ANY_SOURCE
  int recv_tag = 0;     // the tag or MPI_ANY_TAG

  std::int64_t bytes() const { return send_count * send_type->size; }

  std::string describe() const {
    const std::string source_text =
        recv_source == MPI_ANY_SOURCE ? "MPI_ANY_SOURCE" : std::to_string(recv_source);
    const std::string tag_text = recv_tag == MPI_ANY_TAG ? "MPI_ANY_TAG" : std::to_string(recv_tag);
    return "storm message " + std::to_string(id) + " (round " + std::to_string(round) + ", " +
           std::to_string(source) + "->" + std::to_string(dest) + ", tag " + std::to_string(tag) +
           ", " + std::to_string(bytes()) + " bytes: " + send_type->name + " x" +
           std::to_string(send_count) + " by " + send_mode_name(send_mode) + ", into " +
           recv_type->name + " x" + std::to_string(recv_count) + " by " +
           recv_mode_name(recv_mode) + " from " + source_text + " with tag " + tag_text + ")";
  }
};

class Planner {
 public:
  Planner(const Context& context, const TypeCatalog& types)
      : context_(context), types_(types), random_(mix_seed(context.seed, 0x706c616e)) {}

  std::vector<PlannedMessage> round(int round_number, int first_id, int count) {
    std::vector<PlannedMessage> messages;
    std::vector<std::int64_t> buffered_bytes(context_.size, 0);
    for (int i = 0; i < count; ++i) {
      messages.push_back(message(round_number, first_id + i, messages, &buffered_bytes));
    }
    choose_wildcards(&messages);
    return messages;
  }

 private:
  const TypeCase& pick_type() {
    const std::vector<TypeCase>& all = types_.all();
    return all[random_.between(0, static_cast<std::int64_t>(all.size()) - 1)];
  }

  // A receive type of the same signature that can hold `bytes` within its element limit.
  const TypeCase& pick_receive_type(const TypeCase& send_type, std::int64_t bytes) {
    std::vector<const TypeCase*> candidates;
    for (const TypeCase& type : types_.all()) {
      if (type.unit.name != send_type.unit.name) continue;
      if (type.max_count > 0 && type.max_count * type.size < bytes) continue;
      candidates.push_back(&type);
    }
    return *candidates[random_.between(0, static_cast<std::int64_t>(candidates.size()) - 1)];
  }

  PlannedMessage message(int round_number, int id, const std::vector<PlannedMessage>& earlier,
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

  // A wildcard is safe where no other message of the round could match it: MPI_ANY_SOURCE when
  // no other message to the destination has the tag, MPI_ANY_TAG when no other message goes
  // from the source to the destination, both when the message is the destination's only one.
  void choose_wildcards(std::vector<PlannedMessage>* messages) {
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

  const Context& context_;
  const TypeCatalog& types_;
  Random random_;
};

// One receive or send of this rank in the current round.
struct Operation {
  const PlannedMessage* message;
  std::unique_ptr<TypedBuffer> buffer;
  MPI_Request request = MPI_REQUEST_NULL;
  bool persistent = false;
  bool is_receive = false;
  bool completed = false;
  MPI_Status status{};
};

class StormRound {
 public:
  StormRound(const Context& context, const std::vector<PlannedMessage>& plan, Random* random)
      : context_(context), random_(random) {
    for (const PlannedMessage& m : plan) {
      if (m.dest == context.rank) {
        receives_.push_back(make_operation(m, true));
      } else if (m.source == context.rank) {
        sends_.push_back(make_operation(m, false));
      }
    }
  }

  void run() {
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

  std::int64_t bytes_received() const {
    std::int64_t bytes = 0;
    for (const Operation& receive : receives_) bytes += receive.message->bytes();
    return bytes;
  }

 private:
  Operation make_operation(const PlannedMessage& m, bool is_receive) {
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

  void post_receive(Operation* op) {
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

  void post_send(Operation* op) {
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

  // A late receive: blocking, or probed first.
  void receive_late(Operation* op) {
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

  void expect_probed(const MPI_Status& probed, const PlannedMessage& m, const char* how) {
    expect_status(probed, m.source, m.tag, m.recv_type->type, count_of(*m.recv_type, m.bytes()),
                  m.describe() + ", " + how);
  }

  void blocking_phase() {
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

  // Everything still outstanding, shuffled, in groups each finished by a random completion
  // function.
  void complete_everything() {
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

  void complete_group(const std::vector<Operation*>& group) {
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

  void check() {
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

  const Context& context_;
  Random* random_;
  std::vector<Operation> receives_;
  std::vector<Operation> sends_;
};

// Truncated messages, after each round: every rank sends one message to the next rank, which
// receives it into room for fewer elements, by MPI_Recv, MPI_Irecv + MPI_Wait or MPI_Irecv +
// MPI_Waitall, on a communicator that returns errors. The receive gets MPI_ERR_TRUNCATE and
// nothing outside its typemap changes; the send completes. Long messages too, which Open MPI
// 4.1's shared-memory single-copy path writes past a contiguous receive buffer: that library
// alone fails this phase for contiguous receive types.
void truncation_phase(const Context& context, const TypeCatalog& types, MPI_Comm comm, int round) {
  // Some libraries raise request errors on MPI_COMM_WORLD's handler (mpi_quirks.hpp).
  const WorldErrorCounter world_errors;
  Random plan(mix_seed(context.seed, 0x7472756e + static_cast<std::uint64_t>(round)));
  struct Truncated {
    const TypeCase* send_type;
    int send_count;
    const TypeCase* recv_type;
    int recv_count;
    int how;  // 0 MPI_Recv, 1 MPI_Irecv + MPI_Wait, 2 MPI_Irecv + MPI_Waitall
  };
  std::vector<Truncated> messages;
  for (int source = 0; source < context.size; ++source) {
    const std::vector<TypeCase>& all = types.all();
    const TypeCase& send_type = all[plan.between(0, static_cast<std::int64_t>(all.size()) - 1)];
    std::vector<const TypeCase*> receivers;
    for (const TypeCase& type : all)
      if (type.unit.name == send_type.unit.name) receivers.push_back(&type);
    const TypeCase& recv_type = *receivers[plan.between(0, static_cast<std::int64_t>(receivers.size()) - 1)];
    std::int64_t bytes = plan.between(2, std::int64_t{1} << plan.between(1, 20));
    std::int64_t send_count = std::max<std::int64_t>(1, bytes / send_type.size);
    if (send_type.max_count > 0) send_count = std::min<std::int64_t>(send_count, send_type.max_count);
    send_count = std::min(send_count, kMaxMessageBytes / send_type.size);
    // Room for at least one unit of the signature fewer than the message holds.
    const std::int64_t sent_bytes = send_count * send_type.size;
    std::int64_t recv_count = (sent_bytes - send_type.unit.bytes) / recv_type.size;
    recv_count = std::max<std::int64_t>(0, recv_count - plan.between(0, 2));
    if (recv_type.max_count > 0) recv_count = std::min<std::int64_t>(recv_count, recv_type.max_count);
    messages.push_back({&send_type, static_cast<int>(send_count), &recv_type, static_cast<int>(recv_count),
                        static_cast<int>(plan.between(0, 2))});
  }
  const Truncated& out = messages[static_cast<std::size_t>(context.rank)];
  const Truncated& in = messages[static_cast<std::size_t>(context.prev)];
  const std::uint64_t seed = mix_seed(context.seed, 0x74000000 + static_cast<std::uint64_t>(round));
  TypedBuffer sent(*out.send_type, out.send_count, context.memory, mix_seed(seed, context.rank));
  sent.fill(mix_seed(seed, 100 + context.rank));
  TypedBuffer received(*in.recv_type, in.recv_count, context.memory, mix_seed(seed, 200 + context.rank));
  const std::string what = "round " + std::to_string(round) + ": " + in.send_type->name + " x" +
                           std::to_string(in.send_count) + " from rank " + std::to_string(context.prev) +
                           " truncated into " + in.recv_type->name + " x" + std::to_string(in.recv_count);
  MPI_Request send_request;
  P2P_EXPECT_SUCCESS(MPI_Isend(sent.address(), out.send_count, out.send_type->type, context.next, 90, comm,
                               &send_request));
  int error = MPI_SUCCESS;
  MPI_Status status;
  MPI_Request request;
  switch (in.how) {
    case 0:
      error = MPI_Recv(received.address(), in.recv_count, in.recv_type->type, context.prev, 90, comm, &status);
      break;
    case 1:
      P2P_EXPECT_SUCCESS(
          MPI_Irecv(received.address(), in.recv_count, in.recv_type->type, context.prev, 90, comm, &request));
      error = MPI_Wait(&request, &status);
      break;
    default:
      P2P_EXPECT_SUCCESS(
          MPI_Irecv(received.address(), in.recv_count, in.recv_type->type, context.prev, 90, comm, &request));
      error = MPI_Waitall(1, &request, &status);
      expect(error == MPI_ERR_IN_STATUS || error == MPI_ERR_TRUNCATE,
             what + ": MPI_Waitall returned " + std::to_string(error));
      error = status.MPI_ERROR;
  }
  int error_class = MPI_SUCCESS;
  MPI_Error_class(error, &error_class);
  expect(error_class == MPI_ERR_TRUNCATE, what + ": error class " + std::to_string(error_class) +
                                              ", expected MPI_ERR_TRUNCATE");
  received.expect_unchanged_outside_typemap(what);
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
  sent.expect_unchanged(what + ", send buffer");
}

void storm(const Context& context, const TypeCatalog& types) {
  const int messages = context.messages > 0 ? static_cast<int>(context.messages) : kDefaultMessages;
  std::vector<char> attached(kAttachedBytes);
  MPI_Buffer_attach(attached.data(), kAttachedBytes);
  Planner planner(context, types);
  // Truncation errors return, on this communicator.
  MPI_Comm truncating;
  MPI_Comm_dup(MPI_COMM_WORLD, &truncating);
  MPI_Comm_set_errhandler(truncating, MPI_ERRORS_RETURN);
  Random local_random(
      mix_seed(context.seed, 0x6c6f63616c + static_cast<std::uint64_t>(context.rank)));
  std::int64_t bytes = 0;
  int round = 0;
  for (int first = 0; first < messages; first += kMessagesPerRound, ++round) {
    const std::vector<PlannedMessage> plan =
        planner.round(round, first, std::min(kMessagesPerRound, messages - first));
    StormRound storm_round(context, plan, &local_random);
    storm_round.run();
    bytes += storm_round.bytes_received();
    MPI_Barrier(MPI_COMM_WORLD);
    if (context.size > 1) truncation_phase(context, types, truncating, round);
  }
  MPI_Comm_free(&truncating);
  void* detached = nullptr;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (context.rank == 0) {
    std::printf("storm: %d messages in %d rounds, %.1f MiB checked\n", messages, round,
                bytes / 1048576.0);
  }
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_storm");
  const TypeCatalog types;
  suite.run("storm", [&types](const Context& context) { storm(context, types); });
  return suite.finish();
}
