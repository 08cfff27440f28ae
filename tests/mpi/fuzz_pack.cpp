// gddt-fuzz-pack: random nested datatypes packed and unpacked by gddt (MPI_Pack, MPI_Unpack,
// MPI_Pack_size as interposed, and gddt_pack_window/gddt_unpack_window) and compared byte for
// byte with the MPI library's own engine (PMPI_*) and with the fuzzer's own expansion of the
// typemap. Run with GDDT_PACK_HOST=gddt so host buffers go through gddt too.
//
// Verdicts: gddt equal to the reference passes, and nothing else does, except where the
// library is known to misbehave (fuzz_reference.hpp): there the typemap with the library's
// bounds replaces the reference, or, where the library's bytes are undefined, may stand in for
// it. Nothing is skipped silently: every note is printed with its first case and counted.
// The command line: fuzz_pack_options.hpp; what the checks share: fuzz_pack_checks.hpp.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "fuzz_pack_checks.hpp"
#include "fuzz_pack_options.hpp"
#include "fuzz_random.hpp"
#include "fuzz_reference.hpp"
#include "fuzz_type_tree.hpp"
#include "fuzz_typemap.hpp"
#include "gddt/gddt_mpi.h"
#include "memory_buffer.hpp"

namespace gddt_test::fuzz {
namespace {

constexpr int kMaxDetailedFailures = 20;
// Generated types span at most 256 KiB per element; bounds far beyond are a reference fault.
constexpr std::int64_t kMaxReferenceSpan = 64 << 20;

struct RunContext {
  Options options;
  MpiLibrary library = MpiLibrary::kOther;
  int rank = 0;
  int ranks = 1;
  Notes* notes = nullptr;
  int detailed_failures = 0;
  std::vector<MPI_Datatype> kept;  // --keep-inner: the building blocks of every type so far, freed at the end
};

// One random datatype through every check.
//
// The reference is the library's own engine: gddt's bytes must be PMPI_Pack's and
// PMPI_Unpack's. Where the library is known to get a type wrong (fuzz_reference.hpp), the
// fuzzer's own expansion of the typemap, stepping by the bounds the library reports for every
// derived node, stands in for it; and where the library's bytes are known to be undefined
// (MPICH's long double padding), gddt may equal that expansion instead.
class TypeTest {
 public:
  TypeTest(RunContext* run, std::int64_t index)
      : run_(*run), index_(index), rng_(type_seed(run->options.seed, static_cast<std::uint64_t>(index))) {}

  // True when gddt passed every check (reference faults do not count against it).
  bool run() {
    // Without --only, rank r tests the types whose index is r modulo the ranks, so with
    // --only the rank that tested a type before builds its darrays for the same rank again.
    node_ = random_type(&rng_, TypeLimits{}, run_.rank);
    count_ = static_cast<int>(rng_.between(0, 4));
    typed_kind_ = pick_kind();
    packed_kind_ = pick_kind();
    const std::uint64_t commit_mask = rng_.next();
    MPI_Datatype datatype;
    KeptHandles kept;
    int rc = build_datatype(node_, commit_mask, &datatype, &library_bounds_, run_.options.keep_inner ? &kept : nullptr);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&datatype);
    if (rc != MPI_SUCCESS) {
      describe_tested(node_);
      fail("building the datatype", "MPI returned " + mpi_error_text(rc));
      return false;
    }
    // --keep-inner: one building block is committed and tested after the type made of it was
    // described and freed, as a program does that keeps a pool of types and sends each.
    const TypeNode* block = run_.options.keep_inner ? derived_child(node_) : nullptr;
    for (const auto& [node, handle] : kept) run_.kept.push_back(handle);
    MPI_Datatype block_handle = block != nullptr ? kept.at(block) : MPI_DATATYPE_NULL;
    if (block != nullptr) MPI_Type_commit(&block_handle);
    if (run_.options.keep_inner) walk_contents(datatype);
    check_type(node_, datatype);
    MPI_Type_free(&datatype);
    if (block != nullptr) {
      const int count = count_;
      count_ = static_cast<int>(rng_.between(1, 3));
      check_type(*block, block_handle);
      count_ = count;
    }
    return !failed_;
  }

 private:
  // The first child of `node` that is a derived type, or nullptr.
  static const TypeNode* derived_child(const TypeNode& node) {
    for (const TypeNode& child : node.children)
      if (child.constructor != Constructor::kNamed) return &child;
    return nullptr;
  }

  void describe_tested(const TypeNode& node) {
    description_ = describe(node);
    if (run_.options.verbose) {
      std::printf("fuzz: rank %d type %" PRId64 " count %d, typed %s, packed %s: %s\n", run_.rank, index_, count_,
                  memory_kind_name(typed_kind_), memory_kind_name(packed_kind_), description_.c_str());
      std::fflush(stdout);
    }
  }

  // Every check of `datatype`, committed, whose tree is `node` (node_ or a node inside it).
  void check_type(const TypeNode& node, MPI_Datatype datatype) {
    tested_ = &node;
    datatype_ = datatype;
    describe_tested(node);
    MPI_Count library_size = 0;
    PMPI_Type_size_x(datatype, &library_size);
    library_stream_bytes_ = count_ * library_size;
    typemap_ = Typemap{};
    expand_typemap(node, padding_rule(run_.library), TypeLimits{}.max_runs, &typemap_, &library_bounds_);
    if (span(typemap_) > kMaxReferenceSpan) {
      // gddt refuses bounds far beyond the type's bytes (a library fault), and a buffer for
      // them cannot be had: nothing to check.
      note("the library's bounds are implausible: type not tested", description_);
      return;
    }
    reference_usable_ = true;
    if (const char* why = reference_unusable(run_.library, node)) {
      note(std::string("reference not used: ") + why, description_);
      reference_usable_ = false;
    }
    choose_layout();
    if (run_.options.verbose) {
      std::printf("      library's bounds: lb %" PRId64 " extent %" PRId64 " true lb %" PRId64 " true ub %" PRId64
                  " size %" PRId64 "\n      buffer bytes [%" PRId64 ", %" PRId64 ")\n",
                  typemap_.lb, typemap_.extent(), typemap_.true_lb(), typemap_.true_ub(), typemap_.size, low_, high_);
      std::fflush(stdout);
    }
    check_pack();
    check_unpack();
  }

  static std::int64_t span(const Typemap& map) {
    return std::max(map.ub, map.true_ub()) - std::min(map.lb, map.true_lb());
  }

  // The run's memory kind, or with --memory mixed any kind, drawn for each buffer.
  MemoryKind pick_kind() {
    if (!run_.options.mixed) return run_.options.memory;
    return kMemoryKinds[rng_.between(0, static_cast<std::int64_t>(std::size(kMemoryKinds)) - 1)];
  }

  // Where element 0 starts in the typed buffer and how large the buffers are.
  void choose_layout() {
    extent_ = typemap_.extent();
    const std::int64_t repeat = std::max(count_ - 1, 0) * extent_;
    const std::int64_t low = std::min(typemap_.lb, typemap_.true_lb()), high = std::max(typemap_.ub, typemap_.true_ub());
    low_ = std::min({std::int64_t{0}, low, low + repeat});
    high_ = std::max({std::int64_t{0}, high, high + repeat});
    const std::int64_t bytes = high_ - low_;
    const std::int64_t margin = std::min<std::int64_t>(bytes, 4096) + 64;
    origin_ = margin - low_;
    typed_bytes_ = static_cast<size_t>(bytes + 2 * margin);
    start_position_ = rng_.between(0, 1) ? 0 : rng_.between(1, 16);
    stream_bytes_ = count_ * typemap_.size;
    packed_bytes_ = static_cast<size_t>(start_position_ + stream_bytes_ + 64);
  }

  // One MPI_Pack or MPI_Unpack call per piece of a random split of the elements,
  // `call(piece, elements done, &position)`, from start_position_ on, stopping at the first
  // error.
  template <typename Call>
  Result in_pieces(Call call) {
    Result result;
    int position = static_cast<int>(start_position_);
    int done = 0;
    for (int piece : random_pieces(&rng_, count_)) {
      const int rc = call(piece, done, &position);
      if (rc != MPI_SUCCESS) {
        result.ok = false;
        result.error = mpi_error_text(rc);
        break;
      }
      done += piece;
    }
    result.end = position;
    return result;
  }

  void check_pack() {
    Bytes source(typed_bytes_), poison(packed_bytes_);
    fill_random(&rng_, &source);
    fill_random(&rng_, &poison);
    const unsigned char* source_origin = source.data() + origin_;

    Result expected{true, "", poison, start_position_ + stream_bytes_};
    model_pack(typemap_, count_, source_origin, expected.bytes.data() + start_position_);

    Result reference;
    if (reference_usable_) {
      reference.bytes = poison;
      int position = static_cast<int>(start_position_);
      const int rc = PMPI_Pack(source_origin, count_, datatype_, reference.bytes.data(),
                               static_cast<int>(packed_bytes_), &position, MPI_COMM_WORLD);
      reference.ok = rc == MPI_SUCCESS;
      reference.error = reference.ok ? "" : mpi_error_text(rc);
      reference.end = position;
    }
    const Result* reference_used = reference_usable_ && consistent("PMPI_Pack", reference) ? &reference : nullptr;

    Buffer typed(typed_kind_, typed_bytes_), packed(packed_kind_, packed_bytes_);
    typed.upload(source.data(), typed_bytes_);

    packed.upload(poison.data(), packed_bytes_);
    Result by_calls = in_pieces([&](int piece, int done, int* position) {
      return MPI_Pack(typed.data() + origin_ + done * extent_, piece, datatype_, packed.data(),
                      static_cast<int>(packed_bytes_), position, MPI_COMM_WORLD);
    });
    by_calls.bytes.resize(packed_bytes_);
    packed.download(by_calls.bytes.data(), packed_bytes_);
    judge("MPI_Pack", by_calls, "PMPI_Pack", reference_used, expected, start_position_);

    Bytes typed_after(typed_bytes_);
    typed.download(typed_after.data(), typed_bytes_);
    if (typed_after != source) fail("MPI_Pack", "modified its input buffer");

    int pack_size = 0;
    const int rc = MPI_Pack_size(count_, datatype_, MPI_COMM_WORLD, &pack_size);
    if (rc != MPI_SUCCESS) {
      fail("MPI_Pack_size", "returned " + mpi_error_text(rc));
    } else if (pack_size < stream_bytes_) {
      fail("MPI_Pack_size", std::to_string(pack_size) + ", less than the " +
                                std::to_string(stream_bytes_) + " bytes packed");
    }

    // gddt_pack_window over a random split of the stream, windows in random order.
    packed.upload(poison.data(), packed_bytes_);
    Result by_windows{true, "", {}, start_position_ + stream_bytes_};
    for (const auto& [offset, length] : random_windows(&rng_, stream_bytes_, true)) {
      const gddt_status_t status = gddt_pack_window(datatype_, count_, typed.data() + origin_,
                                                    packed.data() + start_position_ + offset, offset, length, nullptr);
      if (status != GDDT_OK) {
        by_windows.ok = false;
        by_windows.error = gddt_status_string(status);
        break;
      }
    }
    by_windows.bytes.resize(packed_bytes_);
    packed.download(by_windows.bytes.data(), packed_bytes_);
    judge("gddt_pack_window", by_windows, "PMPI_Pack", reference_used, expected, start_position_);
  }

  void check_unpack() {
    // A random stream tests that every byte lands in its place; where data bytes overlap the
    // order of writes would decide, so the stream is then the packed image of one buffer,
    // which puts the same value at an address whatever the order.
    Bytes stream_source(typed_bytes_), poison(typed_bytes_), packed_in(packed_bytes_);
    fill_random(&rng_, &stream_source);
    fill_random(&rng_, &poison);
    fill_random(&rng_, &packed_in);
    if (overlaps(typemap_, count_))
      model_pack(typemap_, count_, stream_source.data() + origin_, packed_in.data() + start_position_);
    const std::int64_t insize = start_position_ + stream_bytes_;

    Result expected{true, "", poison, insize};
    model_unpack(typemap_, count_, packed_in.data() + start_position_, expected.bytes.data() + origin_);

    Result reference;
    const char* unpack_quirk = reference_unpack_unusable(run_.library, typemap_);
    if (reference_usable_ && unpack_quirk) note(std::string("reference not used: ") + unpack_quirk, description_);
    const bool use_reference = reference_usable_ && unpack_quirk == nullptr;
    if (use_reference) {
      reference.bytes = poison;
      int position = static_cast<int>(start_position_);
      const int rc = PMPI_Unpack(packed_in.data(), static_cast<int>(insize), &position,
                                 reference.bytes.data() + origin_, count_, datatype_, MPI_COMM_WORLD);
      reference.ok = rc == MPI_SUCCESS;
      reference.error = reference.ok ? "" : mpi_error_text(rc);
      reference.end = position;
    }
    const Result* reference_used = use_reference && consistent("PMPI_Unpack", reference) ? &reference : nullptr;

    Buffer typed(typed_kind_, typed_bytes_), packed(packed_kind_, packed_bytes_);
    packed.upload(packed_in.data(), packed_bytes_);

    typed.upload(poison.data(), typed_bytes_);
    Result by_calls = in_pieces([&](int piece, int done, int* position) {
      return MPI_Unpack(packed.data(), static_cast<int>(insize), position, typed.data() + origin_ + done * extent_,
                        piece, datatype_, MPI_COMM_WORLD);
    });
    by_calls.bytes.resize(typed_bytes_);
    typed.download(by_calls.bytes.data(), typed_bytes_);
    judge("MPI_Unpack", by_calls, "PMPI_Unpack", reference_used, expected, origin_);

    Bytes packed_after(packed_bytes_);
    packed.download(packed_after.data(), packed_bytes_);
    if (packed_after != packed_in) fail("MPI_Unpack", "modified its input buffer");

    typed.upload(poison.data(), typed_bytes_);
    Result by_windows{true, "", {}, insize};
    for (const auto& [offset, length] : random_windows(&rng_, stream_bytes_, true)) {
      const gddt_status_t status = gddt_unpack_window(datatype_, count_, typed.data() + origin_,
                                                      packed.data() + start_position_ + offset, offset, length, nullptr);
      if (status != GDDT_OK) {
        by_windows.ok = false;
        by_windows.error = gddt_status_string(status);
        break;
      }
    }
    by_windows.bytes.resize(typed_bytes_);
    typed.download(by_windows.bytes.data(), typed_bytes_);
    judge("gddt_unpack_window", by_windows, "PMPI_Unpack", reference_used, expected, origin_);
  }

  // Whether the reference moved count x MPI_Type_size bytes, as the library's own size says it
  // must. MPICH 4.0.2 with hundreds of derived types alive packs some types through the engine
  // handle of another (a dup of MPI_CHAR moved 2 of 3 bytes, with or without gddt): the typemap
  // stands in for such a reference.
  bool consistent(const char* reference_name, const Result& reference) {
    if (!reference.ok || reference.end - start_position_ == library_stream_bytes_) return true;
    note(std::string("reference fault: ") + reference_name + " moves other than count x MPI_Type_size bytes",
         description_ + ": " + std::to_string(reference.end - start_position_) + " bytes, not " +
             std::to_string(library_stream_bytes_));
    return false;
  }

  // gddt against the reference, or against the typemap where there is none. A gddt that
  // differs from the reference passes only by equalling the typemap where the library's
  // bytes are known to be undefined (reference_fault_explanation).
  void judge(const std::string& what, const Result& gddt, const char* reference_name, const Result* reference,
             const Result& expected, std::int64_t origin) {
    if (reference == nullptr) {
      if (!same(gddt, expected)) fail(what, first_difference(gddt, expected, origin) + " (the typemap; no reference)");
      return;
    }
    if (same(gddt, *reference)) {
      if (!same(expected, *reference))
        note("the typemap differs from both the reference and gddt in " + what + " (a gap in the fuzzer's model)",
             description_ + ": " + first_difference(expected, *reference, origin));
      return;
    }
    const char* explanation = reference_fault_explanation(run_.library, *tested_);
    if (explanation != nullptr && same(gddt, expected)) {
      note(std::string("reference fault: ") + reference_name + " differs from the typemap (" + explanation + ")",
           description_ + ": " + first_difference(*reference, expected, origin));
      return;
    }
    fail(what, first_difference(gddt, *reference, origin) + " (" + reference_name + "); the typemap: " +
                   (same(gddt, expected) ? std::string("equal") : first_difference(gddt, expected, origin)));
  }

  // Counted once per type and kind.
  void note(const std::string& kind, const std::string& first_case) {
    if (noted_.insert(kind).second)
      run_.notes->add(kind, "type " + std::to_string(index_) + " count " + std::to_string(count_) + ": " + first_case);
  }

  void fail(const std::string& what, const std::string& detail) {
    failed_ = true;
    if (run_.detailed_failures++ < kMaxDetailedFailures) {
      std::printf(
          "fuzz: FAIL %s: %s\n"
          "      seed %" PRIu64 " type %" PRId64 " rank %d of %d, count %d, typed memory %s, packed memory %s\n"
          "      type: %s\n"
          "      the library's bounds: lb %" PRId64 " extent %" PRId64 "\n"
          "      reproduce: mpiexec -n %d gddt-fuzz-pack --seed %" PRIu64 " --only %" PRId64 " --memory %s\n",
          what.c_str(), detail.c_str(), run_.options.seed, index_, run_.rank, run_.ranks, count_,
          memory_kind_name(typed_kind_), memory_kind_name(packed_kind_), description_.c_str(), typemap_.lb,
          typemap_.extent(), run_.ranks, run_.options.seed, index_,
          run_.options.mixed ? "mixed" : memory_kind_name(run_.options.memory));
      std::fflush(stdout);
    }
  }

  RunContext& run_;
  std::int64_t index_;
  Rng rng_;
  TypeNode node_;
  const TypeNode* tested_ = &node_;  // node_, or the building block inside it under test
  LibraryBoundsMap library_bounds_;
  Typemap typemap_;  // with the bounds the library reports for every derived node
  std::string description_;
  int count_ = 0;
  MemoryKind typed_kind_ = MemoryKind::kHost;
  MemoryKind packed_kind_ = MemoryKind::kHost;
  MPI_Datatype datatype_ = MPI_DATATYPE_NULL;
  bool reference_usable_ = true;  // PMPI_Pack/PMPI_Unpack may be called
  bool failed_ = false;
  std::set<std::string> noted_;
  std::int64_t extent_ = 0;  // what element i is offset by in the piecewise calls
  std::int64_t low_ = 0;     // lowest and highest byte any element may touch, from origin
  std::int64_t high_ = 0;
  std::int64_t origin_ = 0;
  size_t typed_bytes_ = 0;
  size_t packed_bytes_ = 0;
  std::int64_t start_position_ = 0;
  std::int64_t stream_bytes_ = 0;
  std::int64_t library_stream_bytes_ = 0;  // count x the library's MPI_Type_size
};

std::uint64_t agreed_seed(const Options& options) {
  std::uint64_t seed = options.seed_given
                           ? options.seed
                           : static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

int run(int argc, char** argv) {
  RunContext context;
  MPI_Comm_rank(MPI_COMM_WORLD, &context.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &context.ranks);
  if (!parse_options(argc, argv, &context.options)) {
    if (context.rank == 0) print_usage();
    return 2;
  }
  Options& options = context.options;
  const std::string why = prepare_memory_kind(options.memory);
  if (!why.empty()) {
    if (context.rank == 0) std::printf("fuzz: skipped: %s\n", why.c_str());
    return 0;  // the line above skips the test (gddt_add_mpi_test)
  }
  options.seed = agreed_seed(options);
  std::string version;
  context.library = detect_mpi_library(&version);
  Notes notes(options.quiet);
  context.notes = &notes;
  if (context.rank == 0)
    std::printf("fuzz: seed %" PRIu64 ", %" PRId64 " types, %d ranks, memory %s, MPI %s, gddt %s\n",
                options.seed, options.only >= 0 ? 1 : options.types, context.ranks,
                options.mixed ? "mixed" : memory_kind_name(options.memory), version.c_str(), gddt_version_string());
  std::fflush(stdout);

  std::int64_t passed = 0, failed = 0;
  const std::int64_t first = options.only >= 0 ? options.only : context.rank;
  const std::int64_t last = options.only >= 0 ? options.only + 1 : options.types;
  const std::int64_t step = options.only >= 0 ? 1 : context.ranks;
  for (std::int64_t index = first; index < last; index += step) {
    TypeTest test(&context, index);
    (test.run() ? passed : failed)++;
    if (!options.quiet && context.rank == 0 && (passed + failed) % 1000 == 0) {
      std::printf("fuzz: %" PRId64 " types tested on rank 0\n", passed + failed);
      std::fflush(stdout);
    }
  }

  for (MPI_Datatype& type : context.kept) MPI_Type_free(&type);
  notes.print_summary(context.ranks > 1 ? "fuzz: rank " + std::to_string(context.rank) + ": " : "fuzz: ");
  std::fflush(stdout);
  std::int64_t local[2] = {passed, failed}, total[2] = {0, 0};
  MPI_Reduce(local, total, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (context.rank == 0) {
    if (total[1] > 0) std::printf("fuzz: failures reproduce with --seed %" PRIu64 "\n", options.seed);
    std::printf("fuzz: %" PRId64 " passed, %" PRId64 " failed\n", total[0], total[1]);
  }
  std::fflush(stdout);
  std::int64_t any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return any_failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace gddt_test::fuzz

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = gddt_test::fuzz::run(argc, argv);
  MPI_Finalize();
  return rc;
}
