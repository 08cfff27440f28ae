// test_blocking_calls: the file calls.
#include <mpi.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "blocking_calls_env.hpp"
#include "mpi/entry_points.hpp"

namespace gddt_test::blocking_calls {
namespace {

// A file of every rank's 16 ints, opened collectively; `at` is the hold point.
struct File {
  MPI_File fh = MPI_FILE_NULL;
  explicit File(const Env& e) {
    MPI_File_open(MPI_COMM_WORLD, e.path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    std::vector<int> data(16, e.rank);
    MPI_File_write_at_all(fh, e.rank * 16 * static_cast<MPI_Offset>(sizeof(int)), data.data(), 16, MPI_INT,
                          MPI_STATUS_IGNORE);
    MPI_File_seek(fh, e.rank * 16 * static_cast<MPI_Offset>(sizeof(int)), MPI_SEEK_SET);
  }
  ~File() {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
  }
  MPI_Offset mine(const Env& e) const { return e.rank * 16 * static_cast<MPI_Offset>(sizeof(int)); }
};

}  // namespace

// The file calls: each opens the file, holds before the named call, and closes it.
void add_file_cases(std::map<std::string, Case>& c) {
  auto with_file = [](std::function<void(Env&, File&)> call) {
    return Case([call](Env& e) {
      File f(e);
      call(e, f);
    });
  };
  c["MPI_File_open"] = held([](Env& e) {
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, e.path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_close(&fh);
  });
  c["MPI_File_close"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_close(&f.fh);
  });
  c["MPI_File_set_size"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_size(f.fh, 4096);
  });
  c["MPI_File_preallocate"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_preallocate(f.fh, 4096);
  });
  c["MPI_File_set_view"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_view(f.fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  });
  c["MPI_File_set_info"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_info(f.fh, MPI_INFO_NULL);
  });
  c["MPI_File_sync"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_sync(f.fh);
  });
  c["MPI_File_set_atomicity"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_atomicity(f.fh, 0);
  });
  c["MPI_File_seek_shared"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_seek_shared(f.fh, 0, MPI_SEEK_SET);
  });
  // Reads and writes.
  auto io = [&](const std::string& name, std::function<void(Env&, File&, int*)> call) {
    c[name] = with_file([call](Env& e, File& f) {
      int buffer[16] = {};
      e.hold();
      call(e, f, buffer);
    });
  };
  io("MPI_File_read", [](Env&, File& f, int* b) { MPI_File_read(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write", [](Env&, File& f, int* b) { MPI_File_write(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_all", [](Env&, File& f, int* b) { MPI_File_read_all(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_all",
     [](Env&, File& f, int* b) { MPI_File_write_all(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at",
     [](Env& e, File& f, int* b) { MPI_File_read_at(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at",
     [](Env& e, File& f, int* b) { MPI_File_write_at(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at_all",
     [](Env& e, File& f, int* b) { MPI_File_read_at_all(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at_all",
     [](Env& e, File& f, int* b) { MPI_File_write_at_all(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_shared",
     [](Env&, File& f, int* b) { MPI_File_read_shared(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_shared",
     [](Env&, File& f, int* b) { MPI_File_write_shared(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_ordered",
     [](Env&, File& f, int* b) { MPI_File_read_ordered(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_ordered",
     [](Env&, File& f, int* b) { MPI_File_write_ordered(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  // Split collectives: the hold before the begin, or before the end.
  auto split = [&](const std::string& base, std::function<void(Env&, File&, int*)> begin,
                   std::function<void(File&, int*)> end) {
    c[base + "_begin"] = with_file([=](Env& e, File& f) {
      int buffer[16] = {};
      e.hold();
      begin(e, f, buffer);
      end(f, buffer);
    });
    c[base + "_end"] = with_file([=](Env& e, File& f) {
      int buffer[16] = {};
      begin(e, f, buffer);
      e.hold();
      end(f, buffer);
    });
  };
  split("MPI_File_read_all", [](Env&, File& f, int* b) { MPI_File_read_all_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_read_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_write_all", [](Env&, File& f, int* b) { MPI_File_write_all_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_write_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_read_at_all",
        [](Env& e, File& f, int* b) { MPI_File_read_at_all_begin(f.fh, f.mine(e), b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_read_at_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_write_at_all",
        [](Env& e, File& f, int* b) { MPI_File_write_at_all_begin(f.fh, f.mine(e), b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_write_at_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_read_ordered", [](Env&, File& f, int* b) { MPI_File_read_ordered_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_read_ordered_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_write_ordered", [](Env&, File& f, int* b) { MPI_File_write_ordered_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_write_ordered_end(f.fh, b, MPI_STATUS_IGNORE); });
#if GDDT_HAVE_MPI_File_read_c
  io("MPI_File_read_c", [](Env&, File& f, int* b) { MPI_File_read_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_c", [](Env&, File& f, int* b) { MPI_File_write_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_all_c",
     [](Env&, File& f, int* b) { MPI_File_read_all_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_all_c",
     [](Env&, File& f, int* b) { MPI_File_write_all_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at_c",
     [](Env& e, File& f, int* b) { MPI_File_read_at_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at_c",
     [](Env& e, File& f, int* b) { MPI_File_write_at_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at_all_c",
     [](Env& e, File& f, int* b) { MPI_File_read_at_all_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at_all_c",
     [](Env& e, File& f, int* b) { MPI_File_write_at_all_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_shared_c",
     [](Env&, File& f, int* b) { MPI_File_read_shared_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_shared_c",
     [](Env&, File& f, int* b) { MPI_File_write_shared_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_ordered_c",
     [](Env&, File& f, int* b) { MPI_File_read_ordered_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_ordered_c",
     [](Env&, File& f, int* b) { MPI_File_write_ordered_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_all_begin_c", [](Env&, File& f, int* b) {
    MPI_File_read_all_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_read_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_write_all_begin_c", [](Env&, File& f, int* b) {
    MPI_File_write_all_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_write_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_read_at_all_begin_c", [](Env& e, File& f, int* b) {
    MPI_File_read_at_all_begin_c(f.fh, f.mine(e), b, 16, MPI_INT);
    MPI_File_read_at_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_write_at_all_begin_c", [](Env& e, File& f, int* b) {
    MPI_File_write_at_all_begin_c(f.fh, f.mine(e), b, 16, MPI_INT);
    MPI_File_write_at_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_read_ordered_begin_c", [](Env&, File& f, int* b) {
    MPI_File_read_ordered_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_read_ordered_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_write_ordered_begin_c", [](Env&, File& f, int* b) {
    MPI_File_write_ordered_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_write_ordered_end(f.fh, b, MPI_STATUS_IGNORE);
  });
#endif
}

}  // namespace gddt_test::blocking_calls
