#include "checks.hpp"

#include <cstdio>
#include <cstdlib>

namespace gddt::bench {

void die(const std::string& message) {
  int initialized = 0;
  int finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  const bool in_mpi = initialized && !finalized;
  int rank = -1;
  if (in_mpi) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "gddt-bench (rank %d): %s\n", rank, message.c_str());
  std::fflush(stderr);
  if (in_mpi) PMPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void die_at(const char* call, const char* file, int line, const std::string& detail) {
  die(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + detail);
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (PMPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace gddt::bench
