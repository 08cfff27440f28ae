#include "mpi_env.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <mpi.h>

extern char** environ;

namespace gddt::bench {
namespace {

bool is_executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::string directories(path);
  std::size_t start = 0;
  while (start <= directories.size()) {
    const std::size_t end = directories.find(':', start);
    const std::string directory = directories.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!directory.empty() && is_executable(directory + "/" + name)) return directory + "/" + name;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

// bin/mpiexec beside the lib/ folder that the loaded MPI library came from, when there is one.
std::string mpiexec_beside_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&PMPI_Init), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string library(info.dli_fname);
  const std::size_t slash = library.rfind('/');
  if (slash == std::string::npos) return "";
  const std::string candidate = library.substr(0, slash) + "/../bin/mpiexec";
  return is_executable(candidate) ? candidate : "";
}

int integer_from_environment(const char* const* names) {
  for (const char* const* name = names; *name != nullptr; ++name) {
    const char* value = std::getenv(*name);
    if (value != nullptr && *value != '\0') return std::atoi(value);
  }
  return -1;
}

bool starts_with(const char* text, const char* prefix) { return std::strncmp(text, prefix, std::strlen(prefix)) == 0; }

// Variables a launcher (Open MPI's ORTE/PRRTE, PMIx, MPICH's Hydra, Slurm's PMI) sets for its
// ranks; a launcher started with them would try to join the job instead of starting one.
bool set_by_running_launcher(const char* entry) {
  static const char* const kPrefixes[] = {"PMIX_", "PMI_", "PRTE_", "ORTE_", "HYDRA_", "HYDI_",
                                          "MPI_LOCALNRANKS=", "MPI_LOCALRANKID=", "GDDT_DISABLE="};
  for (const char* prefix : kPrefixes) {
    if (starts_with(entry, prefix)) return true;
  }
  if (!starts_with(entry, "OMPI_")) return false;
  if (starts_with(entry, "OMPI_ALLOW_RUN_AS_ROOT")) return false;  // the user's, needed by the child's mpiexec
  if (!starts_with(entry, "OMPI_MCA_")) return true;  // OMPI_COMM_WORLD_RANK, OMPI_FILE_LOCATION...
  static const char* const kLauncherMca[] = {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_prte",
                                             "OMPI_MCA_initial_wdir="};
  for (const char* prefix : kLauncherMca) {
    if (starts_with(entry, prefix)) return true;
  }
  return false;
}

}  // namespace

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown MPI";
  std::string version(text, static_cast<std::size_t>(length));
  const std::size_t newline = version.find_first_of("\r\n");
  if (newline != std::string::npos) version.resize(newline);
  while (!version.empty() && (version.back() == ',' || version.back() == ' ')) version.pop_back();
  return version;
}

bool mpi_reports_cuda_aware(std::string* how) {
  // Asked at run time, not through mpi-ext.h: the library found at run time (a CUDA-aware
  // build on LD_LIBRARY_PATH, say) need not be the one whose headers this was built with.
  using Query = int (*)();
  const auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"));
  if (query != nullptr && query() != 0) {
    *how = "yes (MPIX_Query_cuda_support() = 1)";
    return true;
  }
  // Open MPI 5 without its CUDA component answers 0, yet UCX moves contiguous device buffers
  // once its CUDA transport is loaded (in MPI_Init).
  if (void* transport = dlopen("libuct_cuda.so.0", RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(transport);
    *how = "yes for contiguous buffers (UCX's CUDA transport is loaded; --cuda-aware no overrides)";
    return true;
  }
  *how = query == nullptr ? "no (this MPI has no MPIX_Query_cuda_support; --cuda-aware yes overrides)"
                          : "no (MPIX_Query_cuda_support() = 0; --cuda-aware yes overrides)";
  return false;
}

bool gddt_present(std::string* version, bool* disabled) {
  using VersionFunction = const char* (*)();
  const auto version_function = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "gddt_version_string"));
  const char* disable = std::getenv("GDDT_DISABLE");
  *disabled = disable != nullptr && (std::strcmp(disable, "1") == 0 || std::strcmp(disable, "yes") == 0 ||
                                     std::strcmp(disable, "true") == 0 || std::strcmp(disable, "on") == 0);
  if (version_function == nullptr) return false;
  *version = version_function();
  return true;
}

int launcher_local_rank() {
  static const char* const kNames[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                                       "PALS_LOCAL_RANKID", "SLURM_LOCALID", nullptr};
  return integer_from_environment(kNames);
}

int launcher_world_rank() {
  static const char* const kNames[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", nullptr};
  return integer_from_environment(kNames);
}

std::vector<std::string> default_launcher() {
#if defined(OPEN_MPI) && OPEN_MPI
  const char* prefix = std::getenv("OPAL_PREFIX");  // set by relocated installations
  std::string mpiexec = prefix != nullptr ? std::string(prefix) + "/bin/mpiexec" : "";
  if (!is_executable(mpiexec)) mpiexec = mpiexec_beside_library();
  if (mpiexec.empty()) mpiexec = find_in_path("mpiexec.openmpi");
  if (mpiexec.empty()) mpiexec = "mpiexec";
  std::vector<std::string> command = {mpiexec};
  if (geteuid() == 0) command.push_back("--allow-run-as-root");
  for (const char* argument : {"-x", "GDDT_DISABLE=1", "-n", "2"}) command.push_back(argument);
  return command;
#else
  std::string mpiexec = mpiexec_beside_library();
  if (mpiexec.empty()) mpiexec = find_in_path("mpiexec.mpich");
  if (mpiexec.empty()) mpiexec = "mpiexec";
  return {mpiexec, "-n", "2"};
#endif
}

std::vector<std::string> child_job_environment() {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!set_by_running_launcher(*entry)) environment.emplace_back(*entry);
  }
  environment.emplace_back("GDDT_DISABLE=1");
  return environment;
}

}  // namespace gddt::bench
