#include "mpi/fortran.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>

#include "core/log.hpp"

namespace gddt::mpi::fortran {
namespace {

// The Fortran layers' sentinels: Open MPI's are common blocks, named as the Fortran compiler
// that built the program mangles them (all four spellings are looked up); MPICH's mpi_f08 has
// objects of its own.
using Sentinels = std::array<const void*, 5>;

Sentinels sentinels(const char* open_mpi, const char* mpich_f08) {
  const std::string name = open_mpi;
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  const std::string spellings[] = {name, name + "_", name + "__", upper, mpich_f08};
  Sentinels found{};
  for (std::size_t i = 0; i < found.size(); ++i) found[i] = dlsym(RTLD_DEFAULT, spellings[i].c_str());
  return found;
}

enum Sentinel { kBottom, kInPlace, kStatusIgnore, kStatusesIgnore, kSentinels };

// Whether `address` is the Fortran layer's `sentinel`; its addresses are looked up once.
bool is(const void* address, Sentinel sentinel) {
  static const std::array<Sentinels, kSentinels> known = {
      sentinels("mpi_fortran_bottom", "MPIR_F08_MPI_BOTTOM"),
      sentinels("mpi_fortran_in_place", "MPIR_F08_MPI_IN_PLACE"),
      sentinels("mpi_fortran_status_ignore", "MPIR_F08_MPI_STATUS_IGNORE_OBJ"),
      sentinels("mpi_fortran_statuses_ignore", "MPIR_F08_MPI_STATUSES_IGNORE_OBJ"),
  };
  const Sentinels& candidates = known[sentinel];
  return address != nullptr && std::find(candidates.begin(), candidates.end(), address) != candidates.end();
}

// The INTEGERs of one Fortran status.
constexpr std::size_t kStatusIntegers = sizeof(MPI_Status) / sizeof(MPI_Fint);

}  // namespace

void* buffer(char* fortran) {
  if (is(fortran, kBottom)) return MPI_BOTTOM;
  return is(fortran, kInPlace) ? MPI_IN_PLACE : fortran;
}

std::vector<MPI_Datatype> datatypes(const MPI_Fint* fortran, MPI_Comm comm, call_buffers::Per per) {
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(std::max(call_buffers::datatypes_of(comm, per), 0)));
  for (std::size_t i = 0; i < types.size(); ++i) types[i] = MPI_Type_f2c(fortran[i]);
  return types;
}

std::string text(const char* fortran, std::size_t length) {
  std::string value(fortran, length);
  const auto end = value.find_last_not_of(' ');
  value.erase(end == std::string::npos ? 0 : end + 1);
  return value;
}

std::size_t length(MPI_Fint count) { return count > 0 ? static_cast<std::size_t>(count) : 0; }

void indices_out(const int* indices, int count, MPI_Fint* fortran) {
  if (count == MPI_UNDEFINED) return;
  for (int i = 0; i < count; ++i) fortran[i] = index_out(indices[i]);
}

Statuses::Statuses(MPI_Fint* fortran)
    : fortran_(fortran), array_(false), ignored_(is(fortran, kStatusIgnore)), c_(ignored_ ? 0 : 1) {}

Statuses::Statuses(MPI_Fint* fortran, MPI_Fint count)
    : fortran_(fortran),
      array_(true),
      ignored_(is(fortran, kStatusesIgnore)),
      c_(ignored_ ? 0 : std::max<std::size_t>(length(count), 1)) {}

void Statuses::out() const {
  if (ignored_ || fortran_ == nullptr) return;
  for (std::size_t i = 0; i < c_.size(); ++i) PMPI_Status_c2f(&c_[i], fortran_ + i * kStatusIntegers);
}

void* library_function(const char* name) {
  void* function = dlsym(RTLD_NEXT, name);
  if (function != nullptr) return function;
  GDDT_LOG(kError, "the MPI library's Fortran layer has no %s, which gddt's Fortran entry point calls", name);
  PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_OTHER);
  return nullptr;
}

}  // namespace gddt::mpi::fortran
