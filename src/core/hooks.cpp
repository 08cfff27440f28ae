#include "core/hooks.hpp"

#include <atomic>
#include <cstdlib>

namespace gddt::hooks {
namespace {

constexpr int kPerEvent = 4;
std::atomic<Hook> table[static_cast<int>(Event::kCount)][kPerEvent] = {};

}  // namespace

void add(Event event, Hook hook) {
  for (std::atomic<Hook> &slot : table[static_cast<int>(event)]) {
    Hook expected = nullptr;
    if (slot.compare_exchange_strong(expected, hook) || expected == hook) return;
  }
  std::abort();  // more hooks than kPerEvent: a programming error of gddt itself
}

void run(Event event) {
  for (std::atomic<Hook> &slot : table[static_cast<int>(event)]) {
    const Hook hook = slot.load(std::memory_order_acquire);
    if (hook == nullptr) return;
    hook();
  }
}

}  // namespace gddt::hooks
