// The engine: the one place that knows which backends exist (backends.def) and picks one for a
// pair of buffers by the memory kinds each backend reaches and what they cost it.
#pragma once

#include <functional>

#include "pack/backend.hpp"

namespace gddt::pack {

// The cheapest backend reaching both memory kinds (the lowest sum of its typed and packed costs), null where
// none reaches both: the caller stages one side into memory a backend reaches first.
const Backend* backend_for(gddt_memory_type_t typed, gddt_memory_type_t packed);

// The backend of a row of backends.def, for tests and benchmarks of that backend.
const Backend& backend_at(BackendSlotIndex slot);

// Loads every backend's device code for the current device now (Backend::load): before a
// kernel that waits on gddt starts, since a lazy load would wait for that kernel.
Status load_device_code();

// Every backend's Backend::prepare of `layout` on `device`; failures are left to the first use.
void prepare_layout(const type::Layout& layout, int device);

// Every backend, in backends.def order (stopping them at MPI_Finalize, listing them).
void for_each_backend(const std::function<void(const Backend&)>& visit);

}  // namespace gddt::pack
