// The device API's operations with staging and a completion of their own (stream-ordered
// messages, gddt_device_own.h) against the host proxy, host threads playing the kernels.
#include "own_staging_cases.hpp"

#include <algorithm>

#include "gddt/gddt_device_own.h"

namespace device_api_test {

// Packed bytes in staging of the caller's, with a completion of its own (stream-ordered
// operations): the proxy hands them to MPI as MPI_PACKED, so a plain MPI_Recv of the datatype
// gets a kernel's message and a kernel's receive gets a host rank's typed send.
void own_staging(const gddt_device_comm_t &comm, const TypeCase &c) {
  if (nranks < 2 || rank > 1) return;
  const int count = 3;
  const int64_t bytes = static_cast<int64_t>(count) * type_size(c.type);
  const long long before = counter("device.own_staging");
  std::vector<unsigned char> buf = buffer_for(c.type, count, rank == 0 ? 31 : -1);
  std::vector<unsigned char> staging(static_cast<std::size_t>(bytes), 0xEE);
  const gddt_device_layout_t &layout = *c.device.layout;
  gddt_device_completion_t completion{};
  if (rank == 0) {
    on_device([&] {
      bool gave_up = false;
      gddt::device::move_window(layout, buf.data(), staging.data(), bytes, true, 0, 1);
      CHECK_RC(gddt::device::start_packed(kThread, false, staging.data(), bytes, 1, 41, comm, &completion, &completion),
               MPI_SUCCESS);
      CHECK_RC(gddt::device::wait_packed(kThread, comm, &completion, nullptr, &gave_up), MPI_SUCCESS);
    });
    std::vector<unsigned char> out = buffer_for(c.type, count, 32);
    MPI_Send(out.data(), count, c.type, 1, 43, MPI_COMM_WORLD);
  } else {
    MPI_Recv(buf.data(), count, c.type, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(buf == expected_for(c.type, count, 31));
    std::fill(buf.begin(), buf.end(), 0xEE);
    on_device([&] {
      gddt_device_status_t st{};
      bool gave_up = false;
      CHECK_RC(gddt::device::start_packed(kThread, true, staging.data(), bytes, 0, 43, comm, &completion, &completion),
               MPI_SUCCESS);
      CHECK_RC(gddt::device::wait_packed(kThread, comm, &completion, &st, &gave_up), MPI_SUCCESS);
      CHECK(st.bytes == bytes && st.source == 0 && st.tag == 43 && !gave_up);
      gddt::device::move_window(layout, buf.data(), staging.data(), st.bytes, false, 0, 1);
    });
    CHECK(buf == expected_for(c.type, count, 32));
  }
  CHECK(counter("device.own_staging") == before + 1);
}

// More operations of their own than the ring has slots, every receive posted before any send
// and all waited for last: their tickets are freed when the proxy takes them, so none waits for
// a slot that only a later wait would free (ring operations would).
void own_staging_beyond_ring(const gddt_device_comm_t &comm, const TypeCase &c) {
  if (nranks < 2 || rank > 1) return;
  const int n = static_cast<int>(comm.ring.nslots) * 2 + 3;
  const int64_t bytes = type_size(c.type);
  std::vector<std::vector<unsigned char>> staging(n, std::vector<unsigned char>(static_cast<std::size_t>(bytes)));
  std::vector<gddt_device_completion_t> completions(n);
  for (int i = 0; i < n; ++i)
    std::fill(staging[i].begin(), staging[i].end(), static_cast<unsigned char>(rank == 0 ? i : 0xEE));
  on_device([&] {
    const bool receive = rank == 1;
    for (int i = 0; i < n; ++i)
      CHECK_RC(gddt::device::start_packed(kThread, receive, staging[i].data(), bytes, 1 - rank, 500 + i, comm,
                                          &completions[i], &completions[i]),
               MPI_SUCCESS);
    for (int i = 0; i < n; ++i) {
      bool gave_up = false;
      CHECK_RC(gddt::device::wait_packed(kThread, comm, &completions[i], nullptr, &gave_up), MPI_SUCCESS);
    }
  });
  bool right = true;
  for (int i = 0; i < n; ++i)
    for (unsigned char b : staging[i]) right = right && b == static_cast<unsigned char>(i);
  CHECK(right);
}

// A receive into too small a staging is truncated, with the error class and nothing written.
void own_staging_truncated(const TypeCase &c) {
  if (nranks < 2) return;
  MPI_Comm returning;
  MPI_Comm_dup(MPI_COMM_WORLD, &returning);
  MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // MPICH's MPI_Test: see truncation()
  gddt_device_comm_t comm;
  CHECK_RC(gddt_device_comm_create(returning, &comm), MPI_SUCCESS);
  const int64_t bytes = 3 * static_cast<int64_t>(type_size(c.type));
  std::vector<unsigned char> staging(static_cast<std::size_t>(bytes), 0x5A);
  gddt_device_completion_t completion{};
  if (rank <= 1)
    on_device([&] {
      gddt_device_status_t st{};
      bool gave_up = false;
      const bool receive = rank == 1;
      CHECK_RC(gddt::device::start_packed(kThread, receive, staging.data(), receive ? bytes - 1 : bytes, 1 - rank, 44,
                                          comm, &completion, &completion),
               MPI_SUCCESS);
      CHECK_RC(gddt::device::wait_packed(kThread, comm, &completion, &st, &gave_up),
               receive ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
      if (receive) CHECK(st.bytes == 0 && staging[bytes - 1] == 0x5A);
    });
  CHECK_RC(gddt_device_comm_free(&comm), MPI_SUCCESS);
  MPI_Comm_free(&returning);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

}  // namespace device_api_test
