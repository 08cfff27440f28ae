// The cases of p2p_semantics, each group declared by the file that holds it.
#pragma once

#include "harness.hpp"
#include "mpi/entry_points.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

// semantics_matching.cpp
void proc_null(const Context& context, const TypeCatalog& types);
void zero_count(const Context& context, const TypeCatalog& types);
void any_source(const Context& context, const TypeCatalog& types);
void any_tag(const Context& context, const TypeCatalog& types);
void status_ignore(const Context& context, const TypeCatalog& types);

// semantics_order.cpp
void message_order(const Context& context, const TypeCatalog& types);
void order_behind_forwarded(const Context& context, const TypeCatalog& types);
#if GDDT_HAVE_MPI_Isendrecv
void order_behind_isendrecv(const Context& context, const TypeCatalog& types);
#endif

#if GDDT_HAVE_MPI_Psend_init
// semantics_partitioned.cpp
void partitioned(const Context& context, const TypeCatalog& types);
void partitioned_errors(const Context& context, const TypeCatalog& types);
#endif

// semantics_freed.cpp
void freed_receive_lands(const Context& context, const TypeCatalog& types);
void freed_communicator_delivers(const Context& context, const TypeCatalog& types);

// semantics_gddt_paths.cpp
void lent_layouts_cross(const Context& context, const TypeCatalog& types);
void lent_isend_returns_unread(const Context& context, const TypeCatalog& types);
void counters_count_sides(const Context& context, const TypeCatalog& types);
void staged_parts_counted(const Context& context, const TypeCatalog& types);
void types_readied_at_commit(const Context& context, const TypeCatalog& types);
void windows_and_lone_messages(const Context& context, const TypeCatalog& types);

// semantics_buffers.cpp
void bottom_with_absolute_addresses(const Context& context, const TypeCatalog&);
void truncation(const Context& context, const TypeCatalog& types);
void receive_gaps_untouched(const Context& context, const TypeCatalog& types);

}  // namespace gddt_test::p2p
