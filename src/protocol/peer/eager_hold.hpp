// What a transfer of the eager path (eager.cpp) holds until its receiver's release: the pack that
// sets its flag, and, out of the sender's scratch, that flag, a word of device memory lent to it
// (flags.cpp; a landed transfer's word is its slot's in the receiver's landing). Apart from internal.hpp,
// which declares the functions, so that its requests (Pending) can hold one.
#pragma once

#include "pack/backend.hpp"

namespace gddt::protocol::peers {

// A word of GPU `device`'s flag allocation lent to one transfer until its release: the sender's
// resident pack sets it to flag.value, and the receiver's unpack waits for that value.
struct FlagLease {
  int device = -1;
  int slot = -1;  // -1: none
  pack::DeviceFlag flag;
};

// What a transfer of the eager path holds until its release: the flag, lent like a pack event,
// the pack that sets it, and the receiver (its node slot), whose transfers in flight are counted.
struct EagerHold {
  FlagLease flag;
  pack::Posted pack;     // ticket 0: none
  int receiver = -1;     // -1: no transfer of the eager path
};

}  // namespace gddt::protocol::peers
