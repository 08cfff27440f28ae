// The peer protocol's node table (protocol/peer/node_table.cpp) is trusted only if it is this
// user's own. Its name is predictable (the uid, the parent process and its start time), so another
// user could make the shared memory object first and feed the job CUDA IPC handles; gddt must then
// refuse it, keep the peer protocol off for the job and communicate as before (the raw format).
//   --table own            nothing made first: gddt makes the table under the name this test
//                          derives, and messages between the ranks take the peer protocol
//   --table foreign-mode   every rank makes the name first, mode 0666, before MPI_Init
//   --table foreign-owner  the same with mode 0600 and another owner (only root can; skipped
//                          otherwise)
// Run with GDDT_P2P_HOST=gddt, under which host messages between gddt processes take the peer
// protocol. Skipped under MPICH 4.0, where gddt never uses the protocol.
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness.hpp"
#include "trial.hpp"

namespace gddt_test::p2p {
namespace {

// gddt's version of its peer protocol, part of the name; the case `table` fails when it changes.
constexpr int kProtocolVersion = 8;
// Who owns a foreign table when the test runs as root: nobody.
constexpr uid_t kForeignOwner = 65534;

// The node table's name as gddt derives it: the launcher's daemon (the parent of every process of
// the job on the node) and its start time, field 22 of its /proc stat line.
std::string node_table_name() {
  const pid_t parent = getppid();
  std::ifstream in("/proc/" + std::to_string(parent) + "/stat");
  const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t command_end = line.rfind(')');
  unsigned long long start_time = 0;
  if (command_end != std::string::npos)  // fields 3 (state) to 21 skipped
    std::sscanf(line.c_str() + command_end + 2, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                                                "%*s %*s %llu", &start_time);
  return "/gddt-peers-v" + std::to_string(kProtocolVersion) + "-" + std::to_string(getuid()) + "-" +
         std::to_string(parent) + "-" + std::to_string(start_time);
}

struct Foreign {
  mode_t mode;
  uid_t owner;
};

// Makes `name` as another user would: empty (as gddt's own table is before it is sized), `mode`,
// owned by `owner`. Every rank tries; the first makes it.
void make_foreign(const std::string& name, const Foreign& foreign) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) return;
  if (fchmod(fd, foreign.mode) != 0 || fchown(fd, foreign.owner, foreign.owner) != 0)
    std::perror("making the foreign node table");
  close(fd);
}

// Ints in a vector type around the ring: the data must arrive and the gaps stay as they were.
void messages(const Context& context) {
  MPI_Datatype vector;
  MPI_Type_vector(64, 3, 5, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  std::vector<int> sent(320), received(320, -1);
  for (int i = 0; i < 320; ++i) sent[i] = context.rank * 1000 + i;
  for (int tag = 0; tag < 4; ++tag)
    P2P_EXPECT_SUCCESS(MPI_Sendrecv(sent.data(), 1, vector, context.next, tag, received.data(), 1, vector,
                                    context.prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int i = 0; i < 320; ++i) {
    const int expected = i % 5 < 3 ? context.prev * 1000 + i : -1;
    if (received[i] == expected) continue;
    fail("int " + std::to_string(i) + " received " + std::to_string(received[i]) + ", expected " +
         std::to_string(expected));
    break;
  }
  MPI_Type_free(&vector);
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  std::string table = "own";
  std::vector<char*> arguments;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--table") == 0 && i + 1 < argc) {
      table = argv[++i];
      continue;
    }
    arguments.push_back(argv[i]);
  }
  int count = static_cast<int>(arguments.size());
  char** rest = arguments.data();
  const std::string name = node_table_name();
  const bool root = geteuid() == 0;
  const Foreign foreign = table == "foreign-owner" ? Foreign{0600, kForeignOwner} : Foreign{0666, geteuid()};
  if (table != "own" && (table == "foreign-mode" || root)) make_foreign(name, foreign);
  Suite suite(&count, &rest, "p2p_node_table");
#if defined(MPICH_VERSION)
  suite.skip("gddt keeps the peer protocol off under MPICH 4.0");
#endif
  if (table != "own" && table != "foreign-mode" && table != "foreign-owner") suite.skip("unknown --table " + table);
  if (table == "foreign-owner" && !root) suite.skip("only root can give a shared memory object another owner");
  const long long peer_sides_before = gddt_test::trial::counter_value("p2p.peer-inline.sides");
  suite.run("messages", messages);
  suite.run("peer_protocol", [&](const Context&) {
    const long long peer_sides = gddt_test::trial::counter_value("p2p.peer-inline.sides") - peer_sides_before;
    expect(table == "own" ? peer_sides > 0 : peer_sides == 0,
           std::to_string(peer_sides) + " sends took the peer protocol with the " + table + " node table");
  });
  suite.run("table", [&](const Context&) {
    struct stat st {};
    const bool there = stat(("/dev/shm" + name).c_str(), &st) == 0;
    if (table == "own") {
      expect(there, "gddt's node table is not /dev/shm" + name + ": the test derives its name otherwise");
      return;
    }
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    expect(there && st.st_size == 0 && (st.st_mode & 07777) == foreign.mode && st.st_uid == foreign.owner,
           "the foreign node table /dev/shm" + name + " was changed: " + std::to_string(st.st_size) + " bytes, mode " +
               mode + ", owner " + std::to_string(st.st_uid));
  });
  const int rc = suite.finish();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (table != "own" && rank == 0) shm_unlink(name.c_str());
  return rc;
}
