#include "onesided_types.hpp"

#include <algorithm>
#include <numeric>

#include "fuzz_random.hpp"
#include "fuzz_reference.hpp"
#include "fuzz_type_tree.hpp"
#include "fuzz_typemap.hpp"

namespace gddt_test::onesided {
namespace {

using fuzz::Constructor;
using fuzz::TypeNode;

constexpr int kMostCount = 6;
constexpr int kAttempts = 500;

fuzz::PaddingRule library_padding() {
  static const fuzz::PaddingRule rule = [] {
    std::string version;
    return fuzz::padding_rule(fuzz::detect_mpi_library(&version));
  }();
  return rule;
}

// The padding bytes of a long double are copied by the library's datatype engine and by gddt's
// stand-ins each their own way (docs/usage.md, "Same bytes as the MPI library"): left out.
bool has_long_double(const TypeNode& node) {
  return fuzz::contains_named_type(node, MPI_LONG_DOUBLE) || fuzz::contains_named_type(node, MPI_LONG_DOUBLE_INT) ||
         fuzz::contains_named_type(node, MPI_C_LONG_DOUBLE_COMPLEX);
}

// `node` built and committed into *handle, unless it is empty or `count` elements of it overlap.
bool build(const TypeNode& node, int count, std::uint64_t commit_mask, MPI_Datatype* handle) {
  if (has_long_double(node)) return false;
  fuzz::LibraryBoundsMap bounds;
  if (fuzz::build_datatype(node, commit_mask, handle, &bounds) != MPI_SUCCESS) return false;
  if (node.constructor == Constructor::kNamed) MPI_Type_dup(node.named, handle);  // a handle of our own to free
  MPI_Type_commit(handle);
  int size = 0;
  MPI_Type_size(*handle, &size);
  fuzz::Typemap map;
  if (size > 0 &&
      fuzz::expand_typemap(node, library_padding(), fuzz::TypeLimits{}.max_runs, &map, &bounds) &&
      !fuzz::overlaps(map, count))
    return true;
  MPI_Type_free(handle);
  return false;
}

// `count` elements of `element` as another type of the same signature, and its count.
TypeNode same_signature(const TypeNode& element, int count, fuzz::Rng* rng, int* wrapped_count) {
  fuzz::Typemap map;
  fuzz::expand_typemap(element, library_padding(), fuzz::TypeLimits{}.max_runs, &map);
  const std::int64_t span = std::max(map.ub, map.true_ub()) - std::min(map.lb, map.true_lb());
  TypeNode node;
  node.children.push_back(element);
  *wrapped_count = 1;
  switch (rng->between(0, 3)) {
    case 0:
      *wrapped_count = count;
      return element;
    case 1:
      node.constructor = Constructor::kContiguous;
      node.count = count;
      return node;
    case 2:
      node.constructor = Constructor::kHvector;
      node.count = count;
      node.blocklength = 1;
      node.stride = (rng->one_in(3) ? -1 : 1) * (span + rng->between(0, 16));
      return node;
    default:
      node.constructor = Constructor::kResized;
      node.resized_lb = map.lb - rng->between(0, 8);
      node.resized_extent = std::max<std::int64_t>(map.extent(), 1) + rng->between(0, 24);
      *wrapped_count = count;
      return node;
  }
}

struct Nodes {
  TypeNode origin, target, result;
  int origin_count = 1, target_count = 1, result_count = 1;
};

bool draw(MPI_Datatype leaf, std::int64_t max_span, fuzz::Rng* rng, Nodes* nodes) {
  fuzz::TypeLimits limits;
  limits.max_span = max_span;
  limits.max_depth = 3;
  limits.named_leaf = leaf;
  nodes->origin = fuzz::random_type(rng, limits, 0);
  if (leaf == MPI_DATATYPE_NULL) {
    nodes->origin_count = static_cast<int>(rng->between(1, 3));
    nodes->target = same_signature(nodes->origin, nodes->origin_count, rng, &nodes->target_count);
    nodes->result = same_signature(nodes->origin, nodes->origin_count, rng, &nodes->result_count);
    return true;
  }
  // Each drawn alone: the counts make the numbers of leaves agree.
  nodes->target = fuzz::random_type(rng, limits, 0);
  nodes->result = fuzz::random_type(rng, limits, 0);
  fuzz::Typemap maps[3];
  const TypeNode* trees[3] = {&nodes->origin, &nodes->target, &nodes->result};
  std::int64_t leaves[3];
  for (int i = 0; i < 3; ++i) {
    fuzz::expand_typemap(*trees[i], library_padding(), fuzz::TypeLimits{}.max_runs, &maps[i]);
    leaves[i] = maps[i].size;
    if (leaves[i] == 0) return false;
  }
  const std::int64_t all = std::lcm(std::lcm(leaves[0], leaves[1]), leaves[2]);
  int* counts[3] = {&nodes->origin_count, &nodes->target_count, &nodes->result_count};
  for (int i = 0; i < 3; ++i) {
    if (all / leaves[i] > kMostCount) return false;
    *counts[i] = static_cast<int>(all / leaves[i]);
  }
  return true;
}

}  // namespace

TypeTriple::~TypeTriple() {
  for (MPI_Datatype* type : {&origin, &target, &result})
    if (*type != MPI_DATATYPE_NULL) MPI_Type_free(type);
}

void make_triple(std::uint64_t seed, MPI_Datatype leaf, std::int64_t max_span, TypeTriple* triple) {
  fuzz::Rng rng(seed);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Nodes nodes;
    if (!draw(leaf, max_span, &rng, &nodes)) continue;
    const std::uint64_t mask = rng.next();
    MPI_Datatype types[3] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    const bool built = build(nodes.origin, nodes.origin_count, mask, &types[0]) &&
                       build(nodes.target, nodes.target_count, mask, &types[1]) &&
                       build(nodes.result, nodes.result_count, mask, &types[2]);
    if (!built) {
      for (MPI_Datatype& type : types)
        if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
      continue;
    }
    triple->origin = types[0];
    triple->target = types[1];
    triple->result = types[2];
    triple->origin_count = nodes.origin_count;
    triple->target_count = nodes.target_count;
    triple->result_count = nodes.result_count;
    triple->description = "origin " + std::to_string(nodes.origin_count) + " x " + fuzz::describe(nodes.origin) +
                          ", target " + std::to_string(nodes.target_count) + " x " + fuzz::describe(nodes.target) +
                          ", result " + std::to_string(nodes.result_count) + " x " + fuzz::describe(nodes.result);
    return;
  }
  // Nothing suitable drawn: the leaf itself (MPI_INT for mixed leaves).
  const MPI_Datatype named = leaf != MPI_DATATYPE_NULL ? leaf : MPI_INT;
  MPI_Type_dup(named, &triple->origin);
  MPI_Type_dup(named, &triple->target);
  MPI_Type_dup(named, &triple->result);
  for (MPI_Datatype* type : {&triple->origin, &triple->target, &triple->result}) MPI_Type_commit(type);
  triple->origin_count = triple->target_count = triple->result_count = 1;
  triple->description = std::string("1 x dup(") + fuzz::named_type_name(named) + ") each";
}

void touched(MPI_Datatype datatype, int count, std::int64_t* low, std::int64_t* high) {
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(datatype, &lb, &extent);
  MPI_Type_get_true_extent(datatype, &true_lb, &true_extent);
  const std::int64_t repeat = static_cast<std::int64_t>(count - 1) * extent;
  *low = std::min<std::int64_t>(true_lb, true_lb + repeat);
  *high = std::max<std::int64_t>(true_lb + true_extent, true_lb + true_extent + repeat);
}

}  // namespace gddt_test::onesided
