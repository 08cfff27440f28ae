#include "trial.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "../mpi/fuzz_reference.hpp"

namespace gddt_test::trial {

void touched(const std::vector<Segment>& segments, std::int64_t* low, std::int64_t* high) {
  *low = 0;
  *high = 0;
  bool first = true;
  for (const Segment& s : segments) {
    int size = 0;
    MPI_Type_size(s.datatype, &size);
    if (s.count == 0 || size == 0) continue;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    MPI_Type_get_extent(s.datatype, &lb, &extent);
    MPI_Type_get_true_extent(s.datatype, &true_lb, &true_extent);
    const std::int64_t repeat = static_cast<std::int64_t>(s.count - 1) * extent;
    const std::int64_t l = s.displacement + std::min<std::int64_t>(true_lb, true_lb + repeat);
    const std::int64_t h =
        s.displacement + std::max<std::int64_t>(true_lb + true_extent, true_lb + true_extent + repeat);
    *low = first ? l : std::min(*low, l);
    *high = first ? h : std::max(*high, h);
    first = false;
  }
}

Trial::Trial(const p2p::Context& context, std::string what, std::uint64_t seed)
    : Trial(context, std::move(what), seed, context.memory) {}

Trial::Trial(const p2p::Context& context, std::string what, std::uint64_t seed, MemoryKind memory)
    : context_(context), what_(std::move(what)), rng_(seed), memory_(memory) {}

int Trial::add(const std::vector<Segment>& segments, bool small_ints) {
  std::int64_t low = 0, high = 0;
  touched(segments, &low, &high);
  Image image;
  image.origin = kMargin - low;
  image.initial.resize(static_cast<std::size_t>(high - low + 2 * kMargin));
  for (std::size_t i = 0; i + 4 <= image.initial.size(); i += 4) {
    const auto word = static_cast<std::uint32_t>(small_ints ? rng_.between(0, 999) : rng_.next());
    std::memcpy(image.initial.data() + i, &word, 4);
  }
  images_.push_back(std::move(image));
  return static_cast<int>(images_.size()) - 1;
}

void Trial::run(const std::function<int(bool reference, const std::vector<void*>& buffers)>& call) {
  std::vector<gddt_test::Buffer> device;
  std::vector<void*> pointers;
  for (const Image& image : images_) {
    device.emplace_back(memory_, image.initial.size());
    device.back().upload(image.initial.data(), image.initial.size());
    pointers.push_back(device.back().data() + image.origin);
  }
  int rc = call(false, pointers);
  p2p::expect(rc == MPI_SUCCESS, what_ + ": through gddt returned " + std::to_string(rc));
  std::vector<Bytes> reference;
  pointers.clear();
  for (const Image& image : images_) reference.push_back(image.initial);
  for (std::size_t i = 0; i < images_.size(); ++i) pointers.push_back(reference[i].data() + images_[i].origin);
  rc = call(true, pointers);
  p2p::expect(rc == MPI_SUCCESS, what_ + ": through the library returned " + std::to_string(rc));
  for (std::size_t i = 0; i < images_.size(); ++i) {
    const Bytes got = device[i].download();
    const auto mismatch = std::mismatch(got.begin(), got.end(), reference[i].begin());
    p2p::expect(mismatch.first == got.end(),
                what_ + ": buffer " + std::to_string(i) + " differs from the library's result at byte " +
                    std::to_string(mismatch.first - got.begin() - images_[i].origin) + " from the buffer pointer");
  }
}

bool random_type(const p2p::Context& context, int index, Types* types, const TypeChoice& choice) {
  fuzz::Rng rng(fuzz::type_seed(context.seed, static_cast<std::uint64_t>(index)));
  fuzz::TypeLimits limits;
  limits.max_span = choice.max_span;
  const fuzz::TypeNode node = fuzz::random_type(&rng, limits, 0);
  if (fuzz::contains_named_type(node, MPI_LONG_DOUBLE)) return false;
  static const fuzz::MpiLibrary library = [] {
    std::string version;
    return fuzz::detect_mpi_library(&version);
  }();
  if (fuzz::reference_unusable(library, node) != nullptr) return false;
  // Every child committed; the high half of the mask picks the large-count constructors.
  const std::uint64_t mask = choice.large_count_constructors ? ~std::uint64_t{0} : 0xffffffffu;
  fuzz::LibraryBoundsMap bounds;
  if (fuzz::build_datatype(node, mask, &types->datatype, &bounds) != MPI_SUCCESS) return false;
  if (choice.left_out && choice.left_out(node, types->datatype)) {
    if (node.constructor != fuzz::Constructor::kNamed) MPI_Type_free(&types->datatype);
    return false;
  }
  // A named type comes as its duplicate, which the caller frees like the others.
  if (node.constructor == fuzz::Constructor::kNamed) MPI_Type_dup(node.named, &types->datatype);
  MPI_Type_commit(&types->datatype);
  int size = 0;
  MPI_Type_size(types->datatype, &size);
  MPI_Aint lb = 0;
  MPI_Type_get_extent(types->datatype, &lb, &types->extent);
  types->description = "type " + std::to_string(index) + " " + fuzz::describe(node);
  if (size > 0 && types->extent > 0) return true;
  MPI_Type_free(&types->datatype);
  return false;
}

void expect_library_classes(const std::vector<ErroneousCall>& calls) {
  for (const auto& [what, call] : calls) {
    int library = 0, through_gddt = 0;
    MPI_Error_class(call(true), &library);
    MPI_Error_class(call(false), &through_gddt);
    p2p::expect(library != MPI_SUCCESS && through_gddt == library,
                what + ": the library says class " + std::to_string(library) + ", through gddt " +
                    std::to_string(through_gddt));
  }
}

long long counter_value(const char* name) {
  using CounterFunction = int (*)(const char*, long long*);
  static const auto counter = reinterpret_cast<CounterFunction>(dlsym(RTLD_DEFAULT, "gddt_counter"));
  long long value = 0;
  return counter != nullptr && counter(name, &value) == 0 ? value : -1;
}

}  // namespace gddt_test::trial
