// The storm's plan: every message of a round, drawn from the run's seed alone, so that every rank
// draws the same ones.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

constexpr std::int64_t kMaxMessageBytes = 1 << 20;
constexpr std::int64_t kMaxBufferedBytes = 256 * 1024;  // largest Bsend message
constexpr int kAttachedBytes = 8 << 20;                 // per rank
constexpr int kBufferedBytesPerRound = kAttachedBytes / 2;

enum class SendMode { kIsend, kIssend, kIbsend, kIrsend, kSendInit, kSend, kSsend, kBsend, kRsend };
enum class RecvMode { kIrecv, kRecvInit, kRecv, kProbeRecv, kIprobeRecv, kMprobeMrecv, kImprobe };

const char* send_mode_name(SendMode mode);
const char* recv_mode_name(RecvMode mode);

inline bool send_blocks(SendMode mode) { return mode >= SendMode::kSend; }
inline bool receive_posted_early(RecvMode mode) {
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

  std::vector<PlannedMessage> round(int round_number, int first_id, int count);

 private:
  const TypeCase& pick_type();

  // A receive type of the same signature that can hold `bytes` within its element limit.
  const TypeCase& pick_receive_type(const TypeCase& send_type, std::int64_t bytes);

  PlannedMessage message(int round_number, int id, const std::vector<PlannedMessage>& earlier,
                         std::vector<std::int64_t>* buffered_bytes);

  // A wildcard is safe where no other message of the round could match it: MPI_ANY_SOURCE when
  // no other message to the destination has the tag, MPI_ANY_TAG when no other message goes
  // from the source to the destination, both when the message is the destination's only one.
  void choose_wildcards(std::vector<PlannedMessage>* messages);

  const Context& context_;
  const TypeCatalog& types_;
  Random random_;
};

}  // namespace gddt_test::p2p
