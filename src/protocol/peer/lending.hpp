// How a lent buffer (the direct plane of the peer protocol: direct_send.cpp, direct_receive.cpp)
// changes hands: one word in the node's shared memory per lent slot, which the sender and its
// receiver, two processes, move on by compare-and-swap, and the answer the sender leaves in the
// receiver's cell when asked to write.
// The word holds the slot's generation (which send it is) above its state:
//
//   posted --(sender waits in an MPI call)--> waiting --(receiver asks)--> asked
//   posted, waiting --(receiver takes it)--> reading --(read)--> done
//   posted, waiting --(sender completes first)--> copied           (the sender sends a copy)
//   asked --(sender claims)--> writing --(answer: written)--> done
//                                      --(answer: declined)--> waiting
//   asked --(not claimed within the patience: receiver takes it back)--> reading
//
// Once done, the sender may post the slot's next generation at once, so a receiver that asked
// learns the outcome from the answer in its own cell, never from the word alone. Kept apart from
// the node table so that a unit test can drive both sides from threads.
#pragma once

#include <atomic>
#include <cstdint>

namespace gddt::protocol::lending {

enum State : std::uint32_t {
  kPosted = 1,
  kReading = 2,
  kDone = 3,
  kCopied = 4,
  kWaiting = 5,
  kAsked = 6,
  kWriting = 7,
};
constexpr int kStateBits = 3;
constexpr std::uint32_t kGenerations = 1u << (32 - kStateBits);

constexpr std::uint32_t word(std::uint32_t generation, State state) { return (generation << kStateBits) | state; }
constexpr State state_of(std::uint32_t word) { return static_cast<State>(word & ((1u << kStateBits) - 1)); }
constexpr std::uint32_t generation_of(std::uint32_t word) { return word >> kStateBits; }

// What the sender answers a request to write, in the receiver's cell.
enum Answer : int { kUnanswered = 0, kWritten = 1, kDeclined = 2 };

using Slot = std::atomic<std::uint32_t>;
using AnswerCell = std::atomic<int>;

// --- the sender ---

inline void post(Slot& slot, std::uint32_t generation) {
  slot.store(word(generation, kPosted), std::memory_order_release);
}

// The sender waits in an MPI call for its receiver from now on: the receiver may ask it to write.
inline void begin_waiting(Slot& slot, std::uint32_t generation) {
  std::uint32_t posted = word(generation, kPosted);
  slot.compare_exchange_strong(posted, word(generation, kWaiting), std::memory_order_acq_rel);
}

inline bool done(const Slot& slot, std::uint32_t generation) {
  return slot.load(std::memory_order_acquire) == word(generation, kDone);
}

// Takes the buffer back to send a copy where the receiver has neither begun to read nor asked.
inline bool take_back(Slot& slot, std::uint32_t generation) {
  std::uint32_t now = slot.load(std::memory_order_acquire);
  if (now != word(generation, kPosted) && now != word(generation, kWaiting)) return false;
  return slot.compare_exchange_strong(now, word(generation, kCopied), std::memory_order_acq_rel);
}

// Claims a receiver's request to write: true, with the slot's generation, where it was asked.
inline bool claim(Slot& slot, std::uint32_t* generation) {
  std::uint32_t now = slot.load(std::memory_order_acquire);
  if (state_of(now) != kAsked) return false;
  *generation = generation_of(now);
  return slot.compare_exchange_strong(now, word(*generation, kWriting), std::memory_order_acq_rel);
}

// Answers a claimed request: written (the slot is done) or declined (waiting again: the receiver
// reads, unless the sender takes the buffer back first).
inline void answer(Slot& slot, std::uint32_t generation, AnswerCell& cell, bool written) {
  cell.store(written ? kWritten : kDeclined, std::memory_order_release);
  slot.store(word(generation, written ? kDone : kWaiting), std::memory_order_release);
}

// Gives a claimed request back unanswered (it names no cell): waiting again, the receiver reads.
inline void unclaim(Slot& slot, std::uint32_t generation) {
  slot.store(word(generation, kWaiting), std::memory_order_release);
}

// --- the receiver ---

// Whether the sender waits in an MPI call now (a request to write may be worth preparing).
inline bool waiting(const Slot& slot, std::uint32_t generation) {
  return slot.load(std::memory_order_acquire) == word(generation, kWaiting);
}

// Takes the buffer to read it; false where the sender took it back (or its slot moved on).
inline bool take_to_read(Slot& slot, std::uint32_t generation) {
  for (;;) {
    std::uint32_t now = slot.load(std::memory_order_acquire);
    if (now != word(generation, kPosted) && now != word(generation, kWaiting)) return false;
    if (slot.compare_exchange_weak(now, word(generation, kReading), std::memory_order_acq_rel)) return true;
  }
}

inline void finish_reading(Slot& slot, std::uint32_t generation) {
  slot.store(word(generation, kDone), std::memory_order_release);
}

// Asks the waiting sender to write, the request already in the cell: false where it is not waiting.
inline bool ask(Slot& slot, std::uint32_t generation, AnswerCell& cell) {
  cell.store(kUnanswered, std::memory_order_relaxed);
  std::uint32_t waiting_word = word(generation, kWaiting);
  return slot.compare_exchange_strong(waiting_word, word(generation, kAsked), std::memory_order_acq_rel);
}

// What became of a request: still pending; written; to be read here (declined, given back
// unanswered, or, with `give_up`, not yet claimed: taken back); copied (declined or given back,
// then the sender completed first and took its buffer back).
enum class Outcome { kPending, kWritten, kRead, kCopied };

inline Outcome look(Slot& slot, std::uint32_t generation, const AnswerCell& cell, bool give_up) {
  std::uint32_t now = slot.load(std::memory_order_acquire);
  // Loaded after the word: an answer stored before the word moved on is seen.
  const int answered = cell.load(std::memory_order_acquire);
  if (answered == kWritten) return Outcome::kWritten;
  if (answered == kDeclined) return take_to_read(slot, generation) ? Outcome::kRead : Outcome::kCopied;
  if (now == word(generation, kWriting)) return Outcome::kPending;
  if (now == word(generation, kWaiting) || now == word(generation, kAsked)) {
    if (now == word(generation, kAsked) && !give_up) return Outcome::kPending;
    return slot.compare_exchange_strong(now, word(generation, kReading), std::memory_order_acq_rel) ? Outcome::kRead
                                                                                                    : Outcome::kPending;
  }
  // Moved on without an answer: given back unanswered, then taken back by the sender.
  return Outcome::kCopied;
}

}  // namespace gddt::protocol::lending
