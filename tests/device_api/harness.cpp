// The device API CPU tests' shared helpers (harness.hpp).
#include "harness.hpp"

#include <atomic>
#include <thread>

namespace device_api_test {

int rank = 0, nranks = 1;
int failures = 0;

void on_device(int threads, const std::function<void(int)> &body) {
  std::atomic<int> running{threads};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      body(i);
      running.fetch_sub(1);
    });
  while (running.load() > 0) gddt_device_progress(nullptr);
  for (std::thread &t : pool) t.join();
}
void on_device(const std::function<void()> &body) {
  on_device(1, [&](int) { body(); });
}

std::vector<TypeCase> make_types() {
  std::vector<TypeCase> types = committed_type_cases();
  for (TypeCase &c : types) {
    CHECK_RC(gddt_device_type_create(c.type, &c.device), MPI_SUCCESS);
  }
  return types;
}

std::vector<unsigned char> buffer_for(MPI_Datatype type, int count, int seed) {
  MPI_Aint lb, extent, true_lb, true_extent;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  std::vector<unsigned char> b(static_cast<std::size_t>((count - 1) * extent + true_lb + true_extent + 16), 0xEE);
  if (seed >= 0)
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(seed * 131 + i * 7 + 1);
  return b;
}

std::vector<unsigned char> expected_for(MPI_Datatype type, int count, int seed) {
  std::vector<unsigned char> source = buffer_for(type, count, seed), out = buffer_for(type, count, -1);
  int size = 0, position = 0;
  MPI_Pack_size(count, type, MPI_COMM_WORLD, &size);
  std::vector<unsigned char> packed(size);
  MPI_Pack(source.data(), count, type, packed.data(), size, &position, MPI_COMM_WORLD);
  const int packed_bytes = position;
  position = 0;
  MPI_Unpack(packed.data(), packed_bytes, &position, out.data(), count, type, MPI_COMM_WORLD);
  return out;
}

int type_size(MPI_Datatype type) {
  int size = 0;
  MPI_Type_size(type, &size);
  return size;
}

long long counter(const char *name) {
  long long value = 0;
  gddt_counter(name, &value);
  return value;
}

}  // namespace device_api_test
