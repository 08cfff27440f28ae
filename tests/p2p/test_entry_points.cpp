// Every point-to-point entry point, on messages around the ring of ranks.
// The cases, a group of entry points to a file, are declared in entry_points_cases.hpp.
#include <mpi.h>

#include <utility>

#include "entry_points_cases.hpp"
#include "harness.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

using Case = void (*)(const Context&, const TypeCatalog&);
const std::pair<const char*, Case> kCases[] = {
    {"send_recv", send_recv},
    {"isend_irecv_wait", isend_irecv_wait},
    {"ssend", ssend},
    {"issend", issend},
    {"bsend", bsend},
    {"ibsend", ibsend},
    {"rsend", rsend},
    {"irsend", irsend},
    {"sendrecv", sendrecv},
    {"sendrecv_replace", sendrecv_replace},
    {"persistent", persistent},
    {"wait", wait},
    {"waitall", waitall},
    {"waitany", waitany},
    {"waitsome", waitsome},
    {"test", test},
    {"testall", testall},
    {"testany", testany},
    {"testsome", testsome},
    {"request_free_completed_persistent", request_free_completed_persistent},
    {"request_free_active_send", request_free_active_send},
    {"request_get_status", request_get_status},
    {"cancel_receive", cancel_receive}, {"cancel_send", cancel_send},
    {"probe", probe},
    {"iprobe", iprobe},
    {"mprobe_mrecv", mprobe_mrecv},
    {"improbe_imrecv", improbe_imrecv},
    {"get_count_get_elements", get_count_get_elements},
#if MPI_VERSION >= 4
    {"large_count_sends", large_count_sends},
    {"large_count_persistent", large_count_persistent},
    {"large_count_exchanges", large_count_exchanges},
    {"large_count_beyond_int", large_count_beyond_int},
    {"large_count_pack", large_count_pack},
#endif
};

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_entry_points");
  const TypeCatalog types;
  for (const auto& [name, body] : kCases) {
    suite.run(name, [&types, body = body](const Context& context) { body(context, types); });
  }
  return suite.finish();
}
