// What the standard promises around the data: MPI_PROC_NULL, zero counts, wildcards, ignored
// statuses, message order, truncation and untouched receive gaps.
// The cases, a group to a file, are declared in semantics_cases.hpp.
#include <mpi.h>

#include <utility>

#include "harness.hpp"
#include "mpi/entry_points.hpp"
#include "semantics_cases.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

using Case = void (*)(const Context&, const TypeCatalog&);
const std::pair<const char*, Case> kCases[] = {
    {"proc_null", proc_null},         {"zero_count", zero_count},
    {"any_source", any_source},       {"any_tag", any_tag},
    {"status_ignore", status_ignore}, {"message_order", message_order},
    {"truncation", truncation},       {"receive_gaps_untouched", receive_gaps_untouched},
    {"order_behind_forwarded", order_behind_forwarded},
    {"freed_receive_lands", freed_receive_lands},
    {"freed_communicator_delivers", freed_communicator_delivers},
    {"lent_layouts_cross", lent_layouts_cross},
    {"lent_isend_returns_unread", lent_isend_returns_unread},
    {"counters_count_sides", counters_count_sides},
    {"staged_parts_counted", staged_parts_counted},
    {"types_readied_at_commit", types_readied_at_commit},
    {"windows_and_lone_messages", windows_and_lone_messages},
    {"bottom_with_absolute_addresses", bottom_with_absolute_addresses},
#if GDDT_HAVE_MPI_Isendrecv
    {"order_behind_isendrecv", order_behind_isendrecv},
#endif
#if GDDT_HAVE_MPI_Psend_init
    {"partitioned", partitioned},
    {"partitioned_errors", partitioned_errors},
#endif
};

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_semantics");
  const TypeCatalog types;
  for (const auto& [name, body] : kCases) {
    suite.run(name, [&types, body = body](const Context& context) { body(context, types); });
  }
  return suite.finish();
}
