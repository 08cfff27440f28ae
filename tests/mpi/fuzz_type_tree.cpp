#include "fuzz_type_tree.hpp"

#include <algorithm>
#include <sstream>

#include "fuzz_named_types.hpp"

namespace gddt_test::fuzz {
namespace {

std::vector<MPI_Aint> to_aints(const std::vector<std::int64_t>& values) {
  return std::vector<MPI_Aint>(values.begin(), values.end());
}

std::vector<int> to_ints(const std::vector<std::int64_t>& values) {
  return std::vector<int>(values.begin(), values.end());
}

#if MPI_VERSION >= 4
template <typename T>
std::vector<MPI_Count> to_counts(const std::vector<T>& values) {
  return std::vector<MPI_Count>(values.begin(), values.end());
}

// The same constructor through MPI-4's large-count form: the library then describes the type
// to gddt only through the _c queries. Named types, dup and the rest have none.
bool call_large_count_constructor(const TypeNode& node, const std::vector<MPI_Datatype>& children,
                                  MPI_Datatype* out, int* rc) {
  const MPI_Count blocks = static_cast<MPI_Count>(node.displacements.size());
  const int ndims = static_cast<int>(node.sizes.size());
  const std::vector<MPI_Count> lengths = to_counts(node.blocklengths);
  const std::vector<MPI_Count> displacements = to_counts(node.displacements);
  switch (node.constructor) {
    case Constructor::kContiguous:
      *rc = MPI_Type_contiguous_c(node.count, children[0], out);
      return true;
    case Constructor::kVector:
      *rc = MPI_Type_vector_c(node.count, node.blocklength, node.stride, children[0], out);
      return true;
    case Constructor::kHvector:
      *rc = MPI_Type_create_hvector_c(node.count, node.blocklength, node.stride, children[0], out);
      return true;
    case Constructor::kIndexed:
      *rc = MPI_Type_indexed_c(blocks, lengths.data(), displacements.data(), children[0], out);
      return true;
    case Constructor::kHindexed:
      *rc = MPI_Type_create_hindexed_c(blocks, lengths.data(), displacements.data(), children[0], out);
      return true;
    case Constructor::kIndexedBlock:
      *rc = MPI_Type_create_indexed_block_c(blocks, node.blocklength, displacements.data(), children[0], out);
      return true;
    case Constructor::kHindexedBlock:
      *rc = MPI_Type_create_hindexed_block_c(blocks, node.blocklength, displacements.data(), children[0], out);
      return true;
    case Constructor::kStruct:
      *rc = MPI_Type_create_struct_c(blocks, lengths.data(), displacements.data(), children.data(), out);
      return true;
    case Constructor::kSubarray: {
      const std::vector<MPI_Count> sizes = to_counts(node.sizes), subsizes = to_counts(node.subsizes),
                                   starts = to_counts(node.starts);
      *rc = MPI_Type_create_subarray_c(ndims, sizes.data(), subsizes.data(), starts.data(), node.order, children[0],
                                       out);
      return true;
    }
    case Constructor::kDarray: {
      int grid_size = 1;
      for (int extent : node.process_grid) grid_size *= extent;
      const std::vector<MPI_Count> sizes = to_counts(node.sizes);
      *rc = MPI_Type_create_darray_c(grid_size, node.grid_rank, ndims, sizes.data(), node.distributions.data(),
                                     node.dargs.data(), node.process_grid.data(), node.order, children[0], out);
      return true;
    }
    case Constructor::kResized:
      *rc = MPI_Type_create_resized_c(children[0], node.resized_lb, node.resized_extent, out);
      return true;
    case Constructor::kNamed:
    case Constructor::kDup:
      return false;
  }
  return false;
}
#endif

int call_constructor(const TypeNode& node, const std::vector<MPI_Datatype>& children, bool large_count,
                     MPI_Datatype* out) {
#if MPI_VERSION >= 4
  int rc = MPI_SUCCESS;
  if (large_count && call_large_count_constructor(node, children, out, &rc)) return rc;
#else
  (void)large_count;
#endif
  const int blocks = static_cast<int>(node.displacements.size());
  const int ndims = static_cast<int>(node.sizes.size());
  switch (node.constructor) {
    case Constructor::kNamed:
      *out = node.named;
      return MPI_SUCCESS;
    case Constructor::kContiguous:
      return MPI_Type_contiguous(node.count, children[0], out);
    case Constructor::kVector:
      return MPI_Type_vector(node.count, node.blocklength, static_cast<int>(node.stride),
                             children[0], out);
    case Constructor::kHvector:
      return MPI_Type_create_hvector(node.count, node.blocklength, node.stride, children[0], out);
    case Constructor::kIndexed: {
      std::vector<int> displacements = to_ints(node.displacements);
      return MPI_Type_indexed(blocks, node.blocklengths.data(), displacements.data(), children[0],
                              out);
    }
    case Constructor::kHindexed: {
      std::vector<MPI_Aint> displacements = to_aints(node.displacements);
      return MPI_Type_create_hindexed(blocks, node.blocklengths.data(), displacements.data(),
                                      children[0], out);
    }
    case Constructor::kIndexedBlock: {
      std::vector<int> displacements = to_ints(node.displacements);
      return MPI_Type_create_indexed_block(blocks, node.blocklength, displacements.data(),
                                           children[0], out);
    }
    case Constructor::kHindexedBlock: {
      std::vector<MPI_Aint> displacements = to_aints(node.displacements);
      return MPI_Type_create_hindexed_block(blocks, node.blocklength, displacements.data(),
                                            children[0], out);
    }
    case Constructor::kStruct: {
      std::vector<MPI_Aint> displacements = to_aints(node.displacements);
      return MPI_Type_create_struct(blocks, node.blocklengths.data(), displacements.data(),
                                    children.data(), out);
    }
    case Constructor::kSubarray:
      return MPI_Type_create_subarray(ndims, node.sizes.data(), node.subsizes.data(),
                                      node.starts.data(), node.order, children[0], out);
    case Constructor::kDarray: {
      int grid_size = 1;
      for (int extent : node.process_grid) grid_size *= extent;
      return MPI_Type_create_darray(grid_size, node.grid_rank, ndims, node.sizes.data(),
                                    node.distributions.data(), node.dargs.data(),
                                    node.process_grid.data(), node.order, children[0], out);
    }
    case Constructor::kResized:
      return MPI_Type_create_resized(children[0], node.resized_lb, node.resized_extent, out);
    case Constructor::kDup:
      return MPI_Type_dup(children[0], out);
  }
  return MPI_ERR_INTERN;
}

// Frees the intermediate handles, or hands them to `kept`.
void free_derived(std::vector<std::pair<const TypeNode*, MPI_Datatype>>* handles, KeptHandles* kept) {
  for (auto& [node, handle] : *handles) {
    if (handle == MPI_DATATYPE_NULL) continue;
    if (kept != nullptr)
      (*kept)[node] = handle;
    else
      MPI_Type_free(&handle);
  }
}

int build(const TypeNode& node, std::uint64_t commit_mask, int* next_bit, MPI_Datatype* out,
          LibraryBoundsMap* bounds, KeptHandles* kept) {
  *out = MPI_DATATYPE_NULL;
  if (node.constructor == Constructor::kNamed) return call_constructor(node, {}, false, out);
  std::vector<MPI_Datatype> children;   // what the constructor gets
  std::vector<std::pair<const TypeNode*, MPI_Datatype>> derived;  // what this call must free
  for (const TypeNode& child : node.children) {
    MPI_Datatype handle;
    int rc = build(child, commit_mask, next_bit, &handle, bounds, kept);
    if (rc != MPI_SUCCESS) {
      free_derived(&derived, kept);
      return rc;
    }
    if (child.constructor != Constructor::kNamed) {
      const int bit = (*next_bit)++ % 64;
      if (commit_mask >> bit & 1) MPI_Type_commit(&handle);
      derived.emplace_back(&child, handle);
    }
    children.push_back(handle);
  }
  // Where the library has them, the mask's high bits pick MPI-4's large-count constructors.
  const bool large_count = (commit_mask >> (63 - *next_bit % 64) & 1) != 0;
  int rc = call_constructor(node, children, large_count, out);
  free_derived(&derived, kept);
  if (rc == MPI_SUCCESS) {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(*out, &lb, &extent);
    (*bounds)[&node] = {lb, extent};
  }
  return rc;
}

template <typename T>
std::string list(const std::vector<T>& values) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  out << ']';
  return out.str();
}

std::string distribution_name(int distribution, int darg) {
  std::string name = distribution == MPI_DISTRIBUTE_BLOCK    ? "BLOCK"
                     : distribution == MPI_DISTRIBUTE_CYCLIC ? "CYCLIC"
                                                             : "NONE";
  if (distribution != MPI_DISTRIBUTE_NONE && darg != MPI_DISTRIBUTE_DFLT_DARG)
    name += "(" + std::to_string(darg) + ")";
  return name;
}

}  // namespace

int build_datatype(const TypeNode& node, std::uint64_t commit_mask, MPI_Datatype* datatype,
                   LibraryBoundsMap* bounds, KeptHandles* kept) {
  int next_bit = 0;
  return build(node, commit_mask, &next_bit, datatype, bounds, kept);
}

namespace {

// The handles get_contents returns for a derived datatype (none for a named one), through the
// _c queries where the library has them: MPICH 4 aborts on the int ones for a type a
// large-count constructor made.
std::vector<MPI_Datatype> contents_of(MPI_Datatype datatype) {
  std::vector<MPI_Datatype> types;
  int combiner = MPI_UNDEFINED;
#if MPI_VERSION >= 4
  MPI_Count integers = 0, addresses = 0, large_counts = 0, datatypes = 0;
  MPI_Type_get_envelope_c(datatype, &integers, &addresses, &large_counts, &datatypes, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return types;
  std::vector<int> ints(static_cast<size_t>(integers) + 1);
  std::vector<MPI_Aint> aints(static_cast<size_t>(addresses) + 1);
  std::vector<MPI_Count> counts(static_cast<size_t>(large_counts) + 1);
  types.resize(static_cast<size_t>(datatypes));
  const int rc = MPI_Type_get_contents_c(datatype, integers, addresses, large_counts, datatypes, ints.data(),
                                         aints.data(), counts.data(), types.data());
#else
  int integers = 0, addresses = 0, datatypes = 0;
  MPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return types;
  std::vector<int> ints(static_cast<size_t>(integers) + 1);
  std::vector<MPI_Aint> aints(static_cast<size_t>(addresses) + 1);
  types.resize(static_cast<size_t>(datatypes));
  const int rc =
      MPI_Type_get_contents(datatype, integers, addresses, datatypes, ints.data(), aints.data(), types.data());
#endif
  if (rc != MPI_SUCCESS) types.clear();
  return types;
}

bool is_named(MPI_Datatype datatype) {
  int combiner = MPI_UNDEFINED;
#if MPI_VERSION >= 4
  MPI_Count integers, addresses, large_counts, datatypes;
  MPI_Type_get_envelope_c(datatype, &integers, &addresses, &large_counts, &datatypes, &combiner);
#else
  int integers, addresses, datatypes;
  MPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner);
#endif
  return combiner == MPI_COMBINER_NAMED;
}

}  // namespace

void walk_contents(MPI_Datatype datatype) {
  for (MPI_Datatype child : contents_of(datatype)) {
    walk_contents(child);
    if (!is_named(child)) MPI_Type_free(&child);
  }
}

const char* named_type_name(MPI_Datatype named) { return named_type(named).name; }

std::string describe(const TypeNode& node) {
  std::ostringstream out;
  const std::string order = node.order == MPI_ORDER_C ? "C" : "Fortran";
  switch (node.constructor) {
    case Constructor::kNamed:
      return named_type_name(node.named);
    case Constructor::kContiguous:
      out << "contiguous(" << node.count;
      break;
    case Constructor::kVector:
      out << "vector(" << node.count << ", bl=" << node.blocklength << ", stride=" << node.stride;
      break;
    case Constructor::kHvector:
      out << "hvector(" << node.count << ", bl=" << node.blocklength << ", stride=" << node.stride
          << "B";
      break;
    case Constructor::kIndexed:
      out << "indexed(bl=" << list(node.blocklengths) << ", disp=" << list(node.displacements);
      break;
    case Constructor::kHindexed:
      out << "hindexed(bl=" << list(node.blocklengths) << ", disp=" << list(node.displacements)
          << "B";
      break;
    case Constructor::kIndexedBlock:
      out << "indexed_block(bl=" << node.blocklength << ", disp=" << list(node.displacements);
      break;
    case Constructor::kHindexedBlock:
      out << "hindexed_block(bl=" << node.blocklength << ", disp=" << list(node.displacements)
          << "B";
      break;
    case Constructor::kStruct: {
      out << "struct(";
      for (size_t i = 0; i < node.children.size(); ++i)
        out << (i ? ", " : "") << node.blocklengths[i] << " x " << describe(node.children[i])
            << " @" << node.displacements[i];
      out << ')';
      return out.str();
    }
    case Constructor::kSubarray:
      out << "subarray(sizes=" << list(node.sizes) << ", subsizes=" << list(node.subsizes)
          << ", starts=" << list(node.starts) << ", " << order;
      break;
    case Constructor::kDarray: {
      out << "darray(rank " << node.grid_rank << " of grid " << list(node.process_grid)
          << ", gsizes=" << list(node.sizes) << ", [";
      for (size_t i = 0; i < node.distributions.size(); ++i)
        out << (i ? "," : "") << distribution_name(node.distributions[i], node.dargs[i]);
      out << "], " << order;
      break;
    }
    case Constructor::kResized:
      out << "resized(lb=" << node.resized_lb << ", extent=" << node.resized_extent;
      break;
    case Constructor::kDup:
      out << "dup(";
      out << describe(node.children[0]) << ')';
      return out.str();
  }
  out << ", " << describe(node.children[0]) << ')';
  return out.str();
}

bool contains_named_type(const TypeNode& node, MPI_Datatype named) {
  if (node.constructor == Constructor::kNamed) return node.named == named;
  return std::any_of(node.children.begin(), node.children.end(),
                     [&](const TypeNode& child) { return contains_named_type(child, named); });
}

int depth(const TypeNode& node) {
  int deepest = -1;
  for (const TypeNode& child : node.children) deepest = std::max(deepest, depth(child));
  return deepest + 1;
}

}  // namespace gddt_test::fuzz
