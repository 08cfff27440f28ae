#include "fuzz_random.hpp"

#include <algorithm>
#include <cstdlib>

#include "fuzz_named_types.hpp"
#include "fuzz_typemap.hpp"

namespace gddt_test::fuzz {

std::uint64_t Rng::next() {
  // splitmix64: tiny, and every seed (0 included) gives a good stream.
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::int64_t Rng::between(std::int64_t low, std::int64_t high) {
  const std::uint64_t span = static_cast<std::uint64_t>(high - low) + 1;
  return low + static_cast<std::int64_t>(next() % span);
}

std::uint64_t type_seed(std::uint64_t seed, std::uint64_t index) {
  Rng mixer(seed ^ (index * 0xd1b54a32d192ed03ULL));
  return mixer.next();
}

namespace {

// The generator's choices depend on extents; one fixed padding rule keeps a seed's types the
// same whichever MPI library runs them.
constexpr PaddingRule kGenerationPadding = PaddingRule::kStructOnly;

class Generator {
 public:
  Generator(Rng* rng, const TypeLimits& limits, int world_rank)
      : rng_(*rng), limits_(limits), world_rank_(world_rank) {}

  TypeNode type(int levels_left, bool top) {
    const std::int64_t leaf_odds = top ? 10 : 3;
    if (levels_left == 0 || rng_.one_in(leaf_odds)) return named();
    TypeNode node;
    node.constructor = static_cast<Constructor>(
        rng_.between(static_cast<int>(Constructor::kContiguous), static_cast<int>(Constructor::kDup)));
    if (node.constructor == Constructor::kStruct) {
      fill_struct(&node, levels_left);
      return node;
    }
    node.children.push_back(child_type(levels_left));
    Typemap child = model(node.children[0]);
    // Open MPI refuses arrays of elements without extent.
    if ((node.constructor == Constructor::kSubarray || node.constructor == Constructor::kDarray) &&
        child.extent() <= 0) {
      node.children[0] = named();
      child = model(node.children[0]);
    }
    const std::int64_t extent = std::max<std::int64_t>(child.extent(), 1);
    switch (node.constructor) {
      case Constructor::kContiguous:
        node.count = count();
        break;
      case Constructor::kVector:
        node.count = count();
        node.blocklength = blocklength(10);
        node.stride = rng_.between(-4, 4);
        break;
      case Constructor::kHvector:
        node.count = count();
        node.blocklength = blocklength(10);
        node.stride = byte_offset(extent);
        break;
      case Constructor::kIndexed:
      case Constructor::kHindexed:
      case Constructor::kIndexedBlock:
      case Constructor::kHindexedBlock: {
        const bool in_bytes = displacements_in_bytes(node.constructor);
        const bool single_blocklength = one_blocklength(node.constructor);
        const int blocks = rng_.one_in(10) ? 0 : static_cast<int>(rng_.between(1, 4));
        node.blocklength = blocklength(10);
        for (int i = 0; i < blocks; ++i) {
          if (!single_blocklength) node.blocklengths.push_back(blocklength(5));
          node.displacements.push_back(in_bytes ? byte_offset(extent) : rng_.between(-6, 6));
        }
        break;
      }
      case Constructor::kSubarray:
        fill_subarray(&node);
        break;
      case Constructor::kDarray:
        fill_darray(&node);
        break;
      case Constructor::kResized:
        fill_resized(&node, child);
        break;
      case Constructor::kDup:
      case Constructor::kNamed:
      case Constructor::kStruct:
        break;
    }
    return node;
  }

 private:
  TypeNode named() {
    const std::vector<NamedType>& table = named_types();
    TypeNode node;
    if (limits_.named_leaf != MPI_DATATYPE_NULL) {
      node.named = limits_.named_leaf;
      return node;
    }
    node.named = table[static_cast<size_t>(rng_.between(0, static_cast<int>(table.size()) - 1))].handle;
    return node;
  }

  // Zero counts and blocklengths make empty types, tested as whole types. Inside another
  // type an empty one has no data but still has bounds, and there the libraries disagree
  // with each other and with the standard (vector(2, 1, 3, resized(empty, -3, 5)): Open MPI
  // lb -3 extent 20 as the standard says, MPICH lb 0 extent 0; contiguous(2, ...) of the
  // same: lb 0 extent 0 in both), so children always have data.
  TypeNode child_type(int levels_left) {
    TypeNode child = type(levels_left - 1, false);
    return model(child).size > 0 ? child : named();
  }

  // A child too large to expand makes the whole type too large: the caller draws again.
  Typemap model(const TypeNode& node) {
    Typemap map;
    if (!expand_typemap(node, kGenerationPadding, limits_.max_runs, &map)) map = Typemap{};
    return map;
  }

  int count() { return rng_.one_in(8) ? 0 : static_cast<int>(rng_.between(1, 4)); }
  int blocklength(int zero_odds) {
    return rng_.one_in(zero_odds) ? 0 : static_cast<int>(rng_.between(1, 3));
  }

  // Mostly whole extents (the realistic case), sometimes any byte, negative ones included.
  std::int64_t byte_offset(std::int64_t extent) {
    if (rng_.one_in(3)) return rng_.between(-2 * extent - 8, 2 * extent + 8);
    return rng_.between(-3, 3) * extent + (rng_.one_in(4) ? rng_.between(-3, 3) : 0);
  }

  void fill_struct(TypeNode* node, int levels_left) {
    const int members = static_cast<int>(rng_.between(1, 4));
    const bool natural_layout = rng_.one_in(2);
    std::int64_t offset = 0;
    for (int i = 0; i < members; ++i) {
      node->children.push_back(child_type(levels_left));
      const Typemap child = model(node->children.back());
      const int blocks = blocklength(6);
      node->blocklengths.push_back(blocks);
      if (natural_layout) {
        offset = (offset + child.alignment - 1) / child.alignment * child.alignment;
        node->displacements.push_back(offset);
        offset += blocks * child.extent();
      } else {
        node->displacements.push_back(rng_.between(-64, 128));
      }
    }
  }

  void fill_subarray(TypeNode* node) {
    const int ndims = static_cast<int>(rng_.between(1, 3));
    node->order = rng_.one_in(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    for (int dim = 0; dim < ndims; ++dim) {
      const int size = static_cast<int>(rng_.between(1, 5));
      const int subsize = static_cast<int>(rng_.between(1, size));
      node->sizes.push_back(size);
      node->subsizes.push_back(subsize);
      node->starts.push_back(static_cast<int>(rng_.between(0, size - subsize)));
    }
  }

  void fill_darray(TypeNode* node) {
    const int ndims = static_cast<int>(rng_.between(1, 3));
    node->order = rng_.one_in(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    int processes = 1;
    for (int dim = 0; dim < ndims; ++dim) {
      int grid = static_cast<int>(rng_.between(1, 3));
      if (processes * grid > 6) grid = 1;
      processes *= grid;
      const int global = static_cast<int>(rng_.between(1, 7));
      int distribution = grid == 1 && rng_.one_in(3) ? MPI_DISTRIBUTE_NONE
                         : rng_.one_in(2)             ? MPI_DISTRIBUTE_BLOCK
                                                      : MPI_DISTRIBUTE_CYCLIC;
      int darg = MPI_DISTRIBUTE_DFLT_DARG;
      if (distribution == MPI_DISTRIBUTE_BLOCK && rng_.one_in(4))
        darg = (global + grid - 1) / grid + static_cast<int>(rng_.between(0, 2));
      if (distribution == MPI_DISTRIBUTE_CYCLIC && rng_.one_in(3))
        darg = static_cast<int>(rng_.between(1, 3));
      node->process_grid.push_back(grid);
      node->sizes.push_back(global);
      node->distributions.push_back(distribution);
      node->dargs.push_back(darg);
    }
    node->grid_rank = static_cast<int>((rng_.between(0, processes - 1) + world_rank_) % processes);
  }

  // A non-zero lower bound, and an extent smaller than, equal to or larger than the data's.
  void fill_resized(TypeNode* node, const Typemap& child) {
    const std::int64_t true_extent = std::max<std::int64_t>(child.true_ub() - child.true_lb(), 1);
    node->resized_lb = rng_.one_in(4) ? child.lb : child.true_lb() + rng_.between(-16, 16);
    switch (rng_.between(0, 2)) {
      case 0:
        node->resized_extent = rng_.between(1, std::max<std::int64_t>(true_extent - 1, 1));
        break;
      case 1:
        node->resized_extent = true_extent;
        break;
      default:
        node->resized_extent = true_extent + rng_.between(1, 48);
        break;
    }
  }

  Rng& rng_;
  const TypeLimits& limits_;
  int world_rank_;
};

// Bytes one element touches, bounds and data together.
std::int64_t span(const Typemap& map) {
  return std::max(map.ub, map.true_ub()) - std::min(map.lb, map.true_lb());
}

}  // namespace

TypeNode random_type(Rng* rng, const TypeLimits& limits, int world_rank) {
  Generator generator(rng, limits, world_rank);
  for (;;) {
    TypeNode node = generator.type(limits.max_depth, true);
    Typemap map;
    // Up to four elements are tested, each extent apart.
    if (expand_typemap(node, kGenerationPadding, limits.max_runs, &map) &&
        span(map) + 3 * std::abs(map.extent()) <= limits.max_span)
      return node;
  }
}

}  // namespace gddt_test::fuzz
