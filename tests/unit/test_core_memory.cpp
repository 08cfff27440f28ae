// Memory classification of host memory. On a machine without a GPU every address is host
// memory; with one, pageable host memory must still come back as host, and a host answer is
// kept only while the address space is unchanged.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdlib>
#include <memory>
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

// Host answers are kept per page, each for the address-space epoch it was found in: a mapping
// made afterwards (the driver's, for device memory) makes it unknown again.
TEST(HostPageTable, AnswersHoldForTheirPageAndEpoch) {
  auto table = std::make_unique<HostPageTable>();
  std::vector<char> buffer(3 * 4096);
  const auto page = (reinterpret_cast<std::uintptr_t>(buffer.data()) + 4095) & ~std::uintptr_t{4095};
  EXPECT_FALSE(table->contains(page));
  table->insert(page, address_space::epoch());
  EXPECT_TRUE(table->contains(page));
  EXPECT_TRUE(table->contains(page + 4095));
  EXPECT_FALSE(table->contains(page + 4096)) << "the next page was never classified";
  EXPECT_FALSE(table->contains(page + 4096 * 4096)) << "another page in the same slot";
  void* mapped = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  EXPECT_FALSE(table->contains(page)) << "an answer outlived a change of the address space";
  munmap(mapped, 4096);
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
