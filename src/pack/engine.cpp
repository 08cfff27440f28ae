#include "pack/engine.hpp"

#include <array>

namespace gddt::pack {

#define GDDT_BACKEND(slot, function) const Backend& function();
#include "pack/backends.def"
#undef GDDT_BACKEND

namespace {

using BackendTable = std::array<const Backend*, kBackendCount>;
using Choices = std::array<std::array<const Backend*, kMemoryTypes>, kMemoryTypes>;

const BackendTable& backends() {
  static const BackendTable table{
#define GDDT_BACKEND(slot, function) &function(),
#include "pack/backends.def"
#undef GDDT_BACKEND
  };
  return table;
}

// Decided once for every pair of kinds: the calls of the point-to-point path ask per message.
Choices decide_choices() {
  Choices choices{};
  for (int typed = 0; typed < kMemoryTypes; ++typed) {
    for (int packed = 0; packed < kMemoryTypes; ++packed) {
      int best_cost = 0;
      for (const Backend* backend : backends()) {
        const int typed_cost = backend->typed_cost[typed], packed_cost = backend->packed_cost[packed];
        if (typed_cost == kUnreachable || packed_cost == kUnreachable) continue;
        const int cost = typed_cost + packed_cost;
        if (choices[typed][packed] == nullptr || cost < best_cost) {
          choices[typed][packed] = backend;
          best_cost = cost;
        }
      }
    }
  }
  return choices;
}

}  // namespace

const Backend* backend_for(gddt_memory_type_t typed, gddt_memory_type_t packed) {
  static const Choices choices = decide_choices();
  if (typed < 0 || typed >= kMemoryTypes || packed < 0 || packed >= kMemoryTypes) return nullptr;
  return choices[typed][packed];
}

const Backend& backend_at(BackendSlotIndex slot) { return *backends()[slot]; }

Status load_device_code() {
  for (const Backend* backend : backends())
    if (backend->load != nullptr) GDDT_CHECK(backend->load());
  return GDDT_OK;
}

void prepare_layout(const type::Layout& layout, int device) {
  for (const Backend* backend : backends())
    if (backend->prepare != nullptr) backend->prepare(layout, device);
}

void for_each_backend(const std::function<void(const Backend&)>& visit) {
  for (const Backend* backend : backends()) visit(*backend);
}

}  // namespace gddt::pack
