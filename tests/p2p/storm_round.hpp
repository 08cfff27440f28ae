// One round of the storm on this rank: its receives and sends of the plan, posted, completed by
// random completion functions, and checked.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "storm_plan.hpp"

namespace gddt_test::p2p {

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
  StormRound(const Context& context, const std::vector<PlannedMessage>& plan, Random* random);

  void run();
  std::int64_t bytes_received() const;

 private:
  Operation make_operation(const PlannedMessage& m, bool is_receive);
  void post_receive(Operation* op);
  void post_send(Operation* op);

  // A late receive: blocking, or probed first.
  void receive_late(Operation* op);

  void expect_probed(const MPI_Status& probed, const PlannedMessage& m, const char* how);
  void blocking_phase();

  // Everything still outstanding, shuffled, in groups each finished by a random completion
  // function.
  void complete_everything();
  void complete_group(const std::vector<Operation*>& group);
  void check();

  const Context& context_;
  Random* random_;
  std::vector<Operation> receives_;
  std::vector<Operation> sends_;
};

}  // namespace gddt_test::p2p
