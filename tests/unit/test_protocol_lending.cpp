// The lent-slot state machine of the direct plane (protocol/peer/lending.hpp): each way a lending
// can end, step by step, then a sender and a receiver in two threads taking random turns over many
// generations of one slot, both sides agreeing on how each ended and neither waiting for ever.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "protocol/peer/lending.hpp"

namespace gddt::protocol::lending {
namespace {

struct Lending {
  Slot slot{0};
  AnswerCell cell{kUnanswered};
};

// Posts `generation`; the sender waits, the receiver asks for a write, the sender claims it.
void claim_a_request(Lending& l, std::uint32_t generation) {
  post(l.slot, generation);
  begin_waiting(l.slot, generation);
  ASSERT_TRUE(ask(l.slot, generation, l.cell));
  std::uint32_t claimed = 0;
  ASSERT_TRUE(claim(l.slot, &claimed));
  EXPECT_EQ(claimed, generation);
}

TEST(Lending, ReceiverReads) {
  Lending l;
  post(l.slot, 1);
  EXPECT_FALSE(waiting(l.slot, 1));
  EXPECT_TRUE(take_to_read(l.slot, 1));
  EXPECT_FALSE(take_back(l.slot, 1)) << "the sender cannot take back a buffer being read";
  EXPECT_FALSE(done(l.slot, 1));
  finish_reading(l.slot, 1);
  EXPECT_TRUE(done(l.slot, 1));
}

TEST(Lending, SenderTakesBackFirst) {
  Lending l;
  post(l.slot, 1);
  begin_waiting(l.slot, 1);
  EXPECT_TRUE(take_back(l.slot, 1));
  EXPECT_FALSE(take_to_read(l.slot, 1));
  EXPECT_FALSE(ask(l.slot, 1, l.cell));
  post(l.slot, 2);  // the slot's next send
  EXPECT_FALSE(take_to_read(l.slot, 1)) << "a receiver of the first send must not take the second";
}

TEST(Lending, AskedOnlyWhileTheSenderWaits) {
  Lending l;
  post(l.slot, 3);
  EXPECT_FALSE(ask(l.slot, 3, l.cell));
  begin_waiting(l.slot, 3);
  EXPECT_TRUE(waiting(l.slot, 3));
  EXPECT_FALSE(ask(l.slot, 2, l.cell)) << "another generation's receiver";
  EXPECT_TRUE(ask(l.slot, 3, l.cell));
  EXPECT_FALSE(take_back(l.slot, 3)) << "an asked sender answers, it does not take back";
}

TEST(Lending, WrittenEvenWhereTheSlotMovedOnBeforeTheReceiverLooked) {
  Lending l;
  post(l.slot, 4);
  begin_waiting(l.slot, 4);
  ASSERT_TRUE(ask(l.slot, 4, l.cell));
  EXPECT_EQ(look(l.slot, 4, l.cell, false), Outcome::kPending);
  std::uint32_t generation = 0;
  ASSERT_TRUE(claim(l.slot, &generation));
  EXPECT_EQ(generation, 4u);
  EXPECT_EQ(look(l.slot, 4, l.cell, true), Outcome::kPending) << "a claimed request is not given up";
  answer(l.slot, 4, l.cell, true);
  EXPECT_TRUE(done(l.slot, 4));
  post(l.slot, 5);
  EXPECT_EQ(look(l.slot, 4, l.cell, false), Outcome::kWritten);
}

TEST(Lending, DeclinedThenRead) {
  Lending l;
  claim_a_request(l, 6);
  answer(l.slot, 6, l.cell, false);
  EXPECT_EQ(look(l.slot, 6, l.cell, false), Outcome::kRead);
  EXPECT_FALSE(take_back(l.slot, 6));
  finish_reading(l.slot, 6);
  EXPECT_TRUE(done(l.slot, 6));
}

TEST(Lending, DeclinedThenTakenBack) {
  Lending l;
  claim_a_request(l, 7);
  answer(l.slot, 7, l.cell, false);
  EXPECT_TRUE(take_back(l.slot, 7));
  post(l.slot, 8);
  EXPECT_EQ(look(l.slot, 7, l.cell, false), Outcome::kCopied);
}

TEST(Lending, UnclaimedRequestGivenUp) {
  Lending l;
  post(l.slot, 9);
  begin_waiting(l.slot, 9);
  ASSERT_TRUE(ask(l.slot, 9, l.cell));
  EXPECT_EQ(look(l.slot, 9, l.cell, false), Outcome::kPending);
  EXPECT_EQ(look(l.slot, 9, l.cell, true), Outcome::kRead);
  std::uint32_t generation = 0;
  EXPECT_FALSE(claim(l.slot, &generation));
}

TEST(Lending, GivenBackUnanswered) {
  Lending l;
  claim_a_request(l, 10);
  unclaim(l.slot, 10);
  EXPECT_EQ(look(l.slot, 10, l.cell, false), Outcome::kRead);

  claim_a_request(l, 11);
  unclaim(l.slot, 11);
  EXPECT_TRUE(take_back(l.slot, 11));
  post(l.slot, 12);
  EXPECT_EQ(look(l.slot, 11, l.cell, false), Outcome::kCopied);
}

TEST(Lending, GenerationsWrapWithinTheWord) {
  Lending l;
  const std::uint32_t last = kGenerations - 1;
  post(l.slot, last);
  EXPECT_EQ(generation_of(l.slot.load()), last);
  EXPECT_EQ(state_of(l.slot.load()), kPosted);
  EXPECT_TRUE(take_to_read(l.slot, last));
}

// How one lending ended, as each side saw it.
enum class End { kNone, kRead, kWritten, kCopied };

// Spins one side may take waiting for the other before the test calls it a hang.
constexpr long kMostSpins = 20'000'000;

// A sender and a receiver in two threads through kGenerationsRun lendings of one slot, random turns
// on each side; both must agree on how each ended. Adds how many ended each way to *ends.
void run_lendings(std::map<End, int>* ends) {
  constexpr std::uint32_t kGenerationsRun = 4000;
  Lending l;
  std::atomic<std::uint32_t> header{0};  // the generation whose header the receiver may take
  std::vector<End> sender_saw(kGenerationsRun + 1, End::kNone), receiver_saw(kGenerationsRun + 1, End::kNone);
  std::atomic<bool> hung{false};

  std::thread sender([&] {
    std::mt19937 random(1);
    for (std::uint32_t generation = 1; generation <= kGenerationsRun && !hung; ++generation) {
      post(l.slot, generation);
      header.store(generation, std::memory_order_release);
      if (random() % 2) begin_waiting(l.slot, generation);
      const long patience = static_cast<long>(random() % 400);
      bool wrote = false;
      for (long spins = 0;; ++spins) {
        if (done(l.slot, generation)) {
          sender_saw[generation] = wrote ? End::kWritten : End::kRead;
          break;
        }
        std::uint32_t claimed = 0;
        if (claim(l.slot, &claimed)) {
          EXPECT_EQ(claimed, generation);
          wrote = random() % 3 != 0;
          answer(l.slot, generation, l.cell, wrote);
          continue;
        }
        if (spins >= patience && take_back(l.slot, generation)) {
          sender_saw[generation] = End::kCopied;
          break;
        }
        if (spins > kMostSpins) {
          hung = true;
          break;
        }
        if (spins % 64 == 63) std::this_thread::yield();
      }
    }
  });

  std::thread receiver([&] {
    std::mt19937 random(2);
    for (std::uint32_t generation = 1; generation <= kGenerationsRun && !hung; ++generation) {
      for (long spins = 0; header.load(std::memory_order_acquire) < generation; ++spins) {
        if (spins > kMostSpins || hung) {
          hung = true;
          return;
        }
        if (spins % 64 == 63) std::this_thread::yield();
      }
      for (int pause = static_cast<int>(random() % 64); pause > 0; --pause)
        header.load();  // the sender may begin waiting
      if (random() % 2 && waiting(l.slot, generation) && ask(l.slot, generation, l.cell)) {
        const long give_up_after = static_cast<long>(random() % 200);
        Outcome outcome = Outcome::kPending;
        for (long spins = 0; outcome == Outcome::kPending; ++spins) {
          outcome = look(l.slot, generation, l.cell, spins >= give_up_after);
          if (spins > kMostSpins) {
            hung = true;
            return;
          }
          if (spins % 64 == 63) std::this_thread::yield();
        }
        if (outcome == Outcome::kRead) finish_reading(l.slot, generation);
        receiver_saw[generation] = outcome == Outcome::kWritten ? End::kWritten
                                   : outcome == Outcome::kRead  ? End::kRead
                                                                : End::kCopied;
      } else if (take_to_read(l.slot, generation)) {
        finish_reading(l.slot, generation);
        receiver_saw[generation] = End::kRead;
      } else {
        receiver_saw[generation] = End::kCopied;
      }
    }
  });

  sender.join();
  receiver.join();
  ASSERT_FALSE(hung) << "a side waited for the other for ever";
  for (std::uint32_t generation = 1; generation <= kGenerationsRun; ++generation) {
    ASSERT_EQ(sender_saw[generation], receiver_saw[generation]) << "generation " << generation;
    ++(*ends)[sender_saw[generation]];
  }
}

TEST(Lending, TwoThreadsAgreeOnEveryLending) {
  // Rounds go on until every way of ending came up, so the interleavings reached each: a loaded
  // machine, where the two threads seldom run at once, takes more rounds.
  constexpr int kMostRounds = 50;
  std::map<End, int> ends;
  for (int round = 0; round < kMostRounds && ends.size() < 3; ++round) {
    run_lendings(&ends);
    if (HasFatalFailure()) return;
    ends.erase(End::kNone);
  }
  EXPECT_GT(ends[End::kWritten], 0);
  EXPECT_GT(ends[End::kRead], 0);
  EXPECT_GT(ends[End::kCopied], 0);
}

}  // namespace
}  // namespace gddt::protocol::lending
