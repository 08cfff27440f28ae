// Operations with staging and a completion of their own (gddt_device_own.h), without a GPU.
#pragma once

#include "harness.hpp"

namespace device_api_test {

void own_staging(const gddt_device_comm_t &comm, const TypeCase &c);
void own_staging_beyond_ring(const gddt_device_comm_t &comm, const TypeCase &c);
void own_staging_truncated(const TypeCase &c);

}  // namespace device_api_test
