// The analysis cache: one decoded layout per datatype handle, shared by all threads, made when
// a type first meets memory gddt serves (a host-only program analyses nothing), dropped when
// its handle is freed or committed anew. Decoding happens outside the lock; readers share it.
// Failed analyses are cached too, so a type gddt cannot express is decoded once, not on every
// call. A handle is freed only when the program gave back every reference it held: the one its
// constructor made and each one MPI_Type_get_contents handed out (MPICH returns the type's own
// handle there, so a program freeing that reference still holds a live, committed type).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include "core/counters.hpp"
#include "type/contents.hpp"
#include "type/datatype.hpp"

namespace gddt::type {

PlainNamedTable plain_named_table;

namespace {

struct Entry {
  Status status = GDDT_OK;
  LayoutPtr layout;
};

struct Cache {
  std::shared_mutex mutex;
  std::unordered_map<std::uint64_t, Entry> entries;
  std::unordered_set<std::uint64_t> freed;
  std::unordered_set<std::uint64_t> committed;
  std::unordered_map<std::uint64_t, unsigned long> extra_references;  // from get_contents
  std::atomic<unsigned long long> hits{0};
  std::atomic<unsigned long long> misses{0};
};

// Never destroyed: layouts may hold backend data (device memory) whose release must not run
// after the CUDA runtime has been torn down at exit. clear_cache() releases it in time.
Cache& cache() {
  static Cache* instance = new Cache;
  return *instance;
}

Entry analyse(MPI_Datatype datatype) {
  auto layout = std::make_shared<Layout>();
  Entry entry;
  counters::Stopwatch decoding(counters::Counter::kTypeDecodeNs);
  entry.status = decode(datatype, layout.get());
  if (!is_error(entry.status)) entry.layout = std::move(layout);
  return entry;
}

// With the lock held: drops the analysis of `key`, whose layout the caller releases after the
// lock (backend data may take a while to free).
LayoutPtr evict(Cache& c, std::uint64_t key) {
  LayoutPtr layout;
  auto it = c.entries.find(key);
  if (it == c.entries.end()) return layout;
  layout = std::move(it->second.layout);
  c.entries.erase(it);
  return layout;
}

bool is_named(MPI_Datatype datatype) { return combiner_of(datatype) == MPI_COMBINER_NAMED; }

bool is_plain(const Layout& layout) {
  return layout.shape == Shape::kContiguous && layout.pieces[0].offset == 0 && layout.lb == 0 &&
         layout.extent == layout.size;
}

}  // namespace

Status lookup(MPI_Datatype datatype, LayoutPtr* out) {
  if (datatype == MPI_DATATYPE_NULL) return GDDT_ERR_INVALID_TYPE;
  Cache& c = cache();
  const std::uint64_t key = key_of(datatype);
  {
    std::shared_lock<std::shared_mutex> lock(c.mutex);
    if (c.freed.count(key)) return GDDT_ERR_INVALID_TYPE;
    auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      c.hits.fetch_add(1, std::memory_order_relaxed);
      *out = it->second.layout;
      return it->second.status;
    }
  }
  c.misses.fetch_add(1, std::memory_order_relaxed);
  Entry entry = analyse(datatype);
  if (is_error(entry.status)) {
    GDDT_LOG(kInfo, "datatype not analysed (%s): MPI handles it", status_name(entry.status));
  }
  if (entry.layout && is_plain(*entry.layout) && is_named(datatype)) plain_named_table.insert(key, static_cast<std::uint64_t>(entry.layout->size));
  {
    std::unique_lock<std::shared_mutex> lock(c.mutex);
    // A free that raced with the decode wins: the analysis belongs to a dead type. An entry
    // inserted meanwhile by another lookup is kept.
    if (!c.freed.count(key)) c.entries.emplace(key, entry);
  }
  *out = entry.layout;
  return entry.status;
}

void on_commit(MPI_Datatype datatype) {
  if (datatype == MPI_DATATYPE_NULL) return;
  Cache& c = cache();
  const std::uint64_t key = key_of(datatype);
  LayoutPtr stale;  // an analysis of an earlier type with this handle, released after the lock
  std::unique_lock<std::shared_mutex> lock(c.mutex);
  stale = evict(c, key);
  c.freed.erase(key);
  c.committed.insert(key);
}

void on_made(MPI_Datatype datatype) {
  if (datatype == MPI_DATATYPE_NULL) return;
  Cache& c = cache();
  const std::uint64_t key = key_of(datatype);
  LayoutPtr stale;  // released after the lock
  std::unique_lock<std::shared_mutex> lock(c.mutex);
  stale = evict(c, key);
  c.freed.erase(key);
  c.committed.erase(key);
  c.extra_references.erase(key);
}

void on_reference(MPI_Datatype datatype) {
  if (datatype == MPI_DATATYPE_NULL) return;
  Cache& c = cache();
  std::unique_lock<std::shared_mutex> lock(c.mutex);
  ++c.extra_references[key_of(datatype)];
}

void on_free(MPI_Datatype datatype) {
  if (datatype == MPI_DATATYPE_NULL) return;
  Cache& c = cache();
  const std::uint64_t key = key_of(datatype);
  LayoutPtr evicted;  // released after the lock
  std::unique_lock<std::shared_mutex> lock(c.mutex);
  auto reference = c.extra_references.find(key);
  if (reference != c.extra_references.end()) {
    if (--reference->second == 0) c.extra_references.erase(reference);
    return;  // the type lives on, under the handle the program still holds
  }
  evicted = evict(c, key);
  c.committed.erase(key);
  c.freed.insert(key);
}

bool find_committed(MPI_Datatype datatype, Status* status, LayoutPtr* out) {
  Cache& c = cache();
  const std::uint64_t key = key_of(datatype);
  std::shared_lock<std::shared_mutex> lock(c.mutex);
  if (c.freed.count(key)) {
    *status = GDDT_ERR_INVALID_TYPE;
    return true;
  }
  if (!c.committed.count(key)) return false;
  auto it = c.entries.find(key);
  if (it == c.entries.end()) return false;
  c.hits.fetch_add(1, std::memory_order_relaxed);
  *status = it->second.status;
  *out = it->second.layout;
  return true;
}

bool is_freed(MPI_Datatype datatype) {
  Cache& c = cache();
  std::shared_lock<std::shared_mutex> lock(c.mutex);
  return c.freed.count(key_of(datatype)) != 0;
}

bool is_known_committed(MPI_Datatype datatype) {
  if (datatype == MPI_DATATYPE_NULL) return false;
  Cache& c = cache();
  const std::uint64_t key = key_of(datatype);
  {
    std::shared_lock<std::shared_mutex> lock(c.mutex);
    if (c.committed.count(key)) return true;
    if (c.freed.count(key)) return false;
  }
  return is_named(datatype);
}

void clear_cache() {
  Cache& c = cache();
  std::unordered_map<std::uint64_t, Entry> dropped;
  std::unique_lock<std::shared_mutex> lock(c.mutex);
  dropped.swap(c.entries);
  c.freed.clear();
  c.committed.clear();
  c.extra_references.clear();
  lock.unlock();
}

CacheStats cache_stats() {
  Cache& c = cache();
  CacheStats stats;
  stats.hits = c.hits.load(std::memory_order_relaxed);
  stats.misses = c.misses.load(std::memory_order_relaxed);
  std::shared_lock<std::shared_mutex> lock(c.mutex);
  stats.entries = c.entries.size();
  return stats;
}

}  // namespace gddt::type
