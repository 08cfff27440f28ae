// MPI_Pack_external and MPI_Unpack_external on buffers of one memory kind (--memory host,
// pinned, device or managed), compared byte for byte with the library's own external32
// packing of host copies: the packed bytes, the bytes around them, the position, and after
// unpacking the whole typed span, gaps included. Run on host memory with GDDT_PACK_HOST=gddt,
// gddt handles these calls itself (through host copies), which is how CI covers that path.
// Skipped where the memory kind cannot be had ("pack_external: skipped: ..." and exit 0).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "memory_buffer.hpp"

namespace {

using gddt_test::Buffer;
using gddt_test::MemoryKind;

MemoryKind memory = MemoryKind::kHost;
constexpr char kRep[] = "external32";
constexpr unsigned char kTypedPoison = 0x5a;
constexpr unsigned char kPackedPoison = 0xa5;
constexpr MPI_Aint kLead = 7;  // packed bytes before ours: positions must be honoured

struct Case {
  std::string name;
  std::function<MPI_Datatype()> build;
  int count;
  bool mixes_base_types = false;  // MPICH 4.0 dies in its own MPI_Pack_external_size on these
};

bool library_is_mpich_4_0() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  return std::string(version, static_cast<std::size_t>(length)).rfind("MPICH Version:\t4.0.", 0) == 0;
}

MPI_Datatype committed(MPI_Datatype type) {
  MPI_Type_commit(&type);
  return type;
}

std::vector<Case> cases() {
  return {
      {"vector of doubles", [] {
         MPI_Datatype t;
         MPI_Type_vector(5, 2, 3, MPI_DOUBLE, &t);
         return committed(t);
       }, 3},
      {"indexed ints", [] {
         const int lengths[] = {1, 3, 2, 5};
         const int displacements[] = {0, 2, 9, 13};
         MPI_Datatype t;
         MPI_Type_indexed(4, lengths, displacements, MPI_INT, &t);
         return committed(t);
       }, 4},
      {"struct with gaps, resized", [] {
         const int lengths[] = {1, 1, 2};
         const MPI_Aint displacements[] = {0, 8, 20};
         const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
         MPI_Datatype s, t;
         MPI_Type_create_struct(3, lengths, displacements, types, &s);
         MPI_Type_create_resized(s, 0, 32, &t);
         MPI_Type_free(&s);
         return committed(t);
       }, 5, true},
      {"3-D subarray of floats", [] {
         const int sizes[] = {6, 5, 4}, subsizes[] = {3, 2, 4}, starts[] = {1, 2, 0};
         MPI_Datatype t;
         MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &t);
         return committed(t);
       }, 2},
      {"hvector of long long, negative stride", [] {
         MPI_Datatype t;
         MPI_Type_create_hvector(4, 1, -24, MPI_LONG_LONG, &t);
         return committed(t);
       }, 2},
      {"pairs (MPI_2INT)", [] {
         MPI_Datatype t;
         MPI_Type_contiguous(3, MPI_2INT, &t);
         return committed(t);
       }, 3, true},
  };
}

// The typed span of `count` elements: where the buffer pointer lies inside it, and its size.
struct Span {
  MPI_Aint origin = 0;
  MPI_Aint bytes = 0;
};

Span span_of(MPI_Datatype type, int count) {
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  const MPI_Aint last = extent * (count - 1);
  const MPI_Aint low = std::min<MPI_Aint>(true_lb, true_lb + last);
  const MPI_Aint high = std::max<MPI_Aint>(true_lb + true_extent, true_lb + true_extent + last);
  return Span{-low, high - low};
}

std::vector<unsigned char> pattern(std::size_t bytes) {
  std::vector<unsigned char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + 3);
  return data;
}

class PackExternal : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const Case c = cases()[static_cast<std::size_t>(GetParam())];
    if (c.mixes_base_types && library_is_mpich_4_0()) GTEST_SKIP() << "MPICH 4.0 cannot pack " << c.name << " itself";
    name_ = c.name;
    type_ = c.build();
    count_ = c.count;
    span_ = span_of(type_, count_);
    MPI_Pack_external_size(kRep, count_, type_, &size_);
    source_ = pattern(static_cast<std::size_t>(span_.bytes));
    expected_.assign(static_cast<std::size_t>(size_), 0);
    MPI_Aint at = 0;
    ASSERT_EQ(PMPI_Pack_external(kRep, source_.data() + span_.origin, count_, type_, expected_.data(), size_, &at),
              MPI_SUCCESS);
    ASSERT_EQ(at, size_);
  }
  void TearDown() override {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }

  std::string name_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int count_ = 0;
  Span span_;
  MPI_Aint size_ = 0;
  std::vector<unsigned char> source_, expected_;
};

TEST_P(PackExternal, PacksTheLibrarysBytesAtThePosition) {
  Buffer typed(memory, source_.size());
  typed.upload(source_.data(), source_.size());
  const MPI_Aint room = kLead + size_ + 16;
  Buffer packed(memory, static_cast<std::size_t>(room));
  const std::vector<unsigned char> poison(static_cast<std::size_t>(room), kPackedPoison);
  packed.upload(poison.data(), poison.size());

  MPI_Aint position = kLead;
  ASSERT_EQ(MPI_Pack_external(kRep, typed.data() + span_.origin, count_, type_, packed.data(), room, &position),
            MPI_SUCCESS)
      << name_;
  EXPECT_EQ(position, kLead + size_) << name_;
  std::vector<unsigned char> got(static_cast<std::size_t>(room));
  packed.download(got.data(), got.size());
  std::vector<unsigned char> want = poison;
  std::memcpy(want.data() + kLead, expected_.data(), expected_.size());
  EXPECT_EQ(got, want) << name_ << ": packed bytes, or the bytes around them";
}

TEST_P(PackExternal, UnpacksIntoTheSpanLeavingGapsAlone) {
  const MPI_Aint room = kLead + size_;
  Buffer packed(memory, static_cast<std::size_t>(room));
  std::vector<unsigned char> stream(static_cast<std::size_t>(room), kPackedPoison);
  std::memcpy(stream.data() + kLead, expected_.data(), expected_.size());
  packed.upload(stream.data(), stream.size());
  std::vector<unsigned char> want(source_.size(), kTypedPoison);
  Buffer typed(memory, want.size());
  typed.upload(want.data(), want.size());

  MPI_Aint position = kLead;
  ASSERT_EQ(MPI_Unpack_external(kRep, packed.data(), room, &position, typed.data() + span_.origin, count_, type_),
            MPI_SUCCESS)
      << name_;
  EXPECT_EQ(position, room) << name_;
  MPI_Aint at = kLead;
  ASSERT_EQ(PMPI_Unpack_external(kRep, stream.data(), room, &at, want.data() + span_.origin, count_, type_),
            MPI_SUCCESS);
  std::vector<unsigned char> got(want.size());
  typed.download(got.data(), got.size());
  EXPECT_EQ(got, want) << name_ << ": unpacked span";
}

TEST_P(PackExternal, ReportsTooSmallABufferAsTheLibraryDoes) {
  Buffer typed(memory, source_.size());
  typed.upload(source_.data(), source_.size());
  const MPI_Aint room = kLead + size_ - 1;
  Buffer packed(memory, static_cast<std::size_t>(room));

  // The library's class where it reports the error; MPI_ERR_TRUNCATE where it does not (MPICH
  // 4.0 then writes past the end: the host buffer has room for that).
  std::vector<unsigned char> host(static_cast<std::size_t>(room + size_));
  MPI_Aint library_position = kLead;
  const int library_rc =
      PMPI_Pack_external(kRep, source_.data() + span_.origin, count_, type_, host.data(), room, &library_position);
  int library_class = MPI_ERR_TRUNCATE, gddt_class = MPI_SUCCESS;
  if (library_rc != MPI_SUCCESS) MPI_Error_class(library_rc, &library_class);

  MPI_Aint position = kLead;
  const int rc = MPI_Pack_external(kRep, typed.data() + span_.origin, count_, type_, packed.data(), room, &position);
  ASSERT_NE(rc, MPI_SUCCESS) << name_;
  MPI_Error_class(rc, &gddt_class);
  EXPECT_EQ(gddt_class, library_class) << name_;
  EXPECT_EQ(position, kLead) << name_;

  MPI_Aint unpack_position = kLead;
  std::vector<unsigned char> stream(static_cast<std::size_t>(room) + 1, kPackedPoison);  // a byte of slack
  packed.upload(stream.data(), static_cast<std::size_t>(room));
  const int unpack_library_rc = PMPI_Unpack_external(kRep, stream.data(), room, &unpack_position,
                                                     source_.data() + span_.origin, count_, type_);
  library_class = MPI_ERR_TRUNCATE;
  if (unpack_library_rc != MPI_SUCCESS) MPI_Error_class(unpack_library_rc, &library_class);
  unpack_position = kLead;
  const int unpack_rc =
      MPI_Unpack_external(kRep, packed.data(), room, &unpack_position, typed.data() + span_.origin, count_, type_);
  ASSERT_NE(unpack_rc, MPI_SUCCESS) << name_;
  MPI_Error_class(unpack_rc, &gddt_class);
  EXPECT_EQ(gddt_class, library_class) << name_;
  EXPECT_EQ(unpack_position, kLead) << name_;
}

#if MPI_VERSION >= 4
TEST_P(PackExternal, LargeCountCallsMatchTheirIntTwins) {
  Buffer typed(memory, source_.size());
  typed.upload(source_.data(), source_.size());
  Buffer packed(memory, static_cast<std::size_t>(kLead + size_));
  MPI_Count position = kLead;
  ASSERT_EQ(MPI_Pack_external_c(kRep, typed.data() + span_.origin, count_, type_, packed.data(), kLead + size_,
                                &position),
            MPI_SUCCESS)
      << name_;
  EXPECT_EQ(position, kLead + size_);
  std::vector<unsigned char> got(static_cast<std::size_t>(size_));
  std::vector<unsigned char> all(static_cast<std::size_t>(kLead + size_));
  packed.download(all.data(), all.size());
  std::memcpy(got.data(), all.data() + kLead, got.size());
  EXPECT_EQ(got, expected_) << name_;

  std::vector<unsigned char> cleared(source_.size(), kTypedPoison);
  typed.upload(cleared.data(), cleared.size());
  position = kLead;
  ASSERT_EQ(MPI_Unpack_external_c(kRep, packed.data(), kLead + size_, &position, typed.data() + span_.origin, count_,
                                  type_),
            MPI_SUCCESS)
      << name_;
  EXPECT_EQ(position, kLead + size_);
  MPI_Aint at = 0;
  ASSERT_EQ(PMPI_Unpack_external(kRep, expected_.data(), size_, &at, cleared.data() + span_.origin, count_, type_),
            MPI_SUCCESS);
  std::vector<unsigned char> unpacked(cleared.size());
  typed.download(unpacked.data(), unpacked.size());
  EXPECT_EQ(unpacked, cleared) << name_;
}
#endif

INSTANTIATE_TEST_SUITE_P(Types, PackExternal, testing::Range(0, static_cast<int>(cases().size())));

// A null datatype or a negative count on any memory gets the error class the library gives the
// same call on host memory, and leaves the position alone.
TEST(PackExternalArguments, BadOnesGetTheLibrarysClass) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  struct Bad {
    const char* what;
    MPI_Datatype type;
    int count;
  };
  for (const Bad& bad : {Bad{"MPI_DATATYPE_NULL", MPI_DATATYPE_NULL, 4}, Bad{"count -1", MPI_INT, -1}}) {
    std::vector<unsigned char> host_typed(64), host_packed(64);
    Buffer typed(memory, 64), packed(memory, 64);
    MPI_Aint library_position = 0, position = 0;
    int library_class = MPI_SUCCESS, gddt_class = MPI_SUCCESS;
    const int library_rc =
        PMPI_Pack_external(kRep, host_typed.data(), bad.count, bad.type, host_packed.data(), 64, &library_position);
    ASSERT_NE(library_rc, MPI_SUCCESS) << bad.what << ": the library accepts it";
    MPI_Error_class(library_rc, &library_class);
    const int rc = MPI_Pack_external(kRep, typed.data(), bad.count, bad.type, packed.data(), 64, &position);
    ASSERT_NE(rc, MPI_SUCCESS) << bad.what;
    MPI_Error_class(rc, &gddt_class);
    EXPECT_EQ(gddt_class, library_class) << bad.what;
    EXPECT_EQ(position, 0) << bad.what;

    library_position = position = 0;
    const int library_unpack_rc =
        PMPI_Unpack_external(kRep, host_packed.data(), 64, &library_position, host_typed.data(), bad.count, bad.type);
    ASSERT_NE(library_unpack_rc, MPI_SUCCESS) << bad.what << ": the library accepts it";
    MPI_Error_class(library_unpack_rc, &library_class);
    const int unpack_rc = MPI_Unpack_external(kRep, packed.data(), 64, &position, typed.data(), bad.count, bad.type);
    ASSERT_NE(unpack_rc, MPI_SUCCESS) << bad.what;
    MPI_Error_class(unpack_rc, &gddt_class);
    EXPECT_EQ(gddt_class, library_class) << bad.what;
    EXPECT_EQ(position, 0) << bad.what;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--memory" && !gddt_test::parse_memory_kind(argv[i + 1], &memory)) {
      std::fprintf(stderr, "unknown memory kind %s\n", argv[i + 1]);
      MPI_Finalize();
      return 2;
    }
  }
  const std::string why = gddt_test::prepare_memory_kind(memory);
  if (!why.empty()) {
    std::printf("pack_external: skipped: %s\n", why.c_str());
    MPI_Finalize();
    return 0;  // the line above skips the test (gddt_add_mpi_test)
  }
  const int failed = RUN_ALL_TESTS();
  MPI_Finalize();
  return failed;
}
