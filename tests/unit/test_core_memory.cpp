// Memory classification of host memory. On a machine without a GPU every address is host
// memory; with one, pageable host memory must still come back as host and never be cached.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/memory.hpp"
#include "gddt/gddt.h"

namespace gddt::memory {
namespace {

TEST(MemoryClassify, HostMemoryIsHost) {
  int on_stack = 0;
  std::vector<char> on_heap(1 << 20);
  void* large = std::malloc(64 << 20);
  static char in_data[16];
  for (const void* ptr : {static_cast<const void*>(&on_stack), static_cast<const void*>(on_heap.data()),
                          static_cast<const void*>(large), static_cast<const void*>(in_data),
                          static_cast<const void*>(nullptr)}) {
    Kind kind{GDDT_MEMORY_DEVICE, 3};
    ASSERT_EQ(classify(ptr, &kind), GDDT_OK);
    EXPECT_EQ(kind.type, GDDT_MEMORY_HOST);
    EXPECT_EQ(kind.device, -1);
    EXPECT_TRUE(kind.host_accessible());
    EXPECT_FALSE(kind.device_accessible());
  }
  std::free(large);
}

TEST(MemoryClassify, HostAnswersAreNeverCached) {
  std::vector<char> buffer(4096);
  Kind kind;
  ASSERT_EQ(classify(buffer.data(), &kind), GDDT_OK);
  const Stats before = stats();
  ASSERT_EQ(classify(buffer.data(), &kind), GDDT_OK);
  EXPECT_EQ(stats().entries, before.entries);
  EXPECT_EQ(stats().hits, before.hits);
}

TEST(MemoryClassify, InvalidateOfUnknownRangeIsHarmless) {
  std::vector<char> buffer(64);
  invalidate(buffer.data(), buffer.size());
  invalidate(buffer.data(), 0);
  Kind kind;
  ASSERT_EQ(classify(buffer.data(), &kind), GDDT_OK);
  EXPECT_EQ(kind.type, GDDT_MEMORY_HOST);
}

TEST(MemoryCApi, ClassifiesAndNamesTypes) {
  double value = 0;
  gddt_memory_type_t type = GDDT_MEMORY_DEVICE;
  int device = 5;
  ASSERT_EQ(gddt_memory_classify(&value, &type, &device), GDDT_OK);
  EXPECT_EQ(type, GDDT_MEMORY_HOST);
  EXPECT_EQ(device, -1);
  EXPECT_EQ(gddt_memory_classify(&value, nullptr, &device), GDDT_ERR_INVALID_ARG);
  EXPECT_EQ(gddt_memory_classify(&value, &type, nullptr), GDDT_ERR_INVALID_ARG);
  EXPECT_STREQ(gddt_memory_type_name(GDDT_MEMORY_HOST), "host");
  EXPECT_STREQ(gddt_memory_type_name(GDDT_MEMORY_PINNED), "pinned");
  EXPECT_STREQ(gddt_memory_type_name(GDDT_MEMORY_DEVICE), "device");
  EXPECT_STREQ(gddt_memory_type_name(GDDT_MEMORY_MANAGED), "managed");
}

}  // namespace
}  // namespace gddt::memory
