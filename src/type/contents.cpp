#include "type/contents.hpp"

#include <climits>

namespace gddt::type {

#if MPI_VERSION >= 4

Envelope envelope_of(MPI_Datatype datatype) {
  Envelope e;
  PMPI_Type_get_envelope_c(datatype, &e.integers, &e.addresses, &e.large_counts, &e.datatypes, &e.combiner);
  return e;
}

namespace {

// The int constructor's arguments from a large-count constructor's (MPI-4.0, 5.1.13): the
// counts, block lengths and displacements it takes as MPI_Count come first in `counts`, in
// the order the int constructor's integers and addresses list them.
class Normalizer {
 public:
  Normalizer(const std::vector<int>& ints, const std::vector<MPI_Count>& counts, Contents* out)
      : ints_(ints), counts_(counts), out_(out) {}

  Status run(int combiner) {
    out_->ints.clear();
    out_->addresses.clear();
    switch (combiner) {
      case MPI_COMBINER_CONTIGUOUS:
        GDDT_CHECK(take_ints(1));
        break;
      case MPI_COMBINER_VECTOR:
        GDDT_CHECK(take_ints(3));
        break;
      case MPI_COMBINER_HVECTOR:
        GDDT_CHECK(take_ints(2));
        GDDT_CHECK(take_addresses(1));
        break;
      case MPI_COMBINER_INDEXED:
        GDDT_CHECK(take_ints(1 + 2 * listed()));
        break;
      case MPI_COMBINER_HINDEXED:
      case MPI_COMBINER_STRUCT: {
        const MPI_Count n = listed();
        GDDT_CHECK(take_ints(1 + n));
        GDDT_CHECK(take_addresses(n));
        break;
      }
      case MPI_COMBINER_INDEXED_BLOCK:
        GDDT_CHECK(take_ints(2 + listed()));
        break;
      case MPI_COMBINER_HINDEXED_BLOCK: {
        const MPI_Count n = listed();
        GDDT_CHECK(take_ints(2));
        GDDT_CHECK(take_addresses(n));
        break;
      }
      case MPI_COMBINER_SUBARRAY:
        // integers: ndims, order; counts: sizes, subsizes, starts.
        if (ints_.size() != 2) return GDDT_ERR_UNSUPPORTED;
        out_->ints.push_back(ints_[0]);
        GDDT_CHECK(take_ints(3 * static_cast<MPI_Count>(ints_[0])));
        out_->ints.push_back(ints_[1]);
        break;
      case MPI_COMBINER_DARRAY:
        // integers: size, rank, ndims, distribs, dargs, psizes, order; counts: gsizes.
        if (ints_.size() < 3 || ints_[2] < 0 || ints_.size() != 4 + 3 * static_cast<std::size_t>(ints_[2]))
          return GDDT_ERR_UNSUPPORTED;
        out_->ints.assign(ints_.begin(), ints_.begin() + 3);
        GDDT_CHECK(take_ints(ints_[2]));
        out_->ints.insert(out_->ints.end(), ints_.begin() + 3, ints_.end());
        break;
      case MPI_COMBINER_RESIZED:
        GDDT_CHECK(take_addresses(2));
        break;
      default:
        return GDDT_ERR_UNSUPPORTED;
    }
    // Every large count must have been used.
    return next_ == counts_.size() ? GDDT_OK : GDDT_ERR_UNSUPPORTED;
  }

 private:
  // The number of blocks a list constructor's first count gives (-1, which no take accepts,
  // for a missing or implausible one).
  MPI_Count listed() const {
    return !counts_.empty() && counts_[0] >= 0 && static_cast<std::size_t>(counts_[0]) <= counts_.size() ? counts_[0]
                                                                                                          : -1;
  }

  bool available(MPI_Count n) const {
    return n >= 0 && static_cast<std::size_t>(n) <= counts_.size() - next_;
  }

  Status take_ints(MPI_Count n) {
    if (!available(n)) return GDDT_ERR_UNSUPPORTED;
    for (MPI_Count i = 0; i < n; ++i) {
      const MPI_Count value = counts_[next_++];
      if (value < INT_MIN || value > INT_MAX) return GDDT_ERR_UNSUPPORTED;
      out_->ints.push_back(static_cast<int>(value));
    }
    return GDDT_OK;
  }

  Status take_addresses(MPI_Count n) {
    if (!available(n)) return GDDT_ERR_UNSUPPORTED;
    for (MPI_Count i = 0; i < n; ++i) out_->addresses.push_back(static_cast<MPI_Aint>(counts_[next_++]));
    return GDDT_OK;
  }

  const std::vector<int>& ints_;
  const std::vector<MPI_Count>& counts_;
  Contents* out_;
  std::size_t next_ = 0;
};

}  // namespace

Status Contents::read(MPI_Datatype datatype, const Envelope& e) {
  std::vector<int> integers(static_cast<std::size_t>(e.integers));
  std::vector<MPI_Count> counts(static_cast<std::size_t>(e.large_counts));
  addresses.resize(static_cast<std::size_t>(e.addresses));
  types.assign(static_cast<std::size_t>(e.datatypes), MPI_DATATYPE_NULL);
  GDDT_CHECK(mpi_status(PMPI_Type_get_contents_c(datatype, e.integers, e.addresses, e.large_counts, e.datatypes,
                                                  integers.data(), addresses.data(), counts.data(), types.data())));
  if (counts.empty()) {
    ints = std::move(integers);
    return GDDT_OK;
  }
  return Normalizer(integers, counts, this).run(e.combiner);
}

#else  // MPI-3: no large-count constructors

Envelope envelope_of(MPI_Datatype datatype) {
  Envelope e;
  int integers = 0, addresses = 0, datatypes = 0;
  PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &e.combiner);
  e.integers = integers;
  e.addresses = addresses;
  e.datatypes = datatypes;
  return e;
}

Status Contents::read(MPI_Datatype datatype, const Envelope& e) {
  ints.resize(static_cast<std::size_t>(e.integers));
  addresses.resize(static_cast<std::size_t>(e.addresses));
  types.assign(static_cast<std::size_t>(e.datatypes), MPI_DATATYPE_NULL);
  return mpi_status(PMPI_Type_get_contents(datatype, static_cast<int>(e.integers), static_cast<int>(e.addresses),
                                           static_cast<int>(e.datatypes), ints.data(), addresses.data(),
                                           types.data()));
}

#endif

}  // namespace gddt::type
