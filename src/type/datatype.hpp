// From MPI datatype handles to canonical layouts: decoding through
// MPI_Type_get_envelope/contents, and the thread-safe cache of analyses keyed by handle.
#pragma once

#include <mpi.h>

#include <memory>

#include "type/layout.hpp"

namespace gddt::type {

using LayoutPtr = std::shared_ptr<const Layout>;

// Decodes `datatype` (named or derived, committed or not) into a canonical layout whose size
// is the library's and whose lb/extent are the MPI standard's: the library's own where they
// differ from the standard's only by the epsilon padding it may choose, the standard's where
// the library gets them wrong (bounds.hpp). GDDT_ERR_INVALID_TYPE for MPI_DATATYPE_NULL,
// GDDT_ERR_UNSUPPORTED for constructors gddt cannot express (the caller forwards to MPI).
Status decode(MPI_Datatype datatype, Layout* out);

// The cached analysis of `datatype`, decoding it on first use (types committed before gddt
// was loaded are analysed lazily this way). Thread-safe.
Status lookup(MPI_Datatype datatype, LayoutPtr* out);

// Called by the interposed MPI_Type_commit after the library committed the type: analyses
// it now, replacing any entry left from an earlier type with the same handle.
void on_commit(MPI_Datatype datatype);

// Called by the interposed MPI_Type_free before the library frees the type: evicts it and
// remembers the handle as freed until it is committed again.
void on_free(MPI_Datatype datatype);

// The hot-path lookup: one shared lock. True when gddt knows `datatype` is committed (or
// freed: *status GDDT_ERR_INVALID_TYPE) and has its analysis; false when it must be asked
// about first (never seen committed, or not analysed yet).
bool find_committed(MPI_Datatype datatype, Status* status, LayoutPtr* out);

// True for a named datatype already seen whose element is one contiguous block at offset 0
// and whose extent is its size (MPI_INT, MPI_BYTE, ...): one load, no lock, for the hot path
// of host traffic. Named types are never freed, so the answer never goes stale.
bool is_plain_named(MPI_Datatype datatype);

// True when `datatype` was freed through MPI_Type_free and not committed since.
bool is_freed(MPI_Datatype datatype);

// True when gddt saw `datatype` committed (or it is a named type).
bool is_known_committed(MPI_Datatype datatype);

// Drops every entry (MPI_Finalize).
void clear_cache();

struct CacheStats {
  unsigned long long hits = 0, misses = 0, entries = 0;
};
CacheStats cache_stats();

}  // namespace gddt::type
