// cuda_api_profile: where a process's host time goes inside CUDA, without nsys. Loaded by the
// driver through CUDA_INJECTION64_PATH (it calls InitializeInjection at the process's first
// CUDA call), it times every runtime and driver call through CUPTI's callbacks and prints, at
// exit, each call's count and host time by thread, so a stage budget can say which driver
// calls a message costs and on which thread. CUDA_API_PROFILE_GPU=1 adds the GPU's own time
// in kernels and copies (activity records), which costs a little on every launch.
// CUDA_API_PROFILE_TOP (default 20) rows a thread are printed.
#include <cupti.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Tally {
  std::uint64_t calls = 0, ns = 0, max_ns = 0;
};

// One per thread, never freed: threads may end before the process does, and the report at exit
// reads them all. The key is the domain and callback id, unique across both domains. The mutex
// is the thread's own but for the report, which may run while the thread still calls CUDA.
struct ThreadTallies {
  int ordinal = 0;
  std::mutex mutex;
  std::map<std::uint64_t, std::pair<const char*, Tally>> by_call;
};

// Never destroyed either: CUDA's teardown, after the report, may still call back.
struct Registry {
  std::mutex mutex;
  std::vector<ThreadTallies*> threads;
};
Registry& registry() {
  static auto* instance = new Registry;
  return *instance;
}
std::uint64_t started_ns = 0;

ThreadTallies& mine() {
  thread_local ThreadTallies* tallies = nullptr;
  if (tallies == nullptr) {
    tallies = new ThreadTallies;
    std::lock_guard<std::mutex> lock(registry().mutex);
    tallies->ordinal = static_cast<int>(registry().threads.size());
    registry().threads.push_back(tallies);
  }
  return *tallies;
}

void CUPTIAPI on_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite == CUPTI_API_ENTER) {
    *info->correlationData = now_ns();
    return;
  }
  // A call already under way when the subscription began has an exit without an entry.
  const std::uint64_t entered = *info->correlationData, left = now_ns();
  if (entered == 0 || entered > left) return;
  const std::uint64_t ns = left - entered;
  ThreadTallies& tallies = mine();
  std::lock_guard<std::mutex> lock(tallies.mutex);
  auto& row = tallies.by_call[(static_cast<std::uint64_t>(domain) << 32) | id];
  if (row.first == nullptr) row.first = info->functionName;
  row.second.calls++;
  row.second.ns += ns;
  row.second.max_ns = std::max(row.second.max_ns, ns);
}

// GPU time by kind of work, from activity records; never destroyed (buffers may come after the
// report).
struct GpuTime {
  std::mutex mutex;
  std::map<std::string, Tally> by_kind;
  std::uint64_t first_ns = UINT64_MAX, last_ns = 0;
};
GpuTime& gpu_time() {
  static auto* instance = new GpuTime;
  return *instance;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void note_gpu(GpuTime& g, const std::string& name, std::uint64_t start, std::uint64_t end) {
  Tally& t = g.by_kind[name];
  t.calls++;
  t.ns += end - start;
  t.max_ns = std::max(t.max_ns, end - start);
  g.first_ns = std::min(g.first_ns, start);
  g.last_ns = std::max(g.last_ns, end);
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  GpuTime& g = gpu_time();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      note_gpu(g, std::string("kernel ") + (k->name != nullptr ? k->name : "?"), k->start, k->end);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      note_gpu(g, "copy kind " + std::to_string(m->copyKind), m->start, m->end);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      note_gpu(g, "memset", m->start, m->end);
    }
  }
  std::free(buffer);
}

bool gpu_wanted() {
  const char* v = std::getenv("CUDA_API_PROFILE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

void report() {
  const std::uint64_t wall = now_ns() - started_ns;
  if (gpu_wanted()) cuptiActivityFlushAll(1);
  const char* top_text = std::getenv("CUDA_API_PROFILE_TOP");
  const std::size_t top = top_text != nullptr ? std::strtoul(top_text, nullptr, 10) : 20;
  std::lock_guard<std::mutex> lock(registry().mutex);
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "cuda_api_profile pid %d: %.3f s from the first CUDA call to exit\n",
                static_cast<int>(getpid()), wall / 1e9);
  out += line;
  for (ThreadTallies* t : registry().threads) {
    std::vector<std::pair<const char*, Tally>> rows;
    std::uint64_t runtime_ns = 0, driver_ns = 0;
    {
      std::lock_guard<std::mutex> thread_lock(t->mutex);
      for (const auto& [key, row] : t->by_call) {
        rows.push_back(row);
        ((key >> 32) == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_ns : driver_ns) += row.second.ns;
      }
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
    std::snprintf(line, sizeof line,
                  "  thread %d: %.3f ms in runtime calls, %.3f ms in driver calls (driver calls inside runtime "
                  "calls count in both)\n",
                  t->ordinal, runtime_ns / 1e6, driver_ns / 1e6);
    out += line;
    out += "    calls        total ms   mean us    max us  function\n";
    for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
      const Tally& r = rows[i].second;
      std::snprintf(line, sizeof line, "    %-11llu %9.3f %9.2f %9.1f  %s\n", static_cast<unsigned long long>(r.calls),
                    r.ns / 1e6, r.ns / 1e3 / r.calls, r.max_ns / 1e3, rows[i].first);
      out += line;
    }
  }
  if (gpu_wanted()) {
    GpuTime& g = gpu_time();
    std::lock_guard<std::mutex> gpu_lock(g.mutex);
    std::uint64_t busy = 0;
    for (const auto& [name, t] : g.by_kind) busy += t.ns;
    std::size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    std::snprintf(line, sizeof line,
                  "  GPU: %.3f ms of work (sum, overlaps count twice) in a %.3f ms span; %zu records dropped\n",
                  busy / 1e6, g.last_ns > g.first_ns ? (g.last_ns - g.first_ns) / 1e6 : 0.0, dropped);
    out += line;
    for (const auto& [name, t] : g.by_kind) {
      std::snprintf(line, sizeof line, "    %-11llu %9.3f %9.2f %9.1f  %.120s\n", static_cast<unsigned long long>(t.calls),
                    t.ns / 1e6, t.ns / 1e3 / t.calls, t.max_ns / 1e3, name.c_str());
      out += line;
    }
  }
  std::fputs(out.c_str(), stderr);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  started_ns = now_ns();
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, on_call, nullptr) != CUPTI_SUCCESS ||
      cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
      cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS) {
    std::fputs("cuda_api_profile: CUPTI refused the subscription (another profiler attached?)\n", stderr);
    return 0;
  }
  if (gpu_wanted() && (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
                        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
                        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
                        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS))
    std::fputs("cuda_api_profile: CUPTI refused activity records: the GPU's times will be missing\n", stderr);
  std::atexit(report);
  return 1;
}
