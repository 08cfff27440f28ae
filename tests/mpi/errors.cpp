// Error reporting of gddt's MPI_Pack, MPI_Unpack and MPI_Pack_size, of its point-to-point
// calls (run with GDDT_PACK_HOST=gddt and GDDT_P2P_HOST=gddt, so gddt itself handles these host
// buffers) and of the window API.
// Every MPI case runs twice: with MPI_ERRORS_RETURN on the communicator (the return code
// carries the class) and with a custom error handler (which must run exactly once, with the
// same class).
#include <gtest/gtest.h>
#include <mpi.h>


#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "error_handling.hpp"
#include "gddt/gddt_mpi.h"
#include "mpi/entry_points.hpp"

namespace {

class PackErrors : public testing::TestWithParam<Handling> {
 protected:
  void SetUp() override {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    handle_errors(GetParam(), comm_, MPI_Comm_create_errhandler, MPI_Comm_set_errhandler, record_error);
    handler_calls = 0;
    handler_class = MPI_SUCCESS;
    // Four ints, every other one: 16 packed bytes from a 28-byte extent; two elements fit.
    MPI_Type_vector(4, 1, 2, MPI_INT, &vector_);
    MPI_Type_commit(&vector_);
    typed_.assign(14, 0x01020304);
    packed_.assign(64, kPoison);
  }

  void TearDown() override {
    MPI_Type_free(&vector_);
    MPI_Comm_free(&comm_);
  }

  // The call returned `rc`; it must be an error of `expected` class, reported the way the
  // communicator's handling says.
  void expect_error(int rc, int expected) {
    int rc_class = MPI_SUCCESS;
    MPI_Error_class(rc, &rc_class);
    EXPECT_EQ(rc_class, expected) << "returned " << class_name(rc_class) << ", want " << class_name(expected);
    if (GetParam() == Handling::kCustomHandler) {
      EXPECT_EQ(handler_calls, 1) << "the communicator's error handler must run once";
      EXPECT_EQ(handler_class, expected) << "handler got " << class_name(handler_class);
    }
    handler_calls = 0;
    handler_class = MPI_SUCCESS;
  }

  // No byte of the packed buffer from `first` on was written.
  void expect_untouched_from(size_t first) {
    for (size_t i = first; i < packed_.size(); ++i)
      ASSERT_EQ(packed_[i], kPoison) << "packed byte " << i << " was written";
  }

  int pack(const void* typed, int count, MPI_Datatype datatype, int outsize, int* position) {
    return MPI_Pack(typed, count, datatype, packed_.data(), outsize, position, comm_);
  }
  int unpack(int insize, int* position, void* typed, int count, MPI_Datatype datatype) {
    return MPI_Unpack(packed_.data(), insize, position, typed, count, datatype, comm_);
  }

  static constexpr unsigned char kPoison = 0xA5;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Datatype vector_ = MPI_DATATYPE_NULL;
  std::vector<int> typed_;
  std::vector<unsigned char> packed_;
};

TEST_P(PackErrors, ValidCallsSucceed) {
  int position = 0;
  ASSERT_EQ(pack(typed_.data(), 2, vector_, 64, &position), MPI_SUCCESS);
  EXPECT_EQ(position, 32);
  position = 0;
  ASSERT_EQ(unpack(64, &position, typed_.data(), 2, vector_), MPI_SUCCESS);
  EXPECT_EQ(position, 32);
  int size = 0;
  ASSERT_EQ(MPI_Pack_size(2, vector_, comm_, &size), MPI_SUCCESS);
  EXPECT_GE(size, 32);
  EXPECT_EQ(handler_calls, 0);
}

TEST_P(PackErrors, NullDatatype) {
  int position = 0, size = 0;
  expect_error(pack(typed_.data(), 1, MPI_DATATYPE_NULL, 64, &position), MPI_ERR_TYPE);
  expect_error(unpack(64, &position, typed_.data(), 1, MPI_DATATYPE_NULL), MPI_ERR_TYPE);
  expect_error(MPI_Pack_size(1, MPI_DATATYPE_NULL, comm_, &size), MPI_ERR_TYPE);
  expect_untouched_from(0);
}

TEST_P(PackErrors, UncommittedDatatype) {
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(3, MPI_INT, &uncommitted);
  int position = 0;
  expect_error(pack(typed_.data(), 1, uncommitted, 64, &position), MPI_ERR_TYPE);
  expect_error(unpack(64, &position, typed_.data(), 1, uncommitted), MPI_ERR_TYPE);
  EXPECT_EQ(position, 0);
  expect_untouched_from(0);
  MPI_Type_free(&uncommitted);
}

TEST_P(PackErrors, FreedDatatype) {
  MPI_Datatype datatype;
  MPI_Type_contiguous(3, MPI_INT, &datatype);
  MPI_Type_commit(&datatype);
  const MPI_Datatype stale = datatype;  // a copy of the handle outlives the type
  MPI_Type_free(&datatype);
  int position = 0, size = 0;
  expect_error(pack(typed_.data(), 1, stale, 64, &position), MPI_ERR_TYPE);
  expect_error(unpack(64, &position, typed_.data(), 1, stale), MPI_ERR_TYPE);
  expect_error(MPI_Pack_size(1, stale, comm_, &size), MPI_ERR_TYPE);
  expect_untouched_from(0);
}

TEST_P(PackErrors, NegativeCount) {
  int position = 0, size = 0;
  expect_error(pack(typed_.data(), -1, vector_, 64, &position), MPI_ERR_COUNT);
  expect_error(unpack(64, &position, typed_.data(), -1, vector_), MPI_ERR_COUNT);
  expect_error(MPI_Pack_size(-1, vector_, comm_, &size), MPI_ERR_COUNT);
  expect_untouched_from(0);
}

TEST_P(PackErrors, OutputTooSmall) {
  int position = 0;
  expect_error(pack(typed_.data(), 2, vector_, 31, &position), MPI_ERR_TRUNCATE);
  expect_untouched_from(31);
  position = 20;  // room for 11 bytes from here
  expect_error(pack(typed_.data(), 1, vector_, 31, &position), MPI_ERR_TRUNCATE);
  expect_untouched_from(31);
}

TEST_P(PackErrors, InputTooSmallOnUnpack) {
  std::vector<int> before = typed_;
  int position = 0;
  expect_error(unpack(15, &position, typed_.data(), 1, vector_), MPI_ERR_TRUNCATE);
  position = 8;
  expect_error(unpack(20, &position, typed_.data(), 1, vector_), MPI_ERR_TRUNCATE);
  EXPECT_EQ(typed_, before) << "a truncated unpack wrote to the typed buffer";
}

TEST_P(PackErrors, NullBufferWithData) {
  int position = 0;
  expect_error(pack(nullptr, 1, vector_, 64, &position), MPI_ERR_BUFFER);
  expect_untouched_from(0);
  expect_error(MPI_Pack(typed_.data(), 1, vector_, nullptr, 64, &position, comm_), MPI_ERR_BUFFER);
  expect_error(unpack(64, &position, nullptr, 1, vector_), MPI_ERR_BUFFER);
  expect_error(MPI_Unpack(nullptr, 64, &position, typed_.data(), 1, vector_, comm_), MPI_ERR_BUFFER);
}

TEST_P(PackErrors, InvalidPosition) {
  int position = -1;
  expect_error(pack(typed_.data(), 1, vector_, 64, &position), MPI_ERR_ARG);
  position = 65;
  expect_error(pack(typed_.data(), 1, vector_, 64, &position), MPI_ERR_ARG);
  expect_untouched_from(0);
  position = -1;
  expect_error(unpack(64, &position, typed_.data(), 1, vector_), MPI_ERR_ARG);
  position = 65;
  expect_error(unpack(64, &position, typed_.data(), 1, vector_), MPI_ERR_ARG);
}

// Point-to-point calls check their arguments before anything is posted (messages to this
// rank itself, which one process can complete).
using PointToPointErrors = PackErrors;

TEST_P(PointToPointErrors, ValidExchangeSucceeds) {
  std::vector<int> received(14, 0);
  ASSERT_EQ(MPI_Sendrecv(typed_.data(), 2, vector_, 0, 5, received.data(), 2, vector_, 0, 5, comm_,
                         MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  // Two elements of 7 ints each: ints 0, 2, 4, 6 of each, the other ints are gaps.
  for (int i = 0; i < 14; ++i) {
    const bool data = (i % 7) % 2 == 0;
    EXPECT_EQ(received[i], data ? typed_[i] : 0) << (data ? "int " : "gap int ") << i;
  }
  EXPECT_EQ(handler_calls, 0);
}

TEST_P(PointToPointErrors, NegativeCount) {
  MPI_Request request;
  expect_error(MPI_Send(typed_.data(), -1, vector_, 0, 1, comm_), MPI_ERR_COUNT);
  expect_error(MPI_Isend(typed_.data(), -2, vector_, 0, 1, comm_, &request), MPI_ERR_COUNT);
  expect_error(MPI_Recv(typed_.data(), -1, vector_, 0, 1, comm_, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
  expect_error(MPI_Irecv(typed_.data(), -1, vector_, 0, 1, comm_, &request), MPI_ERR_COUNT);
#if GDDT_HAVE_MPI_Isendrecv
  std::vector<int> other(14, 0);
  expect_error(MPI_Isendrecv(typed_.data(), -1, vector_, 0, 1, other.data(), 1, vector_, 0, 1, comm_, &request),
               MPI_ERR_COUNT);
  expect_error(MPI_Isendrecv(typed_.data(), 1, vector_, 0, 1, other.data(), -1, vector_, 0, 1, comm_, &request),
               MPI_ERR_COUNT);
  expect_error(MPI_Isendrecv_replace(typed_.data(), -1, vector_, 0, 1, 0, 1, comm_, &request), MPI_ERR_COUNT);
#endif
}

TEST_P(PointToPointErrors, NullAndFreedDatatypes) {
  MPI_Datatype datatype;
  MPI_Type_contiguous(3, MPI_INT, &datatype);
  MPI_Type_commit(&datatype);
  const MPI_Datatype stale = datatype;
  MPI_Type_free(&datatype);
  MPI_Request request;
  for (MPI_Datatype bad : {MPI_DATATYPE_NULL, stale}) {
    expect_error(MPI_Send(typed_.data(), 1, bad, 0, 2, comm_), MPI_ERR_TYPE);
    expect_error(MPI_Isend(typed_.data(), 1, bad, 0, 2, comm_, &request), MPI_ERR_TYPE);
    expect_error(MPI_Recv(typed_.data(), 1, bad, 0, 2, comm_, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    expect_error(MPI_Send_init(typed_.data(), 1, bad, 0, 2, comm_, &request), MPI_ERR_TYPE);
#if GDDT_HAVE_MPI_Isendrecv
    expect_error(MPI_Isendrecv_replace(typed_.data(), 1, bad, 0, 2, 0, 2, comm_, &request), MPI_ERR_TYPE);
#endif
  }
}

TEST_P(PointToPointErrors, NullBufferWithData) {
  MPI_Request request;
  expect_error(MPI_Send(nullptr, 1, vector_, 0, 3, comm_), MPI_ERR_BUFFER);
  expect_error(MPI_Irecv(nullptr, 1, vector_, 0, 3, comm_, &request), MPI_ERR_BUFFER);
}

#if MPI_VERSION >= 4
// MPI-4's large-count calls, where the library has them, report what their int twins report.
TEST_P(PointToPointErrors, LargeCountCalls) {
  const MPI_Count below_int = -(MPI_Count{1} << 40);
  MPI_Request request;
  expect_error(MPI_Send_c(typed_.data(), -1, vector_, 0, 6, comm_), MPI_ERR_COUNT);
  expect_error(MPI_Isend_c(typed_.data(), below_int, vector_, 0, 6, comm_, &request), MPI_ERR_COUNT);
  expect_error(MPI_Recv_c(typed_.data(), -1, vector_, 0, 6, comm_, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
  expect_error(MPI_Irecv_c(typed_.data(), below_int, vector_, 0, 6, comm_, &request), MPI_ERR_COUNT);
  expect_error(MPI_Sendrecv_c(typed_.data(), 1, vector_, 0, 6, typed_.data(), -1, vector_, 0, 6, comm_,
                              MPI_STATUS_IGNORE),
               MPI_ERR_COUNT);
  expect_error(MPI_Send_c(typed_.data(), 1, MPI_DATATYPE_NULL, 0, 6, comm_), MPI_ERR_TYPE);
  expect_error(MPI_Recv_init_c(typed_.data(), 1, MPI_DATATYPE_NULL, 0, 6, comm_, &request), MPI_ERR_TYPE);
  expect_error(MPI_Ssend_c(nullptr, 1, vector_, 0, 6, comm_), MPI_ERR_BUFFER);
}

TEST_P(PackErrors, LargeCountCalls) {
  MPI_Count position = 0;
  expect_error(MPI_Pack_c(typed_.data(), -1, vector_, packed_.data(), 64, &position, comm_), MPI_ERR_COUNT);
  expect_error(MPI_Pack_c(typed_.data(), 1, MPI_DATATYPE_NULL, packed_.data(), 64, &position, comm_), MPI_ERR_TYPE);
  expect_error(MPI_Pack_c(typed_.data(), 2, vector_, packed_.data(), 31, &position, comm_), MPI_ERR_TRUNCATE);
  expect_untouched_from(31);
  position = -1;
  expect_error(MPI_Pack_c(typed_.data(), 1, vector_, packed_.data(), 64, &position, comm_), MPI_ERR_ARG);
  position = 65;
  expect_error(MPI_Unpack_c(packed_.data(), 64, &position, typed_.data(), 1, vector_, comm_), MPI_ERR_ARG);
  position = 0;
  expect_error(MPI_Unpack_c(packed_.data(), 15, &position, typed_.data(), 1, vector_, comm_),
               MPI_ERR_TRUNCATE);
  expect_error(MPI_Unpack_c(packed_.data(), 64, &position, nullptr, 1, vector_, comm_), MPI_ERR_BUFFER);
  expect_untouched_from(0);
}
#endif

// Calls that first start the sends gddt holds back (deferred.hpp and the blocking shims of
// interpose_blocking.cpp) still check their own arguments: before each of them a nonblocking send to this rank is held (GDDT_P2P_HOST=gddt
// gives it to gddt), and afterwards that message arrives whole.
TEST_P(PointToPointErrors, CallsThatStartHeldSends) {
  int flag = 0, value = 0;
  const std::vector<std::pair<std::function<int()>, int>> calls = {
      {[&] { return MPI_Probe(1, 0, comm_, MPI_STATUS_IGNORE); }, MPI_ERR_RANK},
      {[&] { return MPI_Iprobe(0, -7, comm_, &flag, MPI_STATUS_IGNORE); }, MPI_ERR_TAG},
      {[&] { return MPI_Bcast(&value, 1, MPI_INT, 3, comm_); }, MPI_ERR_ROOT},
      {[&] { return MPI_Allreduce(&value, &flag, 1, MPI_INT, MPI_OP_NULL, comm_); }, MPI_ERR_OP},
      {[&] { return MPI_Gather(&value, 1, MPI_INT, &flag, 1, MPI_INT, 5, comm_); }, MPI_ERR_ROOT},
      {[&] { return MPI_Scatter(&value, 1, MPI_INT, &flag, 1, MPI_INT, -3, comm_); }, MPI_ERR_ROOT},
      {[&] { return MPI_Allgather(&value, -1, MPI_INT, &flag, 1, MPI_INT, comm_); }, MPI_ERR_COUNT},
      {[&] { return MPI_Alltoall(&value, 1, MPI_DATATYPE_NULL, &flag, 1, MPI_INT, comm_); }, MPI_ERR_TYPE},
      {[&] { return MPI_Reduce(&value, &flag, 1, MPI_INT, MPI_OP_NULL, 0, comm_); }, MPI_ERR_OP},
      {[&] { return MPI_Scan(&value, &flag, 1, MPI_INT, MPI_OP_NULL, comm_); }, MPI_ERR_OP},
      {[&] { return MPI_Exscan(&value, &flag, 1, MPI_INT, MPI_OP_NULL, comm_); }, MPI_ERR_OP},
  };
  // Not listed: MPICH 4 crashes itself on a negative count to MPI_Reduce_scatter_block and on
  // MPI_GROUP_NULL to MPI_Comm_create, with or without gddt.
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const int tag = 10 + static_cast<int>(k);
    MPI_Request request;
    ASSERT_EQ(MPI_Isend(typed_.data(), 2, vector_, 0, tag, comm_, &request), MPI_SUCCESS);
    expect_error(calls[k].first(), calls[k].second);
    std::vector<int> received(14, 0);
    ASSERT_EQ(MPI_Recv(received.data(), 2, vector_, 0, tag, comm_, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(request, MPI_REQUEST_NULL);
    for (int i = 0; i < 14; ++i) {
      const bool data = (i % 7) % 2 == 0;
      EXPECT_EQ(received[i], data ? typed_[i] : 0) << "call " << k << ", int " << i;
    }
  }
  EXPECT_EQ(handler_calls, 0);
}

// Completion calls handed no request array, or only null requests, while a receive of gddt's
// is alive: gddt must answer as the library does (it reports a missing array on
// MPI_COMM_WORLD, where errors return for this test), never crash.
TEST(CompletionErrors, NullArraysWhileAReceiveIsAlive) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype vector;
  MPI_Type_vector(4, 1, 2, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  std::vector<int> sent(14, 3), received(14, 0);
  MPI_Request pending;
  ASSERT_EQ(MPI_Irecv(received.data(), 2, vector, 0, 77, MPI_COMM_WORLD, &pending), MPI_SUCCESS);
  int index = 0, flag = 0, outcount = 0;
  int indices[2];
  MPI_Status statuses[2];
  using Call = std::function<int(bool library)>;
  const std::vector<std::pair<const char*, Call>> calls = {
      {"Wait(NULL)", [&](bool l) { return (l ? PMPI_Wait : MPI_Wait)(nullptr, statuses); }},
      {"Test(NULL)", [&](bool l) { return (l ? PMPI_Test : MPI_Test)(nullptr, &flag, statuses); }},
      {"Waitall(2, NULL)", [&](bool l) { return (l ? PMPI_Waitall : MPI_Waitall)(2, nullptr, statuses); }},
      {"Testall(2, NULL)", [&](bool l) { return (l ? PMPI_Testall : MPI_Testall)(2, nullptr, &flag, statuses); }},
      {"Waitany(2, NULL)", [&](bool l) { return (l ? PMPI_Waitany : MPI_Waitany)(2, nullptr, &index, statuses); }},
      {"Testany(2, NULL)",
       [&](bool l) { return (l ? PMPI_Testany : MPI_Testany)(2, nullptr, &index, &flag, statuses); }},
      {"Waitsome(2, NULL)",
       [&](bool l) { return (l ? PMPI_Waitsome : MPI_Waitsome)(2, nullptr, &outcount, indices, statuses); }},
      {"Testsome(2, NULL)",
       [&](bool l) { return (l ? PMPI_Testsome : MPI_Testsome)(2, nullptr, &outcount, indices, statuses); }},
      {"Startall(2, NULL)", [&](bool l) { return (l ? PMPI_Startall : MPI_Startall)(2, nullptr); }},
      // gddt's own request, with an output argument missing.
      {"Test(gddt's, flag NULL)", [&](bool l) { return (l ? PMPI_Test : MPI_Test)(&pending, nullptr, statuses); }},
      {"Testany(gddt's, index NULL)",
       [&](bool l) { return (l ? PMPI_Testany : MPI_Testany)(1, &pending, nullptr, &flag, statuses); }},
      {"Testany(gddt's, flag NULL)",
       [&](bool l) { return (l ? PMPI_Testany : MPI_Testany)(1, &pending, &index, nullptr, statuses); }},
      {"Testall(gddt's, flag NULL)",
       [&](bool l) { return (l ? PMPI_Testall : MPI_Testall)(1, &pending, nullptr, statuses); }},
      {"Testsome(gddt's, outcount NULL)",
       [&](bool l) { return (l ? PMPI_Testsome : MPI_Testsome)(1, &pending, nullptr, indices, statuses); }},
      {"Request_get_status(gddt's, flag NULL)",
       [&](bool l) { return (l ? PMPI_Request_get_status : MPI_Request_get_status)(pending, nullptr, statuses); }},
  };
  for (const auto& [name, call] : calls) {
    int library_class = MPI_SUCCESS, gddt_class = MPI_SUCCESS;
    MPI_Error_class(call(true), &library_class);
    MPI_Error_class(call(false), &gddt_class);
    EXPECT_EQ(gddt_class, library_class) << name << ": gddt " << class_name(gddt_class) << ", the library "
                                         << class_name(library_class);
  }
  // Only null requests: nothing to wait for.
  MPI_Request nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  index = 5;
  statuses[0].MPI_SOURCE = statuses[0].MPI_TAG = 12345;
  EXPECT_EQ(MPI_Waitany(2, nulls, &index, statuses), MPI_SUCCESS);
  EXPECT_EQ(index, MPI_UNDEFINED);
  // An empty status (MPI-4.0 3.7.3).
  int elements = -1;
  MPI_Get_count(&statuses[0], MPI_INT, &elements);
  EXPECT_EQ(statuses[0].MPI_SOURCE, MPI_ANY_SOURCE);
  EXPECT_EQ(statuses[0].MPI_TAG, MPI_ANY_TAG);
  EXPECT_EQ(elements, 0);
  EXPECT_EQ(MPI_Waitall(2, nulls, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(MPI_Testsome(2, nulls, &outcount, indices, statuses), MPI_SUCCESS);
  EXPECT_EQ(outcount, MPI_UNDEFINED);

  ASSERT_EQ(MPI_Send(sent.data(), 2, vector, 0, 77, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&pending, MPI_STATUS_IGNORE), MPI_SUCCESS);
  for (int i = 0; i < 14; ++i) EXPECT_EQ(received[i], (i % 7) % 2 == 0 ? 3 : 0) << "int " << i;
  MPI_Type_free(&vector);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

INSTANTIATE_TEST_SUITE_P(Handlings, PackErrors, kHandlings, handling_name);
INSTANTIATE_TEST_SUITE_P(Handlings, PointToPointErrors, kHandlings, handling_name);

// The window API returns statuses and raises nothing.
class WindowErrors : public testing::Test {
 protected:
  void SetUp() override {
    MPI_Type_vector(4, 1, 2, MPI_INT, &vector_);  // 16 packed bytes per element
    MPI_Type_commit(&vector_);
    typed_.assign(16, 7);
    packed_.assign(64, 0xA5);
  }
  void TearDown() override { MPI_Type_free(&vector_); }

  void expect_rejected(MPI_Datatype datatype, MPI_Count count, MPI_Count offset, MPI_Count length,
                       const void* typed, void* packed) {
    const std::vector<unsigned char> packed_before = packed_;
    const std::vector<int> typed_before = typed_;
    const gddt_status_t pack_status = gddt_pack_window(datatype, count, typed, packed, offset, length, nullptr);
    EXPECT_LT(pack_status, 0) << "gddt_pack_window gave " << gddt_status_string(pack_status);
    EXPECT_EQ(packed_, packed_before) << "a rejected pack window wrote";
    const gddt_status_t unpack_status =
        gddt_unpack_window(datatype, count, const_cast<void*>(typed), packed, offset, length, nullptr);
    EXPECT_LT(unpack_status, 0) << "gddt_unpack_window gave " << gddt_status_string(unpack_status);
    EXPECT_EQ(typed_, typed_before) << "a rejected unpack window wrote";
  }

  MPI_Datatype vector_ = MPI_DATATYPE_NULL;
  std::vector<int> typed_;
  std::vector<unsigned char> packed_;
};

TEST_F(WindowErrors, ValidWindowSucceeds) {
  EXPECT_EQ(gddt_pack_window(vector_, 2, typed_.data(), packed_.data(), 4, 20, nullptr), GDDT_OK);
  EXPECT_EQ(gddt_unpack_window(vector_, 2, typed_.data(), packed_.data(), 4, 20, nullptr), GDDT_OK);
}

TEST_F(WindowErrors, NegativeOffset) { expect_rejected(vector_, 2, -1, 4, typed_.data(), packed_.data()); }

TEST_F(WindowErrors, NegativeLength) { expect_rejected(vector_, 2, 0, -4, typed_.data(), packed_.data()); }

TEST_F(WindowErrors, PastTheStream) {
  expect_rejected(vector_, 2, 30, 4, typed_.data(), packed_.data());
  expect_rejected(vector_, 2, 33, 0, typed_.data(), packed_.data());
}

TEST_F(WindowErrors, NegativeCount) { expect_rejected(vector_, -1, 0, 0, typed_.data(), packed_.data()); }

TEST_F(WindowErrors, BadDatatypes) {
  expect_rejected(MPI_DATATYPE_NULL, 1, 0, 4, typed_.data(), packed_.data());
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  expect_rejected(uncommitted, 1, 0, 4, typed_.data(), packed_.data());
  MPI_Type_free(&uncommitted);
}

TEST_F(WindowErrors, NullBuffers) {
  expect_rejected(vector_, 2, 0, 8, nullptr, packed_.data());
  expect_rejected(vector_, 2, 0, 8, typed_.data(), nullptr);
}

}  // namespace

int main(int argc, char** argv) { return run_with_mpi(argc, argv); }
