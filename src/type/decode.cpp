// Decoding an MPI datatype into a layout by walking its constructor tree with
// MPI_Type_get_envelope/get_contents. Always through the PMPI_ names, since gddt interposes
// the MPI_ ones. Sizes are read from the library; bounds are the MPI standard's, computed
// alongside the layout (bounds.hpp) and checked against the library's, whose epsilon padding
// is kept but whose mistakes are not.
#include <algorithm>
#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "type/bounds.hpp"
#include "type/contents.hpp"
#include "type/datatype.hpp"

namespace gddt::type {

namespace {

Status product(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_mul_overflow(a, b, out) ? GDDT_ERR_UNSUPPORTED : GDDT_OK;
}

Status sum(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_add_overflow(a, b, out) ? GDDT_ERR_UNSUPPORTED : GDDT_OK;
}

// make_shifted, refused when an offset would leave int64 (every offset lies within the
// true bounds, so checking those suffices).
Status shifted(const Layout& inner, std::int64_t delta, Layout* out) {
  std::int64_t unused;
  GDDT_CHECK(sum(inner.true_lb, delta, &unused));
  GDDT_CHECK(sum(inner.true_ub, delta, &unused));
  *out = make_shifted(inner, delta);
  return GDDT_OK;
}

// What the library says about one datatype.
struct Facts {
  std::int64_t size = 0;
  std::int64_t lb = 0;
  std::int64_t extent = 0;

  bool dense() const { return size == extent && lb == 0; }
};

Status read_facts(MPI_Datatype datatype, Facts* facts) {
  MPI_Count size = 0, lb = 0, extent = 0;
  GDDT_CHECK(mpi_status(PMPI_Type_size_x(datatype, &size)));
  GDDT_CHECK(mpi_status(PMPI_Type_get_extent_x(datatype, &lb, &extent)));
  if (size == MPI_UNDEFINED || extent == MPI_UNDEFINED) return GDDT_ERR_UNSUPPORTED;
  *facts = Facts{size, lb, extent};
  return GDDT_OK;
}

// One decoded datatype: its layout (whose lb/extent are bounds.lb/extent()) and the
// standard's bounds with what a parent needs to combine them.
struct Decoded {
  Layout layout;
  TypeBounds bounds;
};

Status decode_node(MPI_Datatype datatype, Decoded* out);

// The value-and-index pair types are C structs {value; int}: two blocks with the struct's
// padding between them (and after, in the extent the library reports).
template <typename Value>
bool pair_layout(MPI_Datatype datatype, MPI_Datatype pair, Layout* out) {
  if (datatype != pair) return false;
  struct Pair {
    Value value;
    int index;
  };
  Status status = make_concat({make_block(sizeof(Value)),
                               make_shifted(make_block(sizeof(int)), offsetof(Pair, index))},
                              out);
  return !is_error(status);
}

Status decode_named(MPI_Datatype datatype, const Facts& facts, Layout* out) {
  if (pair_layout<float>(datatype, MPI_FLOAT_INT, out) ||
      pair_layout<double>(datatype, MPI_DOUBLE_INT, out) ||
      pair_layout<long>(datatype, MPI_LONG_INT, out) ||
      pair_layout<int>(datatype, MPI_2INT, out) ||
      pair_layout<short>(datatype, MPI_SHORT_INT, out) ||
      pair_layout<long double>(datatype, MPI_LONG_DOUBLE_INT, out)) {
    return GDDT_OK;
  }
  if (!facts.dense()) return GDDT_ERR_UNSUPPORTED;
  *out = make_block(facts.size);
  return GDDT_OK;
}

// One block of an indexed or struct constructor: `length` copies of `child`, one child
// extent apart, at byte displacement `displacement`.
struct Block {
  const Decoded* child;
  std::int64_t length;
  std::int64_t displacement;
};

// Places `length` copies of `child`, one extent apart, at every displacement from `low` to
// `high`; nothing when there are no copies.
Status place_blocks(BoundsBuilder* builder, const Decoded& child, std::int64_t length,
                    std::int64_t low, std::int64_t high) {
  if (length <= 0) return GDDT_OK;
  std::int64_t first, last;
  GDDT_CHECK(repeat_span(length, child.layout.extent, &first, &last));
  GDDT_CHECK(sum(low, first, &first));
  GDDT_CHECK(sum(high, last, &last));
  return builder->place(child.bounds, first, last);
}

// Collects the parts of a concatenation. Runs of single-piece parts go straight into one
// piece list, so a type with a million irregular blocks costs a million pieces rather than a
// million layouts.
class Concatenation {
 public:
  Status add(Layout&& part) {
    if (part.pieces.size() == 1 && part.nrepeat == 0) {
      if (loose_.pieces.size() >= kMaxPieces) return GDDT_ERR_UNSUPPORTED;
      loose_.pieces.push_back(part.pieces[0]);
      return GDDT_OK;
    }
    if (part.pieces.empty()) return GDDT_OK;
    GDDT_CHECK(flush_loose());
    parts_.push_back(std::move(part));
    return GDDT_OK;
  }

  Status finish(Layout* out) {
    GDDT_CHECK(flush_loose());
    return make_concat(parts_, out);
  }

 private:
  Status flush_loose() {
    if (loose_.pieces.empty()) return GDDT_OK;
    GDDT_CHECK(canonicalize(&loose_));
    parts_.push_back(std::move(loose_));
    loose_ = Layout{};
    return GDDT_OK;
  }

  Layout loose_;
  std::vector<Layout> parts_;
};

// The typemaps of `blocks` in order. Consecutive blocks of the same child and length at a
// constant step are built as one repeat, so regular indexed types never list their blocks.
Status concat_blocks(const std::vector<Block>& blocks, Decoded* out) {
  BoundsBuilder bounds;
  for (const Block& b : blocks) {
    GDDT_CHECK(place_blocks(&bounds, *b.child, b.length, b.displacement, b.displacement));
  }
  out->bounds = bounds.finish();
  Concatenation concatenation;
  for (std::size_t first = 0; first < blocks.size();) {
    const Block& b = blocks[first];
    std::size_t end = first + 1;
    std::int64_t step = 0;
    auto continues = [&](std::size_t i) {
      std::int64_t gap;
      return blocks[i].child == b.child && blocks[i].length == b.length &&
             !__builtin_sub_overflow(blocks[i].displacement, blocks[i - 1].displacement, &gap) &&
             gap == step;
    };
    if (end < blocks.size() &&
        !__builtin_sub_overflow(blocks[end].displacement, b.displacement, &step)) {
      while (end < blocks.size() && continues(end)) ++end;
    }
    const Layout& child = b.child->layout;
    Layout run;
    GDDT_CHECK(make_repeat(child, b.length, child.extent, &run));
    GDDT_CHECK(make_repeat(run, static_cast<std::int64_t>(end - first), step, &run));
    GDDT_CHECK(shifted(run, b.displacement, &run));
    GDDT_CHECK(concatenation.add(std::move(run)));
    first = end;
  }
  return concatenation.finish(&out->layout);
}

Status decode_vector(const Decoded& child, std::int64_t count, std::int64_t length,
                     std::int64_t stride_bytes, Decoded* out) {
  BoundsBuilder bounds;
  if (count > 0) {
    std::int64_t low, high;
    GDDT_CHECK(repeat_span(count, stride_bytes, &low, &high));
    GDDT_CHECK(place_blocks(&bounds, child, length, low, high));
  }
  out->bounds = bounds.finish();
  Layout block;
  GDDT_CHECK(make_repeat(child.layout, length, child.layout.extent, &block));
  return make_repeat(block, count, stride_bytes, &out->layout);
}

// Subarray and darray are resized to the whole array, lb 0 (MPI-4.0 5.1.3, 5.1.4).
Status array_bounds(const Decoded& child, int ndims, const int* sizes, TypeBounds* out) {
  std::int64_t extent = child.layout.extent;
  for (int d = 0; d < ndims; ++d) GDDT_CHECK(product(extent, sizes[d], &extent));
  *out = resized_bounds(child.bounds, 0, extent);
  return GDDT_OK;
}

// Subarray and darray index a global array of `child` elements; `order` says which of the
// array's dimensions is the fastest. Calls fn(d, stride_bytes) from the fastest dimension
// to the slowest.
template <typename Fn>
Status for_each_dim_fastest_first(int ndims, const int* sizes, int order, std::int64_t extent,
                                  Fn&& fn) {
  std::int64_t stride = extent;
  for (int i = 0; i < ndims; ++i) {
    int d = order == MPI_ORDER_C ? ndims - 1 - i : i;
    GDDT_CHECK(fn(d, stride));
    GDDT_CHECK(product(stride, sizes[d], &stride));
  }
  return GDDT_OK;
}

Status decode_subarray(const Contents& c, const Decoded& element, Decoded* out) {
  const int ndims = c.ints[0];
  const int* sizes = &c.ints[1];
  const int* subsizes = &c.ints[1 + ndims];
  const int* starts = &c.ints[1 + 2 * ndims];
  const int order = c.ints[1 + 3 * ndims];
  GDDT_CHECK(array_bounds(element, ndims, sizes, &out->bounds));
  const Layout& child = element.layout;
  Layout layout = child;
  std::int64_t origin = 0;
  GDDT_CHECK(for_each_dim_fastest_first(
      ndims, sizes, order, child.extent, [&](int d, std::int64_t stride) {
        std::int64_t start;
        GDDT_CHECK(product(starts[d], stride, &start));
        GDDT_CHECK(sum(origin, start, &origin));
        return make_repeat(layout, subsizes[d], stride, &layout);
      }));
  return shifted(layout, origin, &out->layout);
}

// The indices of one darray dimension a process owns, in increasing order: `full_runs` runs
// of `run_length` indices starting at `first`, `run_step` apart, then possibly one shorter
// run of `tail_length` indices at `tail_start`.
struct Ownership {
  std::int64_t first = 0, run_length = 0, full_runs = 0, run_step = 0;
  std::int64_t tail_start = 0, tail_length = 0;
};

Status darray_ownership(int distribution, int darg, std::int64_t global, std::int64_t procs,
                        std::int64_t coord, Ownership* own) {
  *own = Ownership{};
  switch (distribution) {
    case MPI_DISTRIBUTE_NONE:
      *own = Ownership{0, global, 1, 0, 0, 0};
      return GDDT_OK;
    case MPI_DISTRIBUTE_BLOCK: {
      std::int64_t block = darg == MPI_DISTRIBUTE_DFLT_DARG ? (global + procs - 1) / procs : darg;
      if (block <= 0) return GDDT_ERR_UNSUPPORTED;
      std::int64_t first = std::min(coord * block, global);
      own->first = first;
      own->run_length = std::min(first + block, global) - first;
      own->full_runs = 1;
      return GDDT_OK;
    }
    case MPI_DISTRIBUTE_CYCLIC: {
      std::int64_t block = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
      if (block <= 0) return GDDT_ERR_UNSUPPORTED;
      own->first = coord * block;
      own->run_length = block;
      own->run_step = procs * block;
      own->full_runs = own->first + block > global ? 0 : (global - own->first - block) / own->run_step + 1;
      own->tail_start = own->first + own->full_runs * own->run_step;
      own->tail_length = std::max<std::int64_t>(global - own->tail_start, 0);
      return GDDT_OK;
    }
    default:
      return GDDT_ERR_UNSUPPORTED;
  }
}

Status decode_darray(const Contents& c, const Decoded& element, Decoded* out) {
  const int nprocs = c.ints[0];
  const int rank = c.ints[1];
  const int ndims = c.ints[2];
  const int* gsizes = &c.ints[3];
  const int* distribs = &c.ints[3 + ndims];
  const int* dargs = &c.ints[3 + 2 * ndims];
  const int* psizes = &c.ints[3 + 3 * ndims];
  const int order = c.ints[3 + 4 * ndims];
  if (nprocs <= 0 || rank < 0 || rank >= nprocs) return GDDT_ERR_UNSUPPORTED;
  GDDT_CHECK(array_bounds(element, ndims, gsizes, &out->bounds));
  const Layout& child = element.layout;

  // The process grid is row-major whatever the array order.
  std::vector<std::int64_t> coords(static_cast<std::size_t>(ndims));
  for (int d = ndims - 1, r = rank; d >= 0; --d) {
    if (psizes[d] <= 0) return GDDT_ERR_UNSUPPORTED;
    coords[d] = r % psizes[d];
    r /= psizes[d];
  }
  Layout layout = child;
  GDDT_CHECK(for_each_dim_fastest_first(
      ndims, gsizes, order, child.extent, [&](int d, std::int64_t stride) {
        Ownership own;
        GDDT_CHECK(darray_ownership(distribs[d], dargs[d], gsizes[d], psizes[d], coords[d], &own));
        std::int64_t first, step, tail;
        GDDT_CHECK(product(own.first, stride, &first));
        GDDT_CHECK(product(own.run_step, stride, &step));
        GDDT_CHECK(product(own.tail_start, stride, &tail));
        std::vector<Layout> parts(2);
        GDDT_CHECK(make_repeat(layout, own.run_length, stride, &parts[0]));
        GDDT_CHECK(make_repeat(parts[0], own.full_runs, step, &parts[0]));
        GDDT_CHECK(shifted(parts[0], first, &parts[0]));
        GDDT_CHECK(make_repeat(layout, own.tail_length, stride, &parts[1]));
        GDDT_CHECK(shifted(parts[1], tail, &parts[1]));
        return make_concat(parts, &layout);
      }));
  out->layout = std::move(layout);
  return GDDT_OK;
}

// Decodes the children of a derived datatype, in the order get_contents lists them.
Status decode_children(const Contents& c, std::vector<Decoded>* children) {
  children->resize(c.types.size());
  for (std::size_t i = 0; i < c.types.size(); ++i) GDDT_CHECK(decode_node(c.types[i], &(*children)[i]));
  return GDDT_OK;
}

// The layout and the standard's bounds of a derived datatype.
Status decode_derived(int combiner, const Contents& c, Decoded* out) {
  std::vector<Decoded> children;
  GDDT_CHECK(decode_children(c, &children));
  const std::vector<int>& ints = c.ints;
  const std::vector<MPI_Aint>& addresses = c.addresses;
  std::vector<Block> blocks;
  switch (combiner) {
    case MPI_COMBINER_DUP:
      *out = std::move(children[0]);
      return GDDT_OK;
    case MPI_COMBINER_RESIZED:
      out->bounds = resized_bounds(children[0].bounds, addresses[0], addresses[1]);
      out->layout = std::move(children[0].layout);
      return GDDT_OK;
    case MPI_COMBINER_CONTIGUOUS: {
      BoundsBuilder bounds;
      GDDT_CHECK(place_blocks(&bounds, children[0], ints[0], 0, 0));
      out->bounds = bounds.finish();
      return make_repeat(children[0].layout, ints[0], children[0].layout.extent, &out->layout);
    }
    case MPI_COMBINER_VECTOR: {
      std::int64_t stride;
      GDDT_CHECK(product(ints[2], children[0].layout.extent, &stride));
      return decode_vector(children[0], ints[0], ints[1], stride, out);
    }
    case MPI_COMBINER_HVECTOR:
      return decode_vector(children[0], ints[0], ints[1], addresses[0], out);
    case MPI_COMBINER_INDEXED:
      for (int i = 0; i < ints[0]; ++i) {
        std::int64_t displacement;
        GDDT_CHECK(product(ints[1 + ints[0] + i], children[0].layout.extent, &displacement));
        blocks.push_back(Block{&children[0], ints[1 + i], displacement});
      }
      return concat_blocks(blocks, out);
    case MPI_COMBINER_HINDEXED:
      for (int i = 0; i < ints[0]; ++i) blocks.push_back(Block{&children[0], ints[1 + i], addresses[i]});
      return concat_blocks(blocks, out);
    case MPI_COMBINER_INDEXED_BLOCK:
      for (int i = 0; i < ints[0]; ++i) {
        std::int64_t displacement;
        GDDT_CHECK(product(ints[2 + i], children[0].layout.extent, &displacement));
        blocks.push_back(Block{&children[0], ints[1], displacement});
      }
      return concat_blocks(blocks, out);
    case MPI_COMBINER_HINDEXED_BLOCK:
      for (int i = 0; i < ints[0]; ++i) blocks.push_back(Block{&children[0], ints[1], addresses[i]});
      return concat_blocks(blocks, out);
    case MPI_COMBINER_STRUCT:
      for (int i = 0; i < ints[0]; ++i) blocks.push_back(Block{&children[i], ints[1 + i], addresses[i]});
      return concat_blocks(blocks, out);
    case MPI_COMBINER_SUBARRAY:
      return decode_subarray(c, children[0], out);
    case MPI_COMBINER_DARRAY:
      return decode_darray(c, children[0], out);
    default:
      return GDDT_ERR_INTERNAL;  // decode_node only passes the constructors listed above
  }
}

// The constructors decode_derived knows, by name; nullptr for the others.
const char* constructor_name(int combiner) {
  switch (combiner) {
    case MPI_COMBINER_DUP: return "dup";
    case MPI_COMBINER_RESIZED: return "resized";
    case MPI_COMBINER_CONTIGUOUS: return "contiguous";
    case MPI_COMBINER_VECTOR: return "vector";
    case MPI_COMBINER_HVECTOR: return "hvector";
    case MPI_COMBINER_INDEXED: return "indexed";
    case MPI_COMBINER_HINDEXED: return "hindexed";
    case MPI_COMBINER_INDEXED_BLOCK: return "indexed_block";
    case MPI_COMBINER_HINDEXED_BLOCK: return "hindexed_block";
    case MPI_COMBINER_STRUCT: return "struct";
    case MPI_COMBINER_SUBARRAY: return "subarray";
    case MPI_COMBINER_DARRAY: return "darray";
    default: return nullptr;
  }
}

// F90 parameterized types and constructors this code does not know: usable when one element
// is a single dense block.
Status decode_opaque(MPI_Datatype datatype, const Facts& facts, Layout* out) {
  MPI_Count true_lb = 0, true_extent = 0;
  GDDT_CHECK(mpi_status(PMPI_Type_get_true_extent_x(datatype, &true_lb, &true_extent)));
  if (!facts.dense() || true_lb != 0 || true_extent != facts.size) return GDDT_ERR_UNSUPPORTED;
  *out = make_block(facts.size);
  return GDDT_OK;
}

// Whether the library adds the epsilon to every derived type, after every block it adds (Open
// MPI), or once to structs only (MPICH; the standard's own examples are structs), asked once
// with a type whose bounds differ by nothing else. Only needed where the library's bounds of
// a type are wrong.
bool library_pads_every_constructor() {
  static const bool pads = [] {
    MPI_Datatype probe = MPI_DATATYPE_NULL;
    if (PMPI_Type_create_hvector(2, 1, 9, MPI_DOUBLE, &probe) != MPI_SUCCESS) return false;
    MPI_Aint lb = 0, extent = 0;
    const int rc = PMPI_Type_get_extent(probe, &lb, &extent);
    PMPI_Type_free(&probe);
    return rc == MPI_SUCCESS && extent > 9 + static_cast<MPI_Aint>(sizeof(double));
  }();
  return pads;
}

// Users see the library's bounds through MPI_Type_get_extent, so where gddt departs from
// them it says so, once per constructor.
void note_replaced_bounds(const char* constructor, const Facts& facts, const TypeBounds& standard) {
  static std::mutex mutex;
  static std::set<std::string> noted;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!noted.insert(constructor).second) return;
  }
  GDDT_LOG(kInfo,
           "the MPI library's bounds of a %s datatype (lb %lld, extent %lld) are not the MPI "
           "standard's (lb %lld, extent %lld): gddt uses the standard's (further %s cases not logged)",
           constructor, static_cast<long long>(facts.lb), static_cast<long long>(facts.extent),
           static_cast<long long>(standard.lb), static_cast<long long>(standard.extent()),
           constructor);
}

Status decode_node(MPI_Datatype datatype, Decoded* out) {
  if (datatype == MPI_DATATYPE_NULL) return GDDT_ERR_INVALID_TYPE;
  Facts facts;
  GDDT_CHECK(read_facts(datatype, &facts));
  const Envelope envelope = envelope_of(datatype);
  const int combiner = envelope.combiner;
  const char* constructor = constructor_name(combiner);
  Decoded decoded;
  if (combiner == MPI_COMBINER_NAMED) {
    GDDT_CHECK(decode_named(datatype, facts, &decoded.layout));
    decoded.bounds = library_bounds(datatype, facts.lb, facts.extent);
  } else if (constructor != nullptr) {
    Contents contents;
    GDDT_CHECK(contents.read(datatype, envelope));
    GDDT_CHECK(decode_derived(combiner, contents, &decoded));
    bool replaced = false;
    decoded.bounds = reconcile(decoded.bounds, facts.lb, facts.extent, &replaced);
    if (replaced) {
      if (library_pads_every_constructor()) {
        decoded.bounds = with_epsilon_after_every_block(decoded.bounds);
      } else if (combiner == MPI_COMBINER_STRUCT) {
        decoded.bounds = with_epsilon(decoded.bounds);
      }
      note_replaced_bounds(constructor, facts, decoded.bounds);
    }
  } else {
    GDDT_CHECK(decode_opaque(datatype, facts, &decoded.layout));
    decoded.bounds = library_bounds(datatype, facts.lb, facts.extent);
  }
  Layout& layout = decoded.layout;
  if (layout.size != facts.size) {
    GDDT_LOG(kWarn, "datatype decoded to %lld bytes but MPI_Type_size says %lld (combiner %d): %s",
             static_cast<long long>(layout.size), static_cast<long long>(facts.size), combiner,
             layout.describe().c_str());
    return GDDT_ERR_INTERNAL;
  }
  set_bounds(&layout, decoded.bounds.lb, decoded.bounds.extent());
  *out = std::move(decoded);
  return GDDT_OK;
}

}  // namespace

Status decode(MPI_Datatype datatype, Layout* out) {
  Decoded decoded;
  GDDT_CHECK(decode_node(datatype, &decoded));
  *out = std::move(decoded.layout);
  return GDDT_OK;
}

}  // namespace gddt::type
