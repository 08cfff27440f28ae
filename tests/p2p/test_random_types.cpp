// Random nested datatypes from the fuzzer's generator, sent between two ranks and to self with
// counts up to 65530, the send and receive buffers crossed over every memory kind of the run
// (--memory mixed: host, device, pinned and managed; otherwise the one kind given). What a
// receive must hold is the MPI library's own answer: the sender's image packed by PMPI_Pack and
// unpacked by PMPI_Unpack into a poisoned copy of the receive buffer, so every byte of the
// buffer, the gaps and margins around the data included, is checked against the library, and
// every status against the count sent. Some messages have a plain MPI peer on host memory
// (PMPI_Send or PMPI_Recv), which must understand gddt's messages and be understood by them.
//
// A second case sends types of many blocks (up to 65530) built the way MPI test suites build
// them (MPICH's dtpools: vector, indexed, block-indexed, struct and subarray types over MPI_INT or
// a struct of 4 MPI_INT and 8 MPI_DOUBLE), which cost a datatype engine the most to analyse.
//
// Ranks 0 and 1 exchange; other ranks only take part in the collective steps.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../mpi/fuzz_random.hpp"
#include "../mpi/fuzz_reference.hpp"
#include "../mpi/fuzz_type_tree.hpp"
#include "../mpi/fuzz_typemap.hpp"
#include "harness.hpp"

namespace gddt_test::p2p {
namespace {

using Bytes = std::vector<unsigned char>;

constexpr int kDefaultTypes = 120;
constexpr int kCounts[] = {1, 17, 50, 100, 512, 65530};
// Largest typed span of one message (count elements); counts shrink to stay below it.
constexpr std::int64_t kMaxSpanBytes = 4 << 20;
constexpr int kSender = 0;
constexpr int kReceiver = 1;

enum class Method { kSendRecv, kIsendIrecv, kSendrecv, kSelf, kPlainReceiver, kPlainSender };
constexpr Method kMethods[] = {Method::kSendRecv, Method::kIsendIrecv,    Method::kSendrecv,
                               Method::kSelf,     Method::kPlainReceiver, Method::kPlainSender};

const char* method_name(Method method) {
  switch (method) {
    case Method::kSendRecv: return "MPI_Send/MPI_Recv";
    case Method::kIsendIrecv: return "MPI_Isend/MPI_Irecv";
    case Method::kSendrecv: return "MPI_Sendrecv both ways";
    case Method::kSelf: return "MPI_Isend+MPI_Recv to self";
    case Method::kPlainReceiver: return "MPI_Send to PMPI_Recv on host";
    case Method::kPlainSender: return "PMPI_Send on host to MPI_Recv";
  }
  return "?";
}

// The memory kinds of the run: the one of --memory, or all four for --memory mixed.
std::vector<MemoryKind> kinds_of(const Context& context) {
  std::vector<MemoryKind> kinds;
  for (MemoryKind kind : context.memory_by_rank)
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  return kinds;
}

// Where `count` elements of a datatype touch memory, as the library reports its bounds.
struct Span {
  std::int64_t low = 0;   // relative to the buffer pointer given to MPI
  std::int64_t bytes = 0;
};

Span span_of(MPI_Datatype datatype, int count) {
  int size = 0;
  MPI_Type_size(datatype, &size);
  if (size == 0) return Span{};  // Open MPI reports a true lb of LONG_MAX for such types
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(datatype, &lb, &extent);
  MPI_Type_get_true_extent(datatype, &true_lb, &true_extent);
  const std::int64_t repeat = static_cast<std::int64_t>(count - 1) * extent;
  const std::int64_t low = std::min<std::int64_t>(true_lb, true_lb + repeat);
  const std::int64_t high = std::max<std::int64_t>(true_lb + true_extent, true_lb + true_extent + repeat);
  return Span{low, std::max<std::int64_t>(high - low, 0)};
}

// A typed buffer of one memory kind with margins around the span of its elements; the host
// image is what it holds (or must hold).
struct TypedImage {
  static constexpr std::int64_t kMargin = 64;
  Span span;
  Bytes image;

  TypedImage(const Span& s, fuzz::Rng* rng) : span(s), image(static_cast<std::size_t>(s.bytes + 2 * kMargin)) {
    for (std::size_t i = 0; i < image.size(); i += 8) {
      const std::uint64_t word = rng->next();
      std::memcpy(image.data() + i, &word, std::min<std::size_t>(8, image.size() - i));
    }
  }
  // The pointer handed to MPI for a copy of the image at `base`.
  std::int64_t origin() const { return kMargin - span.low; }
  void* address(unsigned char* base) const { return base + origin(); }
};

fuzz::TypeNode named(MPI_Datatype type) {
  fuzz::TypeNode node;
  node.named = type;
  return node;
}

// MPI_INT:4+MPI_DOUBLE:8 of MPICH's type lists: a struct of 4 ints and 8 doubles.
fuzz::TypeNode int4_double8() {
  fuzz::TypeNode node;
  node.constructor = fuzz::Constructor::kStruct;
  node.blocklengths = {4, 8};
  node.displacements = {0, 16};
  node.children = {named(MPI_INT), named(MPI_DOUBLE)};
  return node;
}

// A type of `blocks` blocks of `element` built by `constructor`, spaced like MPICH's dtpools
// (blocks of 1-3 elements with gaps of 1-2).
fuzz::TypeNode many_blocks(fuzz::Constructor constructor, const fuzz::TypeNode& element, std::int64_t element_extent,
                           int blocks) {
  fuzz::TypeNode node;
  node.constructor = constructor;
  node.children = {element};
  std::int64_t at = 0;
  for (int i = 0; i < blocks; ++i) {
    const int length = constructor == fuzz::Constructor::kIndexed || constructor == fuzz::Constructor::kHindexed
                           ? 1 + i % 3
                           : 2;
    node.blocklengths.push_back(length);
    node.displacements.push_back(fuzz::displacements_in_bytes(constructor) ? at * element_extent : at);
    at += length + 1 + i % 2;
  }
  switch (constructor) {
    case fuzz::Constructor::kVector:
    case fuzz::Constructor::kHvector:
      node.count = blocks;
      node.blocklength = 2;
      node.stride = constructor == fuzz::Constructor::kVector ? 3 : 3 * element_extent;
      node.blocklengths.clear();
      node.displacements.clear();
      break;
    case fuzz::Constructor::kIndexedBlock:
    case fuzz::Constructor::kHindexedBlock:
      node.blocklength = 2;
      break;
    case fuzz::Constructor::kStruct:
      node.children.assign(static_cast<std::size_t>(blocks), element);
      for (auto& displacement : node.displacements) displacement *= element_extent;
      break;
    case fuzz::Constructor::kSubarray:
      node.sizes = {blocks, 5};
      node.subsizes = {blocks, 2};
      node.starts = {0, 1};
      node.order = MPI_ORDER_C;
      node.blocklengths.clear();
      node.displacements.clear();
      break;
    default:
      break;
  }
  return node;
}

// Whether the library's own receive of a derived datatype, from a plain sender of packed bytes
// on host memory, leaves what its MPI_Unpack of those bytes leaves. Open MPI 5.0.11 over UCX
// 1.22 does not (docs/usage.md): there a plain receive of a derived datatype is checked through
// the packed bytes gddt sent instead. Ranks 0 and 1 exchange with PMPI calls only; every rank
// gets the answer.
bool library_receives_as_it_unpacks() {
  int rank = 0, ranks = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int sound = 1;
  const std::pair<MPI_Datatype, int> probes[] = {{MPI_INT, 8192}, {MPI_LONG_DOUBLE, 512}};
  for (const auto& [element, count] : probes) {
    if (ranks < 2 || rank > kReceiver) break;
    int element_size = 0;
    PMPI_Type_size(element, &element_size);
    const MPI_Aint displacements[] = {-element_size, element_size * 3 / 2};
    MPI_Datatype type;
    PMPI_Type_create_hindexed_block(2, 2, displacements, element, &type);
    PMPI_Type_commit(&type);
    const Span span = span_of(type, count);
    fuzz::Rng rng(static_cast<std::uint64_t>(count));
    TypedImage image(span, &rng), poison(span, &rng);
    std::vector<char> packed(static_cast<std::size_t>(4 * element_size) * static_cast<std::size_t>(count));
    int position = 0;
    PMPI_Pack(image.address(image.image.data()), count, type, packed.data(), static_cast<int>(packed.size()),
              &position, MPI_COMM_WORLD);
    if (rank == kSender) {
      PMPI_Send(packed.data(), position, MPI_PACKED, kReceiver, 0, MPI_COMM_WORLD);
    } else {
      Bytes received = poison.image, unpacked = poison.image;
      PMPI_Recv(poison.address(received.data()), count, type, kSender, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      position = 0;
      PMPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position, poison.address(unpacked.data()), count,
                  type, MPI_COMM_WORLD);
      if (received != unpacked) sound = 0;
    }
    PMPI_Type_free(&type);
  }
  if (ranks > 1) PMPI_Bcast(&sound, 1, MPI_INT, kReceiver, MPI_COMM_WORLD);
  return sound != 0;
}

// Plain derived receives that differed from the library's unpack where the library alone
// does the same (library_receives_as_it_unpacks false).
long library_receive_faults = 0;

class TypeRun {
 public:
  // The random type `index` of the run.
  TypeRun(const Context& context, fuzz::MpiLibrary library, bool library_sound, int index)
      : context_(context), library_(library), library_sound_(library_sound), rng_(fuzz::type_seed(context.seed, static_cast<std::uint64_t>(index))) {
    // Every rank builds the same type: darrays for grid rank 0 on both.
    node_ = fuzz::random_type(&rng_, fuzz::TypeLimits{}, 0);
    description_ = "type " + std::to_string(index) + " " + fuzz::describe(node_);
  }
  // A given type, sent `counts` elements at a time.
  TypeRun(const Context& context, fuzz::MpiLibrary library, bool library_sound, fuzz::TypeNode node,
          std::string name, std::vector<int> counts)
      : context_(context), library_(library), library_sound_(library_sound), rng_(fuzz::type_seed(context.seed, std::hash<std::string>{}(name))),
        node_(std::move(node)), description_(std::move(name)), counts_(std::move(counts)) {}

  void run() {
    int rc = fuzz::build_datatype(node_, rng_.next(), &datatype_, &bounds_);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&datatype_);
    expect(rc == MPI_SUCCESS, description_ + ": building the datatype failed");
    if (rc != MPI_SUCCESS) return;
    MPI_Type_size(datatype_, &size_);
    if (const char* why = fuzz::reference_unusable(library_, node_)) {
      note(std::string("not sent, the library's own packing of it is known to be wrong: ") + why);
    } else {
      const std::vector<MemoryKind> kinds = kinds_of(context_);
      for (Method method : kMethods) {
        const auto last = static_cast<std::int64_t>(kinds.size()) - 1;
        const MemoryKind send_kind = kinds[static_cast<std::size_t>(rng_.between(0, last))];
        const MemoryKind recv_kind = kinds[static_cast<std::size_t>(rng_.between(0, last))];
        exchange(method, send_kind, recv_kind, pick_count());
      }
    }
    if (node_.constructor != fuzz::Constructor::kNamed) MPI_Type_free(&datatype_);
  }

 private:
  int pick_count() {
    const std::vector<int> counts = counts_.empty() ? std::vector<int>(std::begin(kCounts), std::end(kCounts)) : counts_;
    int count = counts[static_cast<std::size_t>(rng_.between(0, static_cast<std::int64_t>(counts.size()) - 1))];
    while (count > 1 && span_of(datatype_, count).bytes > kMaxSpanBytes) count /= 2;
    return count;
  }

  // One message of `count` elements in `method`'s way; ranks not involved only draw the same
  // random numbers.
  void exchange(Method method, MemoryKind send_kind, MemoryKind recv_kind, int count) {
    const Span span = span_of(datatype_, count);
    TypedImage sent(span, &rng_);
    TypedImage poison(span, &rng_);
    const int tag = static_cast<int>(rng_.between(0, 30000));
    // The library's answer: what the receive buffer holds afterwards.
    Bytes expected = poison.image;
    std::vector<char> packed(static_cast<std::size_t>(size_) * static_cast<std::size_t>(count));
    if (size_ > 0) {
      int position = 0;
      PMPI_Pack(sent.address(sent.image.data()), count, datatype_, packed.data(), static_cast<int>(packed.size()),
                &position, MPI_COMM_WORLD);
      position = 0;
      PMPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position, poison.address(expected.data()), count,
                  datatype_, MPI_COMM_WORLD);
    }
    const std::string what = description_ + " x" + std::to_string(count) + ", " + method_name(method) + " from " +
                             memory_kind_name(send_kind) + " to " + memory_kind_name(recv_kind) + " memory";
    const bool self = method == Method::kSelf || method == Method::kSendrecv;
    const bool sends = context_.rank == kSender || (self && context_.rank == kReceiver);
    const bool receives = context_.rank == kReceiver || (self && context_.rank == kSender);
    if (!sends && !receives) return;
    const int peer = method == Method::kSelf ? context_.rank : context_.rank == kSender ? kReceiver : kSender;
    const MemoryKind send_memory = method == Method::kPlainSender ? MemoryKind::kHost : send_kind;
    const MemoryKind recv_memory = method == Method::kPlainReceiver ? MemoryKind::kHost : recv_kind;
    Buffer send_buffer(send_memory, sent.image.size());
    Buffer recv_buffer(recv_memory, poison.image.size());
    send_buffer.upload(sent.image.data(), sent.image.size());
    recv_buffer.upload(poison.image.data(), poison.image.size());
    void* send_at = sent.address(send_buffer.data());
    void* recv_at = poison.address(recv_buffer.data());
    MPI_Status status;
    std::memset(&status, 0, sizeof status);
    switch (method) {
      case Method::kSendRecv:
      case Method::kPlainReceiver:
      case Method::kPlainSender: {
        const bool plain = (method == Method::kPlainSender && sends) || (method == Method::kPlainReceiver && receives);
        if (sends) {
          P2P_EXPECT_SUCCESS((plain ? PMPI_Send : MPI_Send)(send_at, count, datatype_, peer, tag, MPI_COMM_WORLD));
        } else {
          P2P_EXPECT_SUCCESS(
              (plain ? PMPI_Recv : MPI_Recv)(recv_at, count, datatype_, peer, tag, MPI_COMM_WORLD, &status));
        }
        // The same message again, which the plain receiver takes as the packed bytes themselves.
        if (method == Method::kPlainReceiver && sends && size_ > 0)
          P2P_EXPECT_SUCCESS(MPI_Send(send_at, count, datatype_, peer, tag, MPI_COMM_WORLD));
        break;
      }
      case Method::kIsendIrecv: {
        MPI_Request request;
        if (sends) {
          P2P_EXPECT_SUCCESS(MPI_Isend(send_at, count, datatype_, peer, tag, MPI_COMM_WORLD, &request));
          P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));
        } else {
          P2P_EXPECT_SUCCESS(MPI_Irecv(recv_at, count, datatype_, peer, tag, MPI_COMM_WORLD, &request));
          P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
        }
        break;
      }
      case Method::kSendrecv:
        P2P_EXPECT_SUCCESS(MPI_Sendrecv(send_at, count, datatype_, peer, tag, recv_at, count, datatype_, peer, tag,
                                        MPI_COMM_WORLD, &status));
        break;
      case Method::kSelf: {
        MPI_Request request;
        P2P_EXPECT_SUCCESS(MPI_Isend(send_at, count, datatype_, peer, tag, MPI_COMM_WORLD, &request));
        P2P_EXPECT_SUCCESS(MPI_Recv(recv_at, count, datatype_, peer, tag, MPI_COMM_WORLD, &status));
        P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));
        break;
      }
    }
    if (sends) expect(send_buffer.download() == sent.image, what + ": the send buffer changed");
    if (!receives) return;
    check_status(status, peer, tag, count, what);
    const Bytes padding = long_double_padding(poison, count);
    if (method == Method::kPlainReceiver && size_ > 0) {
      std::vector<char> wire(packed.size());
      P2P_EXPECT_SUCCESS(PMPI_Recv(wire.data(), static_cast<int>(wire.size()), MPI_PACKED, peer, tag, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
      Bytes unpacked = poison.image;
      int position = 0;
      PMPI_Unpack(wire.data(), static_cast<int>(wire.size()), &position, poison.address(unpacked.data()), count,
                  datatype_, MPI_COMM_WORLD);
      expect_as_library(unpacked, expected, padding, poison, what + ", its packed bytes unpacked by PMPI_Unpack");
      if (!library_sound_) {
        if (first_difference(recv_buffer.download(), expected, padding) >= 0) ++library_receive_faults;
        return;
      }
    }
    expect_as_library(recv_buffer.download(), expected, padding, poison, what);
  }

  // The index of the first byte where `got` differs from `expected` outside `padding`, or -1.
  static std::int64_t first_difference(const Bytes& got, const Bytes& expected, const Bytes& padding) {
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != expected[i] && !padding[i]) return static_cast<std::int64_t>(i);
    return -1;
  }

  static void expect_as_library(const Bytes& got, const Bytes& expected, const Bytes& padding,
                                const TypedImage& poison, const std::string& what) {
    const std::int64_t i = first_difference(got, expected, padding);
    if (i < 0) return;
    const auto at = static_cast<std::size_t>(i);
    fail(what + ": byte " + std::to_string(i - poison.origin()) + " of the receive buffer (from its pointer) is " +
         std::to_string(got[at]) + ", the library's unpack gives " + std::to_string(expected[at]));
  }

  // Marks the receive buffer's bytes whose value the library leaves undefined (fuzz_reference.hpp):
  // the 6 padding bytes of every long double, which the library's pack, unpack and receive
  // paths copy or skip each in their own way; where elements overlap, one element's padding is
  // another's value, written in an order the standard leaves open, so then every byte of the
  // typemap. All zero elsewhere: every byte is checked.
  Bytes long_double_padding(const TypedImage& poison, int count) const {
    Bytes padding(poison.image.size(), 0);
    if (size_ == 0 || fuzz::reference_fault_explanation(library_, node_) == nullptr) return padding;
    fuzz::Typemap whole, values;
    fuzz::TypeNode value_only;
    fuzz::LibraryBoundsMap value_bounds;
    copy_with_long_double_values(node_, &value_only, &value_bounds);
    const fuzz::PaddingRule rule = fuzz::padding_rule(library_);
    if (!fuzz::expand_typemap(node_, rule, SIZE_MAX, &whole, &bounds_) ||
        !fuzz::expand_typemap(value_only, rule, SIZE_MAX, &values, &value_bounds))
      return padding;
    const Bytes marks(static_cast<std::size_t>(whole.size * count), 1);
    fuzz::model_unpack(whole, count, marks.data(), padding.data() + poison.origin());
    if (fuzz::overlaps(whole, count)) return padding;
    Bytes value_bytes(padding.size(), 0);
    fuzz::model_unpack(values, count, marks.data(), value_bytes.data() + poison.origin());
    for (std::size_t i = 0; i < padding.size(); ++i) padding[i] = padding[i] && !value_bytes[i];
    return padding;
  }

  // *out: `node` with every MPI_LONG_DOUBLE replaced by its 10 value bytes in a 16-byte
  // extent, and the library's bounds of `node`'s derived nodes carried over to their copies.
  void copy_with_long_double_values(const fuzz::TypeNode& node, fuzz::TypeNode* out,
                                    fuzz::LibraryBoundsMap* out_bounds) const {
    if (node.constructor == fuzz::Constructor::kNamed && node.named == MPI_LONG_DOUBLE) {
      fuzz::TypeNode bytes;
      bytes.constructor = fuzz::Constructor::kContiguous;
      bytes.count = 10;
      bytes.children = {named(MPI_BYTE)};
      *out = fuzz::TypeNode{};
      out->constructor = fuzz::Constructor::kResized;
      out->resized_lb = 0;
      out->resized_extent = static_cast<std::int64_t>(sizeof(long double));
      out->children = {bytes};
      return;
    }
    *out = node;
    for (std::size_t c = 0; c < node.children.size(); ++c)
      copy_with_long_double_values(node.children[c], &out->children[c], out_bounds);
    const auto found = bounds_.find(&node);
    if (found != bounds_.end()) (*out_bounds)[out] = found->second;
  }

  void check_status(const MPI_Status& status, int peer, int tag, int count, const std::string& what) {
    expect(status.MPI_SOURCE == peer && status.MPI_TAG == tag,
           what + ": status names source " + std::to_string(status.MPI_SOURCE) + " tag " +
               std::to_string(status.MPI_TAG));
    if (size_ == 0) return;
    int received = -1;
    MPI_Get_count(&status, datatype_, &received);
    expect(received == count, what + ": MPI_Get_count says " + std::to_string(received));
  }

  const Context& context_;
  fuzz::MpiLibrary library_;
  bool library_sound_;  // library_receives_as_it_unpacks()
  fuzz::Rng rng_;
  fuzz::TypeNode node_;
  fuzz::LibraryBoundsMap bounds_;  // of node_'s derived nodes, as the library reports them
  std::string description_;
  std::vector<int> counts_;  // empty: kCounts
  MPI_Datatype datatype_ = MPI_DATATYPE_NULL;
  int size_ = 0;
};

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_random_types");
  // A failed call is reported with the type and method that made it, not by an abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::string version;
  const auto library = gddt_test::fuzz::detect_mpi_library(&version);
  const bool sound = library_receives_as_it_unpacks();
  const auto report_library_faults = [sound, &version]() {
    if (sound) return;
    long faults = 0;
    PMPI_Reduce(&library_receive_faults, &faults, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    library_receive_faults = 0;
    note(version + ": the library's own receive of a derived datatype differs from its MPI_Unpack of the same "
         "bytes, with or without gddt; plain derived receives checked by their packed bytes, " +
         std::to_string(faults) + " of them received differently by the library");
  };
  suite.run("random_types", [library, sound, &report_library_faults](const Context& context) {
    const long types = context.messages > 0 ? context.messages : kDefaultTypes;
    for (int index = 0; index < types; ++index) TypeRun(context, library, sound, index).run();
    report_library_faults();
  });
  suite.run("many_blocks", [library, sound, &report_library_faults](const Context& context) {
    using gddt_test::fuzz::Constructor;
    const std::pair<gddt_test::fuzz::TypeNode, std::int64_t> elements[] = {
        {named(MPI_INT), static_cast<std::int64_t>(sizeof(int))}, {int4_double8(), 80}};
    const std::pair<Constructor, const char*> constructors[] = {
        {Constructor::kVector, "vector"},          {Constructor::kHvector, "hvector"},
        {Constructor::kIndexed, "indexed"},        {Constructor::kHindexed, "hindexed"},
        {Constructor::kIndexedBlock, "blkindx"},   {Constructor::kHindexedBlock, "hindexed_block"},
        {Constructor::kStruct, "struct"},          {Constructor::kSubarray, "subarray"}};
    for (const auto& [element, extent] : elements) {
      for (const auto& [constructor, name] : constructors) {
        for (int blocks : {17, 512, 65530}) {
          const std::string label = std::string(name) + " of " + std::to_string(blocks) + " blocks of " +
                                    (extent == 80 ? "MPI_INT:4+MPI_DOUBLE:8" : "MPI_INT");
          TypeRun(context, library, sound, many_blocks(constructor, element, extent, blocks), label, {1, 2}).run();
        }
      }
    }
    report_library_faults();
  });
  return suite.finish();
}
