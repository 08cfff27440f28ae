// Packed twins: for a datatype, a committed datatype with the same type signature whose
// elements lie back to back without gaps, i.e. the layout of the datatype's packed bytes.
// Sending staged bytes as count elements of the twin instead of MPI_PACKED tells the library
// where each basic element starts, which MPICH needs to receive a large message into a struct
// of mixed basic types (it refuses MPI_PACKED or MPI_BYTE data there beyond about 8 KiB).
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "type/contents.hpp"
#include "type/datatype.hpp"

namespace gddt::type {

namespace {

// A derived datatype handle this file created and must free; named handles are borrowed.
struct Handle {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  Handle() = default;
  explicit Handle(MPI_Datatype created) : type(created) {}
  Handle(Handle&& other) noexcept : type(other.type) { other.type = MPI_DATATYPE_NULL; }
  Handle& operator=(Handle&& other) noexcept {
    std::swap(type, other.type);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (type != MPI_DATATYPE_NULL && combiner_of(type) != MPI_COMBINER_NAMED) PMPI_Type_free(&type);
  }
  MPI_Datatype release() {
    MPI_Datatype released = type;
    type = MPI_DATATYPE_NULL;
    return released;
  }
};

bool fits_int(long long value) { return value >= 0 && value <= 0x7fffffff; }

// `count` twins of one child back to back.
bool repeated(long long count, const Handle& child, Handle* out) {
  MPI_Datatype made = MPI_DATATYPE_NULL;
  if (!fits_int(count) || PMPI_Type_contiguous(static_cast<int>(count), child.type, &made) != MPI_SUCCESS) return false;
  *out = Handle(made);
  return true;
}

// The value-and-index pair types have padding between their two members.
bool pair_members(MPI_Datatype datatype, MPI_Datatype* value) {
  const MPI_Datatype pairs[][2] = {{MPI_FLOAT_INT, MPI_FLOAT},   {MPI_DOUBLE_INT, MPI_DOUBLE},
                                   {MPI_LONG_INT, MPI_LONG},     {MPI_SHORT_INT, MPI_SHORT},
                                   {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE}};
  for (const auto& pair : pairs) {
    if (datatype == pair[0]) {
      *value = pair[1];
      return true;
    }
  }
  return false;
}

bool build(MPI_Datatype datatype, Handle* out);

// Members one after the other, with their block lengths: a struct without gaps.
bool packed_struct(const std::vector<int>& lengths, const std::vector<MPI_Datatype>& members, Handle* out) {
  std::vector<MPI_Aint> displacements(members.size());
  MPI_Aint at = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    displacements[i] = at;
    int size = 0;
    if (PMPI_Type_size(members[i], &size) != MPI_SUCCESS) return false;
    at += static_cast<MPI_Aint>(size) * lengths[i];
  }
  MPI_Datatype made = MPI_DATATYPE_NULL;
  if (PMPI_Type_create_struct(static_cast<int>(members.size()), lengths.data(), displacements.data(),
                              const_cast<MPI_Datatype*>(members.data()), &made) != MPI_SUCCESS) {
    return false;
  }
  *out = Handle(made);
  return true;
}

// The twin of `datatype` before it is resized to its size.
bool build_unresized(MPI_Datatype datatype, Handle* out) {
  const Envelope envelope = envelope_of(datatype);
  const int combiner = envelope.combiner;
  if (combiner == MPI_COMBINER_NAMED) {
    MPI_Datatype value = MPI_DATATYPE_NULL;
    if (pair_members(datatype, &value)) return packed_struct({1, 1}, {value, MPI_INT}, out);
    *out = Handle(datatype);  // named: borrowed, never freed
    return true;
  }
  Contents c;
  if (is_error(c.read(datatype, envelope))) return false;
  Handle child;
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      return build(c.types[0], out);
    case MPI_COMBINER_CONTIGUOUS:
      return build(c.types[0], &child) && repeated(c.ints[0], child, out);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:  // count blocks of blocklength elements each
      return build(c.types[0], &child) && repeated(static_cast<long long>(c.ints[0]) * c.ints[1], child, out);
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      long long total = 0;
      for (int i = 0; i < c.ints[0]; ++i) total += c.ints[1 + i];
      return build(c.types[0], &child) && repeated(total, child, out);
    }
    case MPI_COMBINER_SUBARRAY: {
      const int ndims = c.ints[0];
      long long total = 1;
      for (int d = 0; d < ndims; ++d) total *= c.ints[1 + ndims + d];
      return build(c.types[0], &child) && repeated(total, child, out);
    }
    case MPI_COMBINER_DARRAY: {
      // This process's block holds size(darray) / size(oldtype) elements.
      int whole = 0, element = 0;
      if (PMPI_Type_size(datatype, &whole) != MPI_SUCCESS || PMPI_Type_size(c.types[0], &element) != MPI_SUCCESS ||
          element <= 0) {
        return false;
      }
      return build(c.types[0], &child) && repeated(whole / element, child, out);
    }
    case MPI_COMBINER_STRUCT: {
      const int count = c.ints[0];
      std::vector<Handle> twins(static_cast<std::size_t>(count));
      std::vector<MPI_Datatype> members(static_cast<std::size_t>(count));
      std::vector<int> lengths(c.ints.begin() + 1, c.ints.begin() + 1 + count);
      for (std::size_t i = 0; i < twins.size(); ++i) {
        if (!build(c.types[i], &twins[i])) return false;
        members[i] = twins[i].type;
      }
      return packed_struct(lengths, members, out);
    }
    default:
      return false;  // Fortran parameterized types and anything newer: MPI_PACKED serves
  }
}

// The twin of `datatype`, resized so that its extent is its size.
bool build(MPI_Datatype datatype, Handle* out) {
  Handle unresized;
  if (!build_unresized(datatype, &unresized)) return false;
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_size(unresized.type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(unresized.type, &lb, &extent) != MPI_SUCCESS) {
    return false;
  }
  if (lb == 0 && extent == size) {
    *out = std::move(unresized);
    return true;
  }
  MPI_Datatype made = MPI_DATATYPE_NULL;
  if (PMPI_Type_create_resized(unresized.type, 0, size, &made) != MPI_SUCCESS) return false;
  *out = Handle(made);
  return true;
}

struct Twin {
  MPI_Datatype type = MPI_DATATYPE_NULL;  // owned: a committed derived type
  std::int64_t size = 0;                  // the datatype's size it was built for
};

struct Twins {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, Twin> by_type;
};

Twins& twins() {
  static auto* instance = new Twins;  // never destroyed: clear_twins() frees the handles in time
  return *instance;
}

void free_twin(Twin& twin) {
  if (twin.type != MPI_DATATYPE_NULL) PMPI_Type_free(&twin.type);
}

}  // namespace

bool packed_twin(MPI_Datatype datatype, std::int64_t size, MPI_Datatype* twin) {
  MPI_Datatype value = MPI_DATATYPE_NULL;
  // Named types are one basic type each, which MPI_PACKED serves, except the pair types.
  if (combiner_of(datatype) == MPI_COMBINER_NAMED && !pair_members(datatype, &value)) return false;
  Twins& t = twins();
  const std::uint64_t key = key_of(datatype);
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.by_type.find(key);
  // A twin built for another size belongs to an earlier type with this handle.
  if (it != t.by_type.end() && it->second.size == size) {
    *twin = it->second.type;
    return it->second.type != MPI_DATATYPE_NULL;
  }
  Twin made;
  made.size = size;
  Handle built;
  int built_size = -1;
  if (build(datatype, &built) && PMPI_Type_size(built.type, &built_size) == MPI_SUCCESS && built_size == size) {
    made.type = built.release();
    // A borrowed named type needs no commit and must not be freed later: keep a committed dup.
    if (combiner_of(made.type) == MPI_COMBINER_NAMED) {
      MPI_Datatype dup = MPI_DATATYPE_NULL;
      made.type = PMPI_Type_dup(made.type, &dup) == MPI_SUCCESS ? dup : MPI_DATATYPE_NULL;
    }
    if (made.type != MPI_DATATYPE_NULL && PMPI_Type_commit(&made.type) != MPI_SUCCESS) free_twin(made);
  }
  if (it != t.by_type.end()) free_twin(it->second);
  t.by_type[key] = made;  // a failure is remembered too: the next call uses MPI_PACKED at once
  *twin = made.type;
  return made.type != MPI_DATATYPE_NULL;
}

void forget_twin(MPI_Datatype datatype) {
  Twins& t = twins();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.by_type.find(key_of(datatype));
  if (it == t.by_type.end()) return;
  free_twin(it->second);
  t.by_type.erase(it);
}

void clear_twins() {
  Twins& t = twins();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (auto& entry : t.by_type) free_twin(entry.second);
  t.by_type.clear();
}

}  // namespace gddt::type
