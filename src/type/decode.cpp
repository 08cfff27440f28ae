// Decoding an MPI datatype into a layout by walking its constructor tree with
// MPI_Type_get_envelope/get_contents. Always through the PMPI_ names, since gddt interposes
// the MPI_ ones. Sizes and bounds (lb, extent) are the library's, of the type and of every type
// nested in it: the library packs by them and users index their buffers by them, so gddt's
// bytes are the library's bytes even where a library departs from the standard's rules.
#include <algorithm>
#include <cstdlib>
#include <cstddef>
#include <mutex>
#include <vector>

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

Status decode_node(MPI_Datatype datatype, Layout* out);

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
  const Layout* child;
  std::int64_t length;
  std::int64_t displacement;
};

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
Status concat_blocks(const std::vector<Block>& blocks, Layout* out) {
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
    const Layout& child = *b.child;
    Layout run;
    GDDT_CHECK(make_repeat(child, b.length, child.extent, &run));
    GDDT_CHECK(make_repeat(run, static_cast<std::int64_t>(end - first), step, &run));
    GDDT_CHECK(shifted(run, b.displacement, &run));
    GDDT_CHECK(concatenation.add(std::move(run)));
    first = end;
  }
  return concatenation.finish(out);
}

Status decode_vector(const Layout& child, std::int64_t count, std::int64_t length, std::int64_t stride_bytes,
                     Layout* out) {
  Layout block;
  GDDT_CHECK(make_repeat(child, length, child.extent, &block));
  return make_repeat(block, count, stride_bytes, out);
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

Status decode_subarray(const Contents& c, const Layout& child, Layout* out) {
  const int ndims = c.ints[0];
  const int* sizes = &c.ints[1];
  const int* subsizes = &c.ints[1 + ndims];
  const int* starts = &c.ints[1 + 2 * ndims];
  const int order = c.ints[1 + 3 * ndims];
  Layout layout = child;
  std::int64_t origin = 0;
  GDDT_CHECK(for_each_dim_fastest_first(
      ndims, sizes, order, child.extent, [&](int d, std::int64_t stride) {
        std::int64_t start;
        GDDT_CHECK(product(starts[d], stride, &start));
        GDDT_CHECK(sum(origin, start, &origin));
        return make_repeat(layout, subsizes[d], stride, &layout);
      }));
  return shifted(layout, origin, out);
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

Status decode_darray(const Contents& c, const Layout& child, Layout* out) {
  const int nprocs = c.ints[0];
  const int rank = c.ints[1];
  const int ndims = c.ints[2];
  const int* gsizes = &c.ints[3];
  const int* distribs = &c.ints[3 + ndims];
  const int* dargs = &c.ints[3 + 2 * ndims];
  const int* psizes = &c.ints[3 + 3 * ndims];
  const int order = c.ints[3 + 4 * ndims];
  if (nprocs <= 0 || rank < 0 || rank >= nprocs) return GDDT_ERR_UNSUPPORTED;

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
  *out = std::move(layout);
  return GDDT_OK;
}

// Decodes the children of a derived datatype, in the order get_contents lists them.
Status decode_children(const Contents& c, std::vector<Layout>* children) {
  children->resize(c.types.size());
  for (std::size_t i = 0; i < c.types.size(); ++i) GDDT_CHECK(decode_node(c.types[i], &(*children)[i]));
  return GDDT_OK;
}

// The layout of a derived datatype, its bounds still the natural ones.
Status decode_derived(int combiner, const Contents& c, Layout* out) {
  std::vector<Layout> children;
  GDDT_CHECK(decode_children(c, &children));
  const std::vector<int>& ints = c.ints;
  const std::vector<MPI_Aint>& addresses = c.addresses;
  std::vector<Block> blocks;
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // the library's bounds are set by the caller
      *out = std::move(children[0]);
      return GDDT_OK;
    case MPI_COMBINER_CONTIGUOUS:
      return make_repeat(children[0], ints[0], children[0].extent, out);
    case MPI_COMBINER_VECTOR: {
      std::int64_t stride;
      GDDT_CHECK(product(ints[2], children[0].extent, &stride));
      return decode_vector(children[0], ints[0], ints[1], stride, out);
    }
    case MPI_COMBINER_HVECTOR:
      return decode_vector(children[0], ints[0], ints[1], addresses[0], out);
    case MPI_COMBINER_INDEXED:
      for (int i = 0; i < ints[0]; ++i) {
        std::int64_t displacement;
        GDDT_CHECK(product(ints[1 + ints[0] + i], children[0].extent, &displacement));
        blocks.push_back(Block{&children[0], ints[1 + i], displacement});
      }
      return concat_blocks(blocks, out);
    case MPI_COMBINER_HINDEXED:
      for (int i = 0; i < ints[0]; ++i) blocks.push_back(Block{&children[0], ints[1 + i], addresses[i]});
      return concat_blocks(blocks, out);
    case MPI_COMBINER_INDEXED_BLOCK:
      for (int i = 0; i < ints[0]; ++i) {
        std::int64_t displacement;
        GDDT_CHECK(product(ints[2 + i], children[0].extent, &displacement));
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

// A library's bounds that lie this far from every byte the type touches are not a type anyone
// builds but a library fault (an earlier fuzzer recorded such extents from Open MPI 4.1 for
// darrays below a struct): gddt refuses the type instead of reading or writing where those
// bounds point.
constexpr std::int64_t kFarthestPlausibleBound = std::int64_t{1} << 40;

bool plausible_bounds(const Layout& layout, const Facts& facts) {
  if (layout.true_lb == layout.true_ub) return true;  // nothing touched, whatever the extent
  const auto distance = [](std::int64_t a, std::int64_t b) {
    std::int64_t d;
    return __builtin_sub_overflow(a, b, &d) ? INT64_MAX : std::llabs(d);
  };
  std::int64_t ub;
  return !__builtin_add_overflow(facts.lb, facts.extent, &ub) &&
         distance(facts.lb, layout.true_lb) <= kFarthestPlausibleBound &&
         distance(ub, layout.true_ub) <= kFarthestPlausibleBound;
}

void note_implausible_bounds(const char* constructor, const Facts& facts, const Layout& layout) {
  static std::once_flag once;
  std::call_once(once, [&] {
    GDDT_LOG(kWarn,
             "the MPI library reports bounds (lb %lld, extent %lld) for a %s datatype whose bytes lie in "
             "[%lld, %lld): gddt refuses such types on memory it serves (further cases not logged)",
             static_cast<long long>(facts.lb), static_cast<long long>(facts.extent), constructor,
             static_cast<long long>(layout.true_lb), static_cast<long long>(layout.true_ub));
  });
}

Status decode_node(MPI_Datatype datatype, Layout* out) {
  if (datatype == MPI_DATATYPE_NULL) return GDDT_ERR_INVALID_TYPE;
  Facts facts;
  GDDT_CHECK(read_facts(datatype, &facts));
  const Envelope envelope = envelope_of(datatype);
  const int combiner = envelope.combiner;
  const char* constructor = constructor_name(combiner);
  Layout layout;
  if (combiner == MPI_COMBINER_NAMED) {
    GDDT_CHECK(decode_named(datatype, facts, &layout));
  } else if (constructor != nullptr) {
    Contents contents;
    GDDT_CHECK(contents.read(datatype, envelope));
    GDDT_CHECK(decode_derived(combiner, contents, &layout));
  } else {
    GDDT_CHECK(decode_opaque(datatype, facts, &layout));
  }
  if (layout.size != facts.size) {
    GDDT_LOG(kWarn, "datatype decoded to %lld bytes but MPI_Type_size says %lld (combiner %d): %s",
             static_cast<long long>(layout.size), static_cast<long long>(facts.size), combiner,
             layout.describe().c_str());
    return GDDT_ERR_INTERNAL;
  }
  if (!plausible_bounds(layout, facts)) {
    note_implausible_bounds(constructor != nullptr ? constructor : "named", facts, layout);
    return GDDT_ERR_UNSUPPORTED;
  }
  set_bounds(&layout, facts.lb, facts.extent);
  *out = std::move(layout);
  return GDDT_OK;
}

}  // namespace

Status decode(MPI_Datatype datatype, Layout* out) { return decode_node(datatype, out); }

}  // namespace gddt::type
