// What the benchmark learns about its surroundings without using any gddt function: the MPI
// library, whether it takes device pointers, whether gddt sits in front of it, and how to
// start a second job of the same MPI.
#pragma once

#include <string>
#include <vector>

namespace gddt::bench {

// First line of MPI_Get_library_version (callable before MPI_Init).
std::string mpi_library_version();

// Whether the MPI library says it accepts CUDA device buffers (MPIX_Query_cuda_support, which
// Open MPI and MPICH both offer); `how` gets the evidence. Call after MPI_Init.
bool mpi_reports_cuda_aware(std::string* how);

// Whether libgddt is in the process (linked or preloaded), found by its exported symbol only;
// `version` gets its version. `disabled` is set when GDDT_DISABLE asks it to stand aside.
bool gddt_present(std::string* version, bool* disabled);

// This process's rank on its node as the launcher announced it, or -1 when no known launcher
// variable is set (before MPI_Init the MPI library cannot be asked yet).
int launcher_local_rank();
int launcher_world_rank();

// The command prefix that starts 2 ranks with this MPI (its own mpiexec), e.g.
// {"/usr/bin/mpiexec.openmpi", "--allow-run-as-root", "-x", "GDDT_DISABLE=1", "-n", "2"}.
std::vector<std::string> default_launcher();

// This process's environment without the variables by which the running job's launcher tells
// its ranks who they are, so that a launcher started from here begins a job of its own; the
// user's own settings (OMPI_MCA_pml, UCX_*, LD_LIBRARY_PATH...) stay. Adds GDDT_DISABLE=1.
std::vector<std::string> child_job_environment();

}  // namespace gddt::bench
