// What the error tests share: the two ways a handle's errors are handled (returned, or a handler of
// the test's that counts them) that every case runs under, and error classes by name.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <string>

enum class Handling { kErrorsReturn, kCustomHandler };

inline const auto kHandlings = testing::Values(Handling::kErrorsReturn, Handling::kCustomHandler);

inline std::string handling_name(const testing::TestParamInfo<Handling>& info) {
  return info.param == Handling::kErrorsReturn ? "ErrorsReturn" : "CustomHandler";
}

// What the custom handler saw.
inline int handler_calls = 0;
inline int handler_class = MPI_SUCCESS;

inline void record_error(MPI_Comm*, int* code, ...) {
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

inline void record_file_error(MPI_File*, int* code, ...) {
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

inline std::string class_name(int error_class) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(error_class, text, &length);
  return std::to_string(error_class) + " (" + std::string(text, static_cast<std::size_t>(length)) + ")";
}

// Gives `handle` the handling asked for: MPI_ERRORS_RETURN, or a handler made by `create` from
// `record`, set by `set`.
template <typename Handle, typename Record>
void handle_errors(Handling handling, Handle handle, int (*create)(Record*, MPI_Errhandler*),
                   int (*set)(Handle, MPI_Errhandler), Record* record) {
  if (handling == Handling::kErrorsReturn) {
    set(handle, MPI_ERRORS_RETURN);
    return;
  }
  MPI_Errhandler handler;
  create(record, &handler);
  set(handle, handler);
  MPI_Errhandler_free(&handler);
}

// Every test of the program, between MPI_Init and MPI_Finalize; the program's exit code.
inline int run_with_mpi(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  MPI_Finalize();
  return failed;
}
