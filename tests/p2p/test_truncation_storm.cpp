// The truncation storm: every receive is a wildcard (MPI_ANY_SOURCE, MPI_ANY_TAG) with a
// buffer of random size, so any message may meet any receive and some are longer than the
// buffer that takes them (MPI_ERR_TRUNCATE). In each round a rank
//   1. posts wildcard receives for more messages than the first phase sends it,
//   2. after a barrier, starts its first-phase sends (up to 64 KiB),
//   3. starts its second-phase sends (256 KiB to 1 MiB), which meet the receives of step 1 left
//      over as well as those of step 4,
//   4. receives the rest through MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv or
//      MPI_Probe + MPI_Recv of the probed source and tag, all wildcards,
//   5. completes everything with MPI_Waitall, MPI_Waitsome or MPI_Testsome.
// A message is known by its source and tag; each one must arrive exactly once (checked over all
// ranks at the end of each round), whole into a buffer that holds it, or as MPI_ERR_TRUNCATE into
// one that does not, with no byte written outside the receive's typemap. Sends are all
// nonblocking, so no round can deadlock; a request stuck for two minutes aborts the job.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "mpi_quirks.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

constexpr int kDefaultRounds = 6;
constexpr int kFirstPhase = 6;  // messages a rank sends in each phase of a round
constexpr int kSecondPhase = 3;
constexpr std::int64_t kSmallest = 4, kLargestFirst = 64 * 1024;
constexpr std::int64_t kSmallestSecond = 256 * 1024, kLargestSecond = 1024 * 1024;
constexpr int kTagsPerRound = 1000;

struct Planned {
  int source = 0, dest = 0, tag = 0;
  const TypeCase* type = nullptr;
  int count = 0;
  bool second = false;
  std::int64_t bytes() const { return count * type->size; }
};

// Types whose signature is a run of ints, so any of them receives any message.
std::vector<const TypeCase*> int_types(const TypeCatalog& types) {
  std::vector<const TypeCase*> out;
  for (const TypeCase& type : types.all())
    if (type.unit.name == types.named("int").unit.name) out.push_back(&type);
  return out;
}

int count_for(const TypeCase& type, std::int64_t bytes) {
  std::int64_t count = std::max<std::int64_t>(1, bytes / type.size);
  if (type.max_count > 0) count = std::min<std::int64_t>(count, type.max_count);
  return static_cast<int>(count);
}

// The round's messages, the same on every rank.
std::vector<Planned> plan_round(const Context& context, const std::vector<const TypeCase*>& ints, int round) {
  Random random(mix_seed(context.seed, 0x7472756e63 + static_cast<std::uint64_t>(round)));
  std::vector<Planned> plan;
  for (int source = 0; source < context.size; ++source) {
    for (int i = 0; i < kFirstPhase + kSecondPhase; ++i) {
      Planned m;
      m.source = source;
      m.dest = static_cast<int>(random.between(0, context.size - 1));
      // Where the library itself reports no truncation of a message to self, none is sent.
      while (m.dest == source && context.size > 1 && mpi_quirks().self_truncation_unreported)
        m.dest = static_cast<int>(random.between(0, context.size - 1));
      m.tag = round * kTagsPerRound + i;
      m.second = i >= kFirstPhase;
      m.type = ints[static_cast<std::size_t>(random.between(0, static_cast<std::int64_t>(ints.size()) - 1))];
      const std::int64_t bytes = m.second ? random.between(kSmallestSecond, kLargestSecond)
                                          : random.between(kSmallest, std::int64_t{4} << random.between(0, 14));
      m.count = count_for(*m.type, std::min(bytes, kLargestFirst * (m.second ? 16 : 1)));
      plan.push_back(m);
    }
  }
  return plan;
}

std::uint64_t seed_of(const Context& context, int source, int tag) {
  return mix_seed(context.seed, (static_cast<std::uint64_t>(source) << 32) | static_cast<std::uint32_t>(tag));
}

// One receive: a buffer of a random int type and random capacity, and how it was posted.
struct Receive {
  std::unique_ptr<TypedBuffer> buffer;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Status status{};
  int error = MPI_SUCCESS;
  std::string how;
};

class Round {
 public:
  Round(const Context& context, const std::vector<const TypeCase*>& ints, MPI_Comm comm, int round)
      : context_(context), ints_(ints), comm_(comm), round_(round),
        random_(mix_seed(context.seed, 0x6c6f63 + static_cast<std::uint64_t>(round) * 64 + context.rank)) {
    for (const Planned& m : plan_round(context, ints, round)) {
      by_key_[{m.source, m.tag}] = m;
      if (m.source == context.rank) out_.push_back(m);
      if (m.dest == context.rank) (m.second ? second_in_ : first_in_)++;
    }
  }

  void run() {
    way_ = static_cast<int>(random_.between(0, 2));
    const int incoming = first_in_ + second_in_;
    const int early = std::min(incoming, first_in_ + (second_in_ + 1) / 2);
    for (int i = 0; i < early; ++i) post_early();
    MPI_Barrier(comm_);
    start_sends(false);
    start_sends(true);
    for (int i = early; i < incoming; ++i) receive_late();
    complete_early();
    poll_until([&] {
      int done = 0;
      MPI_Testall(static_cast<int>(sends_.size()), sends_.data(), &done, MPI_STATUSES_IGNORE);
      return done != 0;
    }, "round " + std::to_string(round_) + ": the sends");
    for (Receive& r : receives_) judge(r);
    expect_each_once();
  }

 private:
  // A receive buffer. Where the library itself writes truncated contiguous receives past their
  // end (mpi_quirks.hpp), receives keep to types of several runs, which it does not.
  std::unique_ptr<TypedBuffer> new_buffer() {
    const TypeCase* chosen = nullptr;
    do {
      chosen = ints_[static_cast<std::size_t>(random_.between(0, static_cast<std::int64_t>(ints_.size()) - 1))];
    } while (mpi_quirks().truncation_overruns_contiguous && chosen->runs.size() == 1);
    const TypeCase& type = *chosen;
    // Capacities spread over both phases' sizes, so small and large messages both get truncated.
    const std::int64_t bytes = random_.between(0, std::int64_t{4} << random_.between(0, 18));
    return std::make_unique<TypedBuffer>(type, count_for(type, bytes), context_.memory,
                                         random_.next());
  }

  void post_early() {
    Receive r;
    r.buffer = new_buffer();
    r.how = "MPI_Irecv";
    P2P_EXPECT_SUCCESS(MPI_Irecv(r.buffer->address(), r.buffer->count(), r.buffer->type().type, MPI_ANY_SOURCE,
                                 MPI_ANY_TAG, comm_, &r.request));
    receives_.push_back(std::move(r));
  }

  void start_sends(bool second) {
    for (const Planned& m : out_) {
      if (m.second != second) continue;
      buffers_.push_back(std::make_unique<TypedBuffer>(*m.type, m.count, context_.memory, random_.next()));
      TypedBuffer& buffer = *buffers_.back();
      buffer.fill(seed_of(context_, m.source, m.tag));
      MPI_Request request;
      if (random_.one_in(3))
        P2P_EXPECT_SUCCESS(MPI_Issend(buffer.address(), m.count, m.type->type, m.dest, m.tag, comm_, &request));
      else
        P2P_EXPECT_SUCCESS(MPI_Isend(buffer.address(), m.count, m.type->type, m.dest, m.tag, comm_, &request));
      sends_.push_back(request);
    }
  }

  void receive_late() {
    Receive r;
    r.buffer = new_buffer();
    void* address = r.buffer->address();
    const int count = r.buffer->count();
    const MPI_Datatype type = r.buffer->type().type;
    MPI_Message message = MPI_MESSAGE_NULL;
    switch (random_.between(0, 2)) {
      case 0:
        r.how = "MPI_Mprobe+MPI_Mrecv";
        P2P_EXPECT_SUCCESS(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &message, &r.status));
        r.error = MPI_Mrecv(address, count, type, &message, &r.status);
        break;
      case 1: {
        r.how = "MPI_Improbe+MPI_Imrecv";
        int found = 0;
        poll_until([&] {
          P2P_EXPECT_SUCCESS(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &found, &message, &r.status));
          return found != 0;
        }, "round " + std::to_string(round_) + ": MPI_Improbe");
        P2P_EXPECT_SUCCESS(MPI_Imrecv(address, count, type, &message, &r.request));
        r.error = MPI_Wait(&r.request, &r.status);
        break;
      }
      default: {
        r.how = "MPI_Probe+MPI_Recv";
        MPI_Status probed;
        P2P_EXPECT_SUCCESS(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &probed));
        r.error = MPI_Recv(address, count, type, probed.MPI_SOURCE, probed.MPI_TAG, comm_, &r.status);
        expect(r.status.MPI_SOURCE == probed.MPI_SOURCE && r.status.MPI_TAG == probed.MPI_TAG,
               "MPI_Recv of a probed source and tag received another message");
      }
    }
    r.request = MPI_REQUEST_NULL;
    receives_.push_back(std::move(r));
  }

  // The early receives, completed one of three ways; an error lands in its status.
  void complete_early() {
    std::vector<MPI_Request> requests;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < receives_.size(); ++i)
      if (receives_[i].request != MPI_REQUEST_NULL) {
        requests.push_back(receives_[i].request);
        index.push_back(i);
      }
    std::vector<MPI_Status> statuses(requests.size());
    const int n = static_cast<int>(requests.size());
    const std::string what = "round " + std::to_string(round_) + ": the wildcard receives";
    completed_by_ = std::string(" (early, by ") + (way_ == 0 ? "MPI_Waitall" : way_ == 1 ? "MPI_Waitsome" : "MPI_Testsome") + ")";
    switch (way_) {
      case 0: {
        // Receives marked MPI_ERR_PENDING beside a failed one are still active: wait again.
        std::vector<bool> open(requests.size(), true);
        for (int pass = 0; std::find(open.begin(), open.end(), true) != open.end(); ++pass) {
          if (pass > n) {
            fail(what + ": MPI_Waitall keeps reporting MPI_ERR_PENDING");
            break;
          }
          const int rc = MPI_Waitall(n, requests.data(), statuses.data());
          for (std::size_t i = 0; i < requests.size(); ++i) {
            if (!open[i]) continue;
            const int error = rc == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : rc;
            if (error == MPI_ERR_PENDING) continue;
            Receive& r = receives_[index[i]];
            r.status = statuses[i];
            r.error = error;
            open[i] = false;
          }
        }
        break;
      }
      default: {
        // MPI_Waitsome or MPI_Testsome, not MPI_Waitany: Open MPI 4.1's MPI_Waitany, in this storm
        // with no gddt loaded, reported no active request while completed ones were never returned.
        const auto some = way_ == 1 ? MPI_Waitsome : MPI_Testsome;
        int left = n;
        std::vector<int> done(requests.size());
        poll_until([&] {
          int outcount = 0;
          const int rc = some(n, requests.data(), &outcount, done.data(), statuses.data());
          for (int k = 0; k < outcount && outcount != MPI_UNDEFINED; ++k) {
            Receive& r = receives_[index[static_cast<std::size_t>(done[static_cast<std::size_t>(k)])]];
            r.status = statuses[static_cast<std::size_t>(k)];
            r.error = rc == MPI_ERR_IN_STATUS ? r.status.MPI_ERROR : rc;
            --left;
          }
          return left == 0 || outcount == MPI_UNDEFINED;
        }, what);
      }
    }
    for (std::size_t i : index) receives_[i].request = MPI_REQUEST_NULL;
  }

  void judge(const Receive& r) {
    const int source = r.status.MPI_SOURCE, tag = r.status.MPI_TAG;
    const auto found = by_key_.find({source, tag});
    const std::string what = "round " + std::to_string(round_) + ": " + r.how + completed_by_ + " into " + r.buffer->type().name +
                             " x" + std::to_string(r.buffer->count()) + " (" +
                             std::to_string(r.buffer->data_bytes()) + " bytes)";
    if (found == by_key_.end() || found->second.dest != context_.rank) {
      fail(what + " got source " + std::to_string(source) + ", tag " + std::to_string(tag) +
           ", which names no message sent here");
      return;
    }
    const Planned& m = found->second;
    received_.push_back(source);
    received_.push_back(tag);
    const std::string message = what + ": the " + std::to_string(m.bytes()) + "-byte message of rank " +
                                std::to_string(source) + " tag " + std::to_string(tag);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(r.error, &error_class);
    if (m.bytes() > r.buffer->data_bytes()) {
      expect(error_class == MPI_ERR_TRUNCATE, message + ": error class " + std::to_string(error_class) +
                                                  ", expected MPI_ERR_TRUNCATE");
      r.buffer->expect_unchanged_outside_typemap(message);
      return;
    }
    expect(error_class == MPI_SUCCESS, message + ": error class " + std::to_string(error_class));
    int elements = -1;
    MPI_Get_elements(&r.status, MPI_INT, &elements);
    expect(elements * std::int64_t{4} == m.bytes(), message + ": MPI_Get_elements says " + std::to_string(elements));
    r.buffer->expect_message(seed_of(context_, source, tag), m.bytes(), message);
  }

  // Every message of the round arrived once, wherever it went.
  void expect_each_once() {
    int mine = static_cast<int>(received_.size());
    std::vector<int> sizes(static_cast<std::size_t>(context_.size)), displacements(sizes.size());
    MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_);
    int total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      displacements[i] = total;
      total += sizes[i];
    }
    std::vector<int> all(static_cast<std::size_t>(total));
    MPI_Allgatherv(received_.data(), mine, MPI_INT, all.data(), sizes.data(), displacements.data(), MPI_INT, comm_);
    std::map<std::pair<int, int>, int> times;
    for (std::size_t i = 0; i + 1 < all.size(); i += 2) ++times[{all[i], all[i + 1]}];
    if (context_.rank != 0) return;
    for (const auto& [key, m] : by_key_) {
      const int n = times.count(key) ? times[key] : 0;
      expect(n == 1, "round " + std::to_string(round_) + ": the message of rank " + std::to_string(key.first) +
                         " tag " + std::to_string(key.second) + " to rank " + std::to_string(m.dest) +
                         " arrived " + std::to_string(n) + " times");
    }
  }

  const Context& context_;
  const std::vector<const TypeCase*>& ints_;
  MPI_Comm comm_;
  int round_;
  Random random_;
  std::map<std::pair<int, int>, Planned> by_key_;
  std::vector<Planned> out_;
  int first_in_ = 0, second_in_ = 0;
  std::vector<Receive> receives_;
  std::vector<std::unique_ptr<TypedBuffer>> buffers_;
  std::vector<MPI_Request> sends_;
  std::vector<int> received_;  // source, tag of each message this rank got
  int way_ = 0;  // how the early receives complete: MPI_Waitall, MPI_Waitsome, MPI_Testsome
  std::string completed_by_;
};

void truncation_storm(const Context& context, const TypeCatalog& types) {
  const WorldErrorCounter world_errors;  // some libraries raise request errors there (mpi_quirks.hpp)
  const std::vector<const TypeCase*> ints = int_types(types);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int rounds = context.messages > 0 ? static_cast<int>(context.messages) : kDefaultRounds;
  for (int round = 0; round < rounds; ++round) {
    Round(context, ints, comm, round).run();
    MPI_Barrier(comm);
  }
  MPI_Comm_free(&comm);
  if (context.rank == 0) std::printf("truncation storm: %d rounds\n", rounds);
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_truncation_storm");
  const TypeCatalog types;
  suite.run("truncation_storm", [&types](const Context& context) { truncation_storm(context, types); });
  return suite.finish();
}
