// Where UCX is loaded (its ucm_set_event_handler is found), the address-space epoch follows
// UCX's memory events, whose hooks go past gddt's mmap wrappers. This executable defines a
// stand-in for UCX's function, answering as UCM_REFUSES says; each build of it asks once, since
// the answer is settled at the first question.
#include <gtest/gtest.h>

#include <vector>

#include "core/address_space.hpp"
#include "core/gpu.hpp"
#include "core/memory.hpp"

namespace {
int registered_events = 0;
void (*registered_callback)(int, void*, void*) = nullptr;
}  // namespace

extern "C" __attribute__((visibility("default"))) int ucm_set_event_handler(int events, int,
                                                                           void (*callback)(int, void*, void*),
                                                                           void*) {
  registered_events = events;
  registered_callback = callback;
  return UCM_REFUSES ? -4 : 0;
}

namespace gddt::address_space {
namespace {

TEST(AddressSpaceUcx, FollowsUcxMemoryEventsOrSaysItCannot) {
  const bool sees = sees_every_mapping();
  // Mapped and unmapped events, registered without installing hooks of UCX's own.
  EXPECT_EQ(registered_events, (1 << 16) | (1 << 17) | (1 << 24));
  ASSERT_NE(registered_callback, nullptr);
  if (UCM_REFUSES) {
    EXPECT_FALSE(sees);
    return;
  }
  EXPECT_TRUE(sees);
  const std::uint64_t before = epoch();
  registered_callback(1 << 16, nullptr, nullptr);
  EXPECT_NE(epoch(), before);
  EXPECT_TRUE(sees_every_mapping());
}

// Before a CUDA context a host page goes into the fast path's table only where every mapping
// moves the epoch: with UCX refusing the handler, a context could be made unseen.
TEST(AddressSpaceUcx, HostPagesBeforeAContextOnlyWhereMappingsAreSeen) {
  if (!gpu::available()) GTEST_SKIP() << "no usable GPU: every address is host memory without a question";
  if (gpu::context_exists()) GTEST_SKIP() << "a CUDA context exists before the test";
  std::vector<char> pageable(64);
  memory::Kind kind;
  ASSERT_EQ(memory::classify(pageable.data(), &kind), GDDT_OK);
  EXPECT_EQ(kind.type, GDDT_MEMORY_HOST);
  EXPECT_EQ(memory::known_host(pageable.data()), !UCM_REFUSES);
}

}  // namespace
}  // namespace gddt::address_space
