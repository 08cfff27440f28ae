#include "fuzz_typemap.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace gddt_test::fuzz {
namespace {

// Collects copies of child typemaps placed at byte offsets, in typemap order, and the bounds
// they imply.
class TypemapBuilder {
 public:
  explicit TypemapBuilder(std::size_t max_runs) : max_runs_(max_runs) {}

  bool place(const Typemap& child, std::int64_t offset) {
    for (const ByteRun& run : child.runs) {
      if (!append(run.displacement + offset, run.length)) return false;
    }
    Bounds& bounds = child.explicit_bounds ? marked_ : plain_;
    bounds.include(child.lb + offset, child.ub + offset);
    map_.alignment = std::max(map_.alignment, child.alignment);
    return true;
  }

  bool append(std::int64_t displacement, std::int64_t length) {
    if (length == 0) return true;
    map_.size += length;
    if (!map_.runs.empty()) {
      ByteRun& last = map_.runs.back();
      if (last.displacement + last.length == displacement) {
        last.length += length;
        return true;
      }
    }
    if (map_.runs.size() >= max_runs_) return false;
    map_.runs.push_back({displacement, length});
    return true;
  }

  // Pads the extent so far up to the alignment so far, unless a marker fixes the bounds.
  void pad() {
    if (marked_.any || !plain_.any) return;
    const std::int64_t remainder = (plain_.ub - plain_.lb) % map_.alignment;
    if (remainder != 0) plain_.ub += map_.alignment - remainder;
  }

  // Markers win over plain bounds (for copies of one child the two coincide).
  Typemap finish() {
    const Bounds& bounds = marked_.any ? marked_ : plain_;
    if (bounds.any) {
      map_.lb = bounds.lb;
      map_.ub = bounds.ub;
      map_.explicit_bounds = marked_.any;
    }
    return std::move(map_);
  }

  // Subarray and darray: the data of the elements, bounds fixed by the constructor.
  Typemap finish_resized(std::int64_t lb, std::int64_t ub) {
    map_.lb = lb;
    map_.ub = ub;
    map_.explicit_bounds = true;
    return std::move(map_);
  }

 private:
  struct Bounds {
    bool any = false;
    std::int64_t lb = 0;
    std::int64_t ub = 0;
    void include(std::int64_t low, std::int64_t high) {
      lb = any ? std::min(lb, low) : low;
      ub = any ? std::max(ub, high) : high;
      any = true;
    }
  };

  std::size_t max_runs_;
  Typemap map_;
  Bounds plain_;
  Bounds marked_;
};

// Global indices one process owns along one dimension of a darray, in increasing order.
std::vector<int> darray_indices(int global_size, int distribution, int darg, int processes,
                                int coordinate) {
  std::vector<int> indices;
  if (distribution == MPI_DISTRIBUTE_NONE) {
    for (int i = 0; i < global_size; ++i) indices.push_back(i);
  } else if (distribution == MPI_DISTRIBUTE_BLOCK) {
    const int block = darg == MPI_DISTRIBUTE_DFLT_DARG
                          ? (global_size + processes - 1) / processes
                          : darg;
    for (int i = coordinate * block; i < std::min(global_size, (coordinate + 1) * block); ++i)
      indices.push_back(i);
  } else {
    const int block = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    for (int start = coordinate * block; start < global_size; start += processes * block)
      for (int i = start; i < std::min(global_size, start + block); ++i) indices.push_back(i);
  }
  return indices;
}

// Places one child copy per index tuple of the cross product of `indices` (one list per
// dimension) in the order MPI_ORDER_C or MPI_ORDER_FORTRAN lays them out.
bool place_array_elements(TypemapBuilder* builder, const Typemap& element,
                          const std::vector<int>& sizes,
                          const std::vector<std::vector<int>>& indices, int order) {
  const size_t ndims = sizes.size();
  for (const std::vector<int>& list : indices)
    if (list.empty()) return true;
  // Dimension visited fastest first; its stride in elements.
  std::vector<size_t> fastest_first(ndims);
  for (size_t i = 0; i < ndims; ++i) fastest_first[i] = order == MPI_ORDER_C ? ndims - 1 - i : i;
  std::vector<std::int64_t> stride(ndims);
  std::int64_t elements = 1;
  for (size_t dim : fastest_first) {
    stride[dim] = elements;
    elements *= sizes[dim];
  }
  std::vector<size_t> position(ndims, 0);
  for (;;) {
    std::int64_t flat = 0;
    for (size_t dim = 0; dim < ndims; ++dim) flat += indices[dim][position[dim]] * stride[dim];
    if (!builder->place(element, flat * element.extent())) return false;
    size_t k = 0;
    for (; k < ndims; ++k) {
      const size_t dim = fastest_first[k];
      if (++position[dim] < indices[dim].size()) break;
      position[dim] = 0;
    }
    if (k == ndims) return true;
  }
}

// How one expansion treats bounds.
struct Rules {
  PaddingRule padding;
  std::size_t max_runs;
  const LibraryBoundsMap* library_bounds;
};

bool expand_node(const TypeNode& node, const Rules& rules, Typemap* map);

bool expand(const TypeNode& node, const Rules& rules, Typemap* map) {
  if (!expand_node(node, rules, map)) return false;
  if (rules.library_bounds != nullptr) {
    const auto found = rules.library_bounds->find(&node);
    if (found != rules.library_bounds->end()) {
      map->lb = found->second.lb;
      map->ub = found->second.lb + found->second.extent;
    }
  }
  return true;
}

bool expand_node(const TypeNode& node, const Rules& rules, Typemap* map) {
  TypemapBuilder builder(rules.max_runs);
  if (node.constructor == Constructor::kNamed) {
    const NamedType& named = named_type(node.named);
    for (const ByteRun& run : named.layout) builder.append(run.displacement, run.length);
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(node.named, &lb, &extent);
    Typemap result = builder.finish();
    result.lb = lb;
    result.ub = lb + extent;
    result.alignment = named.alignment;
    *map = std::move(result);
    return true;
  }
  const bool pad_every_add = rules.padding == PaddingRule::kAfterEveryAdd;
  if (node.constructor == Constructor::kStruct) {
    for (size_t i = 0; i < node.children.size(); ++i) {
      Typemap child;
      if (!expand(node.children[i], rules, &child)) return false;
      for (int j = 0; j < node.blocklengths[i]; ++j)
        if (!builder.place(child, node.displacements[i] + j * child.extent())) return false;
      if (pad_every_add && node.blocklengths[i] > 0) builder.pad();
    }
    builder.pad();
    *map = builder.finish();
    return true;
  }

  Typemap child;
  if (!expand(node.children[0], rules, &child)) return false;
  const std::int64_t extent = child.extent();
  auto place_blocks = [&](std::int64_t first_offset, int blocklength) {
    for (int j = 0; j < blocklength; ++j)
      if (!builder.place(child, first_offset + j * extent)) return false;
    return true;
  };
  switch (node.constructor) {
    case Constructor::kContiguous:
      if (!place_blocks(0, node.count)) return false;
      break;
    case Constructor::kVector:
    case Constructor::kHvector: {
      const std::int64_t stride =
          node.constructor == Constructor::kVector ? node.stride * extent : node.stride;
      for (int i = 0; i < node.count; ++i)
        if (!place_blocks(i * stride, node.blocklength)) return false;
      break;
    }
    case Constructor::kIndexed:
    case Constructor::kHindexed:
    case Constructor::kIndexedBlock:
    case Constructor::kHindexedBlock: {
      const bool in_bytes = displacements_in_bytes(node.constructor);
      const bool single_blocklength = one_blocklength(node.constructor);
      for (size_t i = 0; i < node.displacements.size(); ++i) {
        const std::int64_t offset = in_bytes ? node.displacements[i] : node.displacements[i] * extent;
        const int blocklength = single_blocklength ? node.blocklength : node.blocklengths[i];
        if (!place_blocks(offset, blocklength)) return false;
        if (pad_every_add && blocklength > 0) builder.pad();
      }
      break;
    }
    case Constructor::kSubarray:
    case Constructor::kDarray: {
      const size_t ndims = node.sizes.size();
      std::vector<std::vector<int>> indices(ndims);
      // A darray's process grid is row-major whatever the array order (MPI-4.0 5.1.4).
      std::vector<int> coordinates(ndims);
      if (node.constructor == Constructor::kDarray) {
        int rest = node.grid_rank;
        for (size_t dim = ndims; dim-- > 0;) {
          coordinates[dim] = rest % node.process_grid[dim];
          rest /= node.process_grid[dim];
        }
      }
      std::int64_t elements = 1;
      for (size_t dim = 0; dim < ndims; ++dim) {
        elements *= node.sizes[dim];
        if (node.constructor == Constructor::kSubarray) {
          for (int i = 0; i < node.subsizes[dim]; ++i) indices[dim].push_back(node.starts[dim] + i);
        } else {
          indices[dim] = darray_indices(node.sizes[dim], node.distributions[dim], node.dargs[dim],
                                        node.process_grid[dim], coordinates[dim]);
        }
      }
      if (!place_array_elements(&builder, child, node.sizes, indices, node.order)) return false;
      *map = builder.finish_resized(0, elements * extent);
      return true;
    }
    case Constructor::kResized:
      if (!place_blocks(0, 1)) return false;
      *map = builder.finish_resized(node.resized_lb, node.resized_lb + node.resized_extent);
      return true;
    case Constructor::kDup:
      *map = std::move(child);
      return true;
    case Constructor::kNamed:
    case Constructor::kStruct:
      break;
  }
  if (pad_every_add) builder.pad();
  *map = builder.finish();
  return true;
}

}  // namespace

std::int64_t Typemap::true_lb() const {
  std::int64_t low = std::numeric_limits<std::int64_t>::max();
  for (const ByteRun& run : runs) low = std::min(low, run.displacement);
  return runs.empty() ? 0 : low;
}

std::int64_t Typemap::true_ub() const {
  std::int64_t high = std::numeric_limits<std::int64_t>::min();
  for (const ByteRun& run : runs) high = std::max(high, run.displacement + run.length);
  return runs.empty() ? 0 : high;
}

bool expand_typemap(const TypeNode& node, PaddingRule padding, std::size_t max_runs, Typemap* map,
                    const LibraryBoundsMap* library_bounds) {
  return expand(node, Rules{padding, max_runs, library_bounds}, map);
}

void model_pack(const Typemap& map, std::int64_t count, const unsigned char* typed_origin,
                unsigned char* packed) {
  for (std::int64_t i = 0; i < count; ++i) {
    const unsigned char* element = typed_origin + i * map.extent();
    for (const ByteRun& run : map.runs) {
      std::memcpy(packed, element + run.displacement, static_cast<size_t>(run.length));
      packed += run.length;
    }
  }
}

void model_unpack(const Typemap& map, std::int64_t count, const unsigned char* packed,
                  unsigned char* typed_origin) {
  for (std::int64_t i = 0; i < count; ++i) {
    unsigned char* element = typed_origin + i * map.extent();
    for (const ByteRun& run : map.runs) {
      std::memcpy(element + run.displacement, packed, static_cast<size_t>(run.length));
      packed += run.length;
    }
  }
}

bool overlaps(const Typemap& map, std::int64_t count) {
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  ranges.reserve(map.runs.size() * static_cast<size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    for (const ByteRun& run : map.runs)
      ranges.emplace_back(run.displacement + i * map.extent(),
                          run.displacement + i * map.extent() + run.length);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) return true;
  return false;
}

}  // namespace gddt_test::fuzz
