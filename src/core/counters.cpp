#include "core/counters.hpp"

#include <cstdio>
#include <cstring>

#include "core/config.hpp"
#include "gddt/gddt.h"

namespace gddt::counters {

std::atomic<std::int64_t> detail::values[static_cast<int>(Counter::kCount)];

namespace {

struct Entry {
  const char* name;
  const char* help;
};

constexpr Entry kEntries[] = {
#define GDDT_COUNTER(id, name, help) {name, help},
#include "core/counters.def"
#undef GDDT_COUNTER
};

}  // namespace

bool timing() { return config::settings().stats; }

std::int64_t value(Counter counter) {
  return detail::values[static_cast<int>(counter)].load(std::memory_order_relaxed);
}

const char* name(Counter counter) { return kEntries[static_cast<int>(counter)].name; }

const char* help(Counter counter) { return kEntries[static_cast<int>(counter)].help; }

void print(const std::string& who) {
  for (int i = 0; i < static_cast<int>(Counter::kCount); ++i) {
    const std::int64_t v = value(static_cast<Counter>(i));
    if (v != 0)
      std::fprintf(stderr, "gddt[%s] stats: %s %lld (%s)\n", who.c_str(), kEntries[i].name, static_cast<long long>(v),
                   kEntries[i].help);
  }
}

}  // namespace gddt::counters

extern "C" gddt_status_t gddt_counter(const char* name, long long* value) {
  using gddt::counters::Counter;
  if (name == nullptr || value == nullptr) return GDDT_ERR_INVALID_ARG;
  for (int i = 0; i < static_cast<int>(Counter::kCount); ++i) {
    if (std::strcmp(name, gddt::counters::name(static_cast<Counter>(i))) != 0) continue;
    *value = static_cast<long long>(gddt::counters::value(static_cast<Counter>(i)));
    return GDDT_OK;
  }
  return GDDT_ERR_INVALID_ARG;
}
