// Window synchronization (onesided_window.hpp). Each call does what MPI-4's separate model asks of
// it for the windows gddt keeps public copies of, around the library's own call, and completes
// the operations of this process whose results wait in stand-ins:
//   publish (private into public, before the library's call): MPI_Win_post, fence, unlock(_all), sync
//   absorb (public into private, after it): MPI_Win_wait (and a test that ends the epoch),
//     fence, lock(_all), sync
//   complete (stand-ins into the user's buffers, after it): fence, complete, unlock(_all),
//     flush(_local)(_all)
// The generated shims have already started every send gddt holds back (`| blocking` rows).
// Assertions skip what they rule out: MPI_MODE_NOSTORE the publish, MPI_MODE_NOPRECEDE the
// absorb, MPI_MODE_NOPUT the absorb that ends the epoch it opens.
#include <mpi.h>

#include "mpi/entry_points.hpp"
#include "mpi/errors.hpp"
#include "mpi/onesided_window.hpp"

namespace gddt::mpi::entry {
namespace {

using onesided::or_library;
using onesided::Window;

// The window's entry where gddt keeps one.
std::shared_ptr<Window> entry_of(MPI_Win win) { return onesided::find(win); }

int publish(Window& window, int assert) {
  if (!window.separate() || (assert & MPI_MODE_NOSTORE) != 0) return MPI_SUCCESS;
  return raise_on_window(window.handle(), window.publish());
}

int absorb(Window& window) {
  if (!window.separate()) return MPI_SUCCESS;
  return raise_on_window(window.handle(), window.absorb());
}

int complete(Window& window, int target) { return raise_on_window(window.handle(), window.complete(target)); }

// The first failure of a sequence of steps, each run only while the ones before succeeded.
template <typename... Steps>
int in_turn(Steps&&... steps) {
  int rc = MPI_SUCCESS;
  ((rc = rc == MPI_SUCCESS ? steps() : rc), ...);
  return rc;
}

// A call that completes operations on `target` (MPI_ANY_SOURCE: all), publishing first where it
// ends an access to this process's own window too; on a direct window, `direct`'s call.
template <typename Library, typename Direct>
int completing(MPI_Win win, int target, bool publishes, Library library, Direct direct) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (!window) return library();
  if (window->direct) return or_library(direct(*window->direct), library);
  return in_turn([&] { return publishes ? publish(*window, 0) : MPI_SUCCESS; }, library,
                 [&] { return complete(*window, target); });
}

// A call after which remote updates must show in this process's memory; on a direct window,
// `direct`'s call.
template <typename Library, typename Direct>
int absorbing(MPI_Win win, Library library, Direct direct) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (!window) return library();
  if (window->direct) return or_library(direct(*window->direct), library);
  return in_turn(library, [&] { return absorb(*window); });
}

}  // namespace

int Win_fence(int assert, MPI_Win win) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (!window) return PMPI_Win_fence(assert, win);
  if (window->direct) return window->direct->fence(assert);
  return in_turn([&] { return publish(*window, assert); }, [&] { return PMPI_Win_fence(assert, win); },
                 [&] { return complete(*window, MPI_ANY_SOURCE); },
                 [&] {
                   const bool no_put = window->take_no_put();
                   window->set_no_put((assert & MPI_MODE_NOPUT) != 0);
                   return no_put || (assert & MPI_MODE_NOPRECEDE) != 0 ? MPI_SUCCESS : absorb(*window);
                 });
}

int Win_post(MPI_Group group, int assert, MPI_Win win) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (!window) return PMPI_Win_post(group, assert, win);
  if (window->direct) return or_library(window->direct->post(group, assert), [&] { return PMPI_Win_post(group, assert, win); });
  window->set_no_put((assert & MPI_MODE_NOPUT) != 0);
  return in_turn([&] { return publish(*window, assert); }, [&] { return PMPI_Win_post(group, assert, win); });
}

int Win_start(MPI_Group group, int assert, MPI_Win win) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (window && window->direct)
    return or_library(window->direct->start(group, assert), [&] { return PMPI_Win_start(group, assert, win); });
  return PMPI_Win_start(group, assert, win);
}

int Win_complete(MPI_Win win) {
  return completing(win, MPI_ANY_SOURCE, false, [&] { return PMPI_Win_complete(win); },
                    [](onesided::Direct& direct) { return direct.complete(); });
}

int Win_wait(MPI_Win win) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (!window) return PMPI_Win_wait(win);
  if (window->direct) return or_library(window->direct->wait(), [&] { return PMPI_Win_wait(win); });
  return in_turn([&] { return PMPI_Win_wait(win); },
                 [&] { return window->take_no_put() ? MPI_SUCCESS : absorb(*window); });
}

int Win_test(MPI_Win win, int* flag) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (!window) return PMPI_Win_test(win, flag);
  if (window->direct) return or_library(window->direct->test(flag), [&] { return PMPI_Win_test(win, flag); });
  return in_turn([&] { return PMPI_Win_test(win, flag); },
                 [&] { return flag == nullptr || !*flag || window->take_no_put() ? MPI_SUCCESS : absorb(*window); });
}

int Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  return absorbing(win, [&] { return PMPI_Win_lock(lock_type, rank, assert, win); },
                   [&](onesided::Direct& direct) { return direct.lock(lock_type, rank, assert); });
}

int Win_lock_all(int assert, MPI_Win win) {
  return absorbing(win, [&] { return PMPI_Win_lock_all(assert, win); },
                   [&](onesided::Direct& direct) { return direct.lock_all(assert); });
}

int Win_unlock(int rank, MPI_Win win) {
  return completing(win, rank, true, [&] { return PMPI_Win_unlock(rank, win); },
                    [&](onesided::Direct& direct) { return direct.unlock(rank); });
}

int Win_unlock_all(MPI_Win win) {
  return completing(win, MPI_ANY_SOURCE, true, [&] { return PMPI_Win_unlock_all(win); },
                    [](onesided::Direct& direct) { return direct.unlock_all(); });
}

int Win_flush(int rank, MPI_Win win) {
  return completing(win, rank, false, [&] { return PMPI_Win_flush(rank, win); },
                    [&](onesided::Direct& direct) { return direct.flush(rank); });
}

int Win_flush_all(MPI_Win win) {
  return completing(win, MPI_ANY_SOURCE, false, [&] { return PMPI_Win_flush_all(win); },
                    [](onesided::Direct& direct) { return direct.flush(MPI_ANY_SOURCE); });
}

// Local completion suffices: a get's data is in its stand-in, a put's stand-in may go.
int Win_flush_local(int rank, MPI_Win win) {
  return completing(win, rank, false, [&] { return PMPI_Win_flush_local(rank, win); },
                    [&](onesided::Direct& direct) { return direct.flush(rank); });
}

int Win_flush_local_all(MPI_Win win) {
  return completing(win, MPI_ANY_SOURCE, false, [&] { return PMPI_Win_flush_local_all(win); },
                    [](onesided::Direct& direct) { return direct.flush(MPI_ANY_SOURCE); });
}

int Win_sync(MPI_Win win) {
  const std::shared_ptr<Window> window = entry_of(win);
  if (!window) return PMPI_Win_sync(win);
  if (window->direct) return window->direct->flush(MPI_PROC_NULL);
  return in_turn([&] { return publish(*window, 0); }, [&] { return PMPI_Win_sync(win); },
                 [&] { return absorb(*window); });
}

}  // namespace gddt::mpi::entry
