// What gddt did in this process, counted: the one table of counters (counters.def), read by
// name through the public gddt_counter() and printed at MPI_Finalize with GDDT_STATS=1. Counting
// is a relaxed atomic add, cheap enough for every message gddt handles.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace gddt::counters {

enum class Counter : int {
#define GDDT_COUNTER(id, name, help) id,
#include "core/counters.def"
#undef GDDT_COUNTER
  kCount
};

namespace detail {
extern std::atomic<std::int64_t> values[static_cast<int>(Counter::kCount)];
}

inline void add(Counter counter, std::int64_t amount) {
  detail::values[static_cast<int>(counter)].fetch_add(amount, std::memory_order_relaxed);
}

// Whether time counters count (GDDT_STATS=1): reading the clock is not free on every message.
bool timing();

// Adds the nanoseconds from its making to its end to a time counter (named *.ns), when timing().
class Stopwatch {
 public:
  explicit Stopwatch(Counter counter) : counter_(counter), timing_(timing()) {
    if (timing_) start_ = std::chrono::steady_clock::now();
  }
  ~Stopwatch() {
    if (!timing_) return;
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    add(counter_, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
  }
  // Nothing is added: what was timed turned out not to be the stage.
  void cancel() { timing_ = false; }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

 private:
  Counter counter_;
  bool timing_;
  std::chrono::steady_clock::time_point start_{};
};

std::int64_t value(Counter counter);
const char* name(Counter counter);
const char* help(Counter counter);

// Every non-zero counter on one line each, "gddt[rank] stats: name value (help)", to stderr.
void print(const std::string& who);

}  // namespace gddt::counters
