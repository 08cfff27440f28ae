// The eager path's flags (flags.cpp; the path itself: eager.cpp, internal.hpp): words of device
// memory lent to the transfers whose packs the sender's resident kernel posts, and what such a
// transfer holds until its receiver's release.
#pragma once

#include "core/status.hpp"
#include "pack/backend.hpp"

namespace gddt::protocol::peers {

struct Header;

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

// False where no flag is free, or the GPU's flags could not be had.
bool take_flag(int device, FlagLease* lease);
void give_back(const FlagLease& lease);
// Names the lease's word and value in the header (flag_*).
Status name_flag(const FlagLease& lease, Header* header);
void free_flags();

}  // namespace gddt::protocol::peers
