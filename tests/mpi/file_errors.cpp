// Error reporting of file reads and writes through gddt's host stand-ins (run with
// GDDT_FILE_HOST=gddt, so gddt itself stages these host buffers): an erroneous call gets the
// library's own class, and the file's error handler runs as often as for the library's call;
// device data in a datatype gddt cannot express is refused on the file's handler. Every case runs
// with MPI_ERRORS_RETURN on the file and with a custom error handler that counts its calls.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "error_handling.hpp"
#include "gddt/gddt_mpi.h"

namespace {

class FileErrors : public testing::TestWithParam<Handling> {
 protected:
  void SetUp() override {
    const char* directory = std::getenv("TMPDIR");
    const std::string path = std::string(directory != nullptr && *directory ? directory : "/tmp") + "/gddt-errors-" +
                             std::to_string(getpid()) + ".dat";
    ASSERT_EQ(MPI_File_open(MPI_COMM_SELF, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &file_),
              MPI_SUCCESS);
    handle_errors(GetParam(), file_, MPI_File_create_errhandler, MPI_File_set_errhandler, record_file_error);
    handler_calls = 0;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vector_);
    MPI_Type_commit(&vector_);
    typed_.assign(14, 0x01020304);
  }
  void TearDown() override {
    MPI_Type_free(&vector_);
    MPI_File_close(&file_);
  }

  // `call` through the library, then through gddt: an error of the same class, the file's handler
  // run as often.
  void expect_as_library(const std::string& what, const std::function<int(bool library)>& call) {
    handler_calls = 0;
    int library_class = MPI_SUCCESS, gddt_class = MPI_SUCCESS;
    MPI_Error_class(call(true), &library_class);
    const int library_handled = handler_calls;
    handler_calls = 0;
    MPI_Error_class(call(false), &gddt_class);
    EXPECT_NE(library_class, MPI_SUCCESS) << what;
    EXPECT_EQ(gddt_class, library_class) << what << ": gddt " << class_name(gddt_class) << ", the library "
                                         << class_name(library_class);
    EXPECT_EQ(handler_calls, library_handled) << what << ": the file's error handler ran " << handler_calls
                                              << " times, for the library's call " << library_handled;
  }

  MPI_File file_ = MPI_FILE_NULL;
  MPI_Datatype vector_ = MPI_DATATYPE_NULL;
  std::vector<int> typed_;
};

#define FILE_CALL(library, name, ...) ((library) ? P##name(__VA_ARGS__) : name(__VA_ARGS__))

TEST_P(FileErrors, ValidCallsSucceed) {
  ASSERT_EQ(MPI_File_write_at(file_, 0, typed_.data(), 2, vector_, MPI_STATUS_IGNORE), MPI_SUCCESS);
  std::vector<int> back(14, 0);
  MPI_Request request;
  ASSERT_EQ(MPI_File_iread_at(file_, 0, back.data(), 2, vector_, &request), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  for (int i = 0; i < 14; ++i) EXPECT_EQ(back[i], (i % 7) % 2 == 0 ? typed_[i] : 0) << "int " << i;
  EXPECT_EQ(handler_calls, 0);
}

TEST_P(FileErrors, BadArgumentsAsTheLibrary) {
  MPI_Datatype uncommitted;
  MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
  void* data = typed_.data();
  MPI_Request request;
  MPI_Status status;
  expect_as_library("MPI_File_write of a negative count",
                    [&](bool l) { return FILE_CALL(l, MPI_File_write, file_, data, -1, vector_, &status); });
  expect_as_library("MPI_File_iread_at of a negative count",
                    [&](bool l) { return FILE_CALL(l, MPI_File_iread_at, file_, 0, data, -2, vector_, &request); });
  expect_as_library("MPI_File_read_all_begin of a negative count",
                    [&](bool l) { return FILE_CALL(l, MPI_File_read_all_begin, file_, data, -1, vector_); });
  expect_as_library("MPI_File_read of MPI_DATATYPE_NULL",
                    [&](bool l) { return FILE_CALL(l, MPI_File_read, file_, data, 1, MPI_DATATYPE_NULL, &status); });
  expect_as_library("MPI_File_iwrite_shared of MPI_DATATYPE_NULL", [&](bool l) {
    return FILE_CALL(l, MPI_File_iwrite_shared, file_, data, 1, MPI_DATATYPE_NULL, &request);
  });
  expect_as_library("MPI_File_write_at_all of a datatype not committed", [&](bool l) {
    return FILE_CALL(l, MPI_File_write_at_all, file_, 0, data, 1, uncommitted, &status);
  });
  expect_as_library("MPI_File_write_at on MPI_FILE_NULL", [&](bool l) {
    return FILE_CALL(l, MPI_File_write_at, MPI_FILE_NULL, 0, data, 1, vector_, &status);
  });
  MPI_Type_free(&uncommitted);
}

// Bounds 2^44 bytes from its one int: a type gddt refuses to express (DecodeBounds), on a buffer its
// memory attribute declares device memory.
TEST_P(FileErrors, InexpressibleDeviceDataIsRefusedOnTheFile) {
  MPI_Datatype far;
  MPI_Type_create_resized(MPI_INT, MPI_Aint{1} << 44, 8, &far);
  MPI_Type_set_attr(far, gddt_memory_keyval(), GDDT_MEMORY_ATTRIBUTE(GDDT_MEMORY_DEVICE, 0));
  MPI_Type_commit(&far);
  MPI_Request request = MPI_REQUEST_NULL;
  const std::vector<std::pair<std::string, std::function<int()>>> calls = {
      {"MPI_File_write", [&] { return MPI_File_write(file_, typed_.data(), 1, far, MPI_STATUS_IGNORE); }},
      {"MPI_File_iread_at", [&] { return MPI_File_iread_at(file_, 0, typed_.data(), 1, far, &request); }},
      {"MPI_File_read_all_begin", [&] { return MPI_File_read_all_begin(file_, typed_.data(), 1, far); }},
  };
  for (const auto& [what, call] : calls) {
    handler_calls = 0;
    int rc_class = MPI_SUCCESS;
    MPI_Error_class(call(), &rc_class);
    EXPECT_EQ(rc_class, MPI_ERR_UNSUPPORTED_OPERATION) << what << ": " << class_name(rc_class);
    if (GetParam() == Handling::kCustomHandler) {
      EXPECT_EQ(handler_calls, 1) << what << ": the file's error handler must run once";
      EXPECT_EQ(handler_class, MPI_ERR_UNSUPPORTED_OPERATION) << what;
    }
  }
  EXPECT_EQ(request, MPI_REQUEST_NULL);
  MPI_Type_free(&far);
}

INSTANTIATE_TEST_SUITE_P(Handlings, FileErrors, kHandlings, handling_name);

}  // namespace

int main(int argc, char** argv) { return run_with_mpi(argc, argv); }
