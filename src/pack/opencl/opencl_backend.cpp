// The OpenCL backend: windows between an OpenCL buffer (the typed side, an memory::OpenclBuffer) and
// host memory (the packed side). A kernel specialised by the layout's shape and the widest
// word the window allows moves the bytes between the buffer and pinned staging
// (CL_MEM_ALLOC_HOST_PTR, pooled per context), which is then copied to or from the host
// buffer; a window larger than the staging chunk goes in chunks, each chunk's kernel overlapping
// the copy of the one before. Programs are built once per context and device, layout tables
// uploaded once per layout and context. Every call finishes before it returns, like the host
// backend's.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "core/log.hpp"
#include "pack/backend.hpp"
#include "pack/opencl/api.hpp"
#include "pack/opencl/kernels.hpp"

namespace gddt::pack {
namespace {

using namespace opencl;

Status status_of(cl_int error, const char* what) {
  if (error == CL_SUCCESS) return GDDT_OK;
  GDDT_LOG(kDebug, "OpenCL: %s failed with %d", what, static_cast<int>(error));
  switch (error) {
    case CL_INVALID_MEM_OBJECT:
    case CL_INVALID_COMMAND_QUEUE:
    case CL_INVALID_CONTEXT:
      return GDDT_ERR_BUFFER;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
      return GDDT_ERR_NO_MEMORY;
    default:
      return GDDT_ERR_INTERNAL;
  }
}

// The kernels of one context and device, built once. Kernel objects hold their arguments, so
// one launch at a time sets and enqueues them. A queue of gddt's own carries the copies of a
// pipelined window, so that they overlap the kernels on the caller's queue.
struct Program {
  cl_program program = nullptr;
  cl_kernel kernels[2][kKernelShapes][kWordWidths] = {};
  cl_command_queue copies = nullptr;
  std::mutex launch;
};

const char* const kShapeNames[kKernelShapes] = {"contiguous", "strided", "block_list"};

Status build_program(const Api& cl, cl_context context, cl_device_id device, Program* program) {
  cl_int error = CL_SUCCESS;
  const char* source = kProgramSource;
  program->program = cl.clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  GDDT_CHECK(status_of(error, "clCreateProgramWithSource"));
  error = cl.clBuildProgram(program->program, 1, &device, "", nullptr, nullptr);
  if (error != CL_SUCCESS) {
    std::string log(16384, '\0');
    cl.clGetProgramBuildInfo(program->program, device, CL_PROGRAM_BUILD_LOG, log.size() - 1, log.data(), nullptr);
    GDDT_LOG(kError, "OpenCL: building the pack kernels failed (%d): %s", static_cast<int>(error), log.c_str());
    return GDDT_ERR_INTERNAL;
  }
  program->copies = cl.clCreateCommandQueue(context, device, 0, &error);
  GDDT_CHECK(status_of(error, "clCreateCommandQueue"));
  for (int direction = 0; direction < 2; ++direction) {
    for (int shape = 0; shape < kKernelShapes; ++shape) {
      for (int width = 0; width < kWordWidths; ++width) {
        const std::string name =
            std::string(direction == 0 ? "pack_" : "unpack_") + kShapeNames[shape] + "_" + std::to_string(1 << width);
        program->kernels[direction][shape][width] = cl.clCreateKernel(program->program, name.c_str(), &error);
        GDDT_CHECK(status_of(error, "clCreateKernel"));
      }
    }
  }
  return GDDT_OK;
}

// Programs and staging pools per context (retained, so a released context's address is never
// taken for another while its entry lives).
struct ContextState {
  std::map<cl_device_id, std::unique_ptr<Program>> programs;
  std::multimap<std::size_t, cl_mem> free_staging;  // by size
};

std::mutex contexts_mutex;
std::map<cl_context, ContextState>& contexts() {
  static auto* states = new std::map<cl_context, ContextState>();  // outlives static destructors
  return *states;
}

Status program_for(const Api& cl, cl_context context, cl_device_id device, Program** program) {
  std::lock_guard<std::mutex> lock(contexts_mutex);
  auto found = contexts().find(context);
  if (found == contexts().end()) {
    GDDT_CHECK(status_of(cl.clRetainContext(context), "clRetainContext"));
    found = contexts().emplace(context, ContextState{}).first;
  }
  std::unique_ptr<Program>& entry = found->second.programs[device];
  if (!entry) {
    auto built = std::make_unique<Program>();
    GDDT_CHECK(build_program(cl, context, device, built.get()));
    entry = std::move(built);
  }
  *program = entry.get();
  return GDDT_OK;
}

// A pinned staging buffer of the context's pool, returned to it when the lease ends.
class StagingLease {
 public:
  StagingLease(const Api& cl, cl_context context) : cl_(cl), context_(context) {}
  ~StagingLease() {
    if (buffer_ == nullptr) return;
    std::lock_guard<std::mutex> lock(contexts_mutex);
    contexts()[context_].free_staging.emplace(size_, buffer_);
  }
  StagingLease(const StagingLease&) = delete;
  StagingLease& operator=(const StagingLease&) = delete;

  Status acquire(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(contexts_mutex);
      auto& pool = contexts()[context_].free_staging;
      auto found = pool.lower_bound(bytes);
      if (found != pool.end()) {
        size_ = found->first;
        buffer_ = found->second;
        pool.erase(found);
        return GDDT_OK;
      }
    }
    // Powers of two from 64 KiB, so windows of similar sizes reuse buffers.
    size_ = std::size_t{64} << 10;
    while (size_ < bytes) size_ *= 2;
    cl_int error = CL_SUCCESS;
    buffer_ = cl_.clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size_, nullptr, &error);
    if (error != CL_SUCCESS) buffer_ = nullptr;
    return status_of(error, "clCreateBuffer");
  }
  cl_mem buffer() const { return buffer_; }

 private:
  const Api& cl_;
  cl_context context_;
  cl_mem buffer_ = nullptr;
  std::size_t size_ = 0;
};

// A layout's table in each context it met, in the layout's backend slot.
struct LayoutTables {
  std::vector<std::pair<cl_context, cl_mem>> entries;
  LayoutTables() = default;
  LayoutTables(const LayoutTables&) = delete;
  LayoutTables& operator=(const LayoutTables&) = delete;
  ~LayoutTables() {
    if (const Api* cl = opencl::api()) {
      for (const auto& entry : entries) cl->clReleaseMemObject(entry.second);
    }
  }
};

Status layout_table_in(const Api& cl, const type::Layout& layout, cl_context context, cl_command_queue queue,
                       cl_mem* table) {
  type::BackendSlots::Slot& slot = layout.backend_slots[kOpenclSlot];
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (!slot.data) slot.data = std::make_shared<LayoutTables>();
  auto& tables = *static_cast<LayoutTables*>(slot.data.get());
  for (const auto& entry : tables.entries) {
    if (entry.first == context) {
      *table = entry.second;
      return GDDT_OK;
    }
  }
  const std::vector<std::int64_t> words = layout_table(layout);
  const std::size_t bytes = words.size() * sizeof(std::int64_t);
  cl_int error = CL_SUCCESS;
  cl_mem created = cl.clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
  GDDT_CHECK(status_of(error, "clCreateBuffer"));
  error = cl.clEnqueueWriteBuffer(queue, created, CL_TRUE, 0, bytes, words.data(), 0, nullptr, nullptr);
  if (error != CL_SUCCESS) {
    cl.clReleaseMemObject(created);
    return status_of(error, "clEnqueueWriteBuffer");
  }
  tables.entries.emplace_back(context, created);
  *table = created;
  return GDDT_OK;
}

KernelShape kernel_shape(type::Shape shape) {
  switch (shape) {
    case type::Shape::kContiguous:
      return KernelShape::kContiguous;
    case type::Shape::kStrided:
      return KernelShape::kStrided;
    default:
      return KernelShape::kBlockList;
  }
}

// Index of the widest word (1 << index bytes) dividing every offset the window's kernel uses.
int word_width_index(const Window& w, std::int64_t origin) {
  const std::uint64_t bits = static_cast<std::uint64_t>(w.layout->alignment) | static_cast<std::uint64_t>(w.offset) |
                             static_cast<std::uint64_t>(w.length) | static_cast<std::uint64_t>(origin) | 16;
  int index = 0;
  while (index + 1 < kWordWidths && (bits & ((std::uint64_t{2} << index) - 1)) == 0) ++index;
  return index;
}

// The buffer, its queue's context and device, checked: the queue belongs to the buffer's
// context and the elements' span lies inside the buffer.
struct Target {
  cl_mem buffer = nullptr;
  cl_command_queue queue = nullptr;
  cl_context context = nullptr;
  cl_device_id device = nullptr;
};

Status check_target(const Api& cl, const Window& w, const memory::OpenclBuffer& typed, Target* target) {
  if (typed.buffer == nullptr || typed.queue == nullptr) return GDDT_ERR_BUFFER;
  target->buffer = static_cast<cl_mem>(typed.buffer);
  target->queue = static_cast<cl_command_queue>(typed.queue);
  std::size_t size = 0;
  cl_context buffer_context = nullptr;
  GDDT_CHECK(
      status_of(cl.clGetMemObjectInfo(target->buffer, CL_MEM_SIZE, sizeof size, &size, nullptr), "clGetMemObjectInfo"));
  GDDT_CHECK(
      status_of(cl.clGetMemObjectInfo(target->buffer, CL_MEM_CONTEXT, sizeof buffer_context, &buffer_context, nullptr),
                "clGetMemObjectInfo"));
  GDDT_CHECK(status_of(
      cl.clGetCommandQueueInfo(target->queue, CL_QUEUE_CONTEXT, sizeof target->context, &target->context, nullptr),
      "clGetCommandQueueInfo"));
  GDDT_CHECK(status_of(
      cl.clGetCommandQueueInfo(target->queue, CL_QUEUE_DEVICE, sizeof target->device, &target->device, nullptr),
      "clGetCommandQueueInfo"));
  if (buffer_context != target->context) {
    GDDT_LOG(kDebug, "OpenCL: the command queue is not of the buffer's context");
    return GDDT_ERR_BUFFER;
  }
  const std::int64_t elements = std::max<std::int64_t>(w.count, 1);
  if (typed.offset + w.layout->span_lb(elements) < 0 ||
      typed.offset + w.layout->span_ub(elements) > static_cast<std::int64_t>(size)) {
    GDDT_LOG(kDebug, "OpenCL: the datatype's bytes [%lld, %lld) lie outside the buffer of %zu bytes",
             static_cast<long long>(typed.offset + w.layout->span_lb(elements)),
             static_cast<long long>(typed.offset + w.layout->span_ub(elements)), size);
    return GDDT_ERR_BUFFER;
  }
  return GDDT_OK;
}

// Work-items per launch: each loops over the window's words, so this only bounds parallelism.
constexpr std::int64_t kMostWorkItems = 1 << 18;
// A fixed work-group size: PoCL compiles a kernel anew for every work-group size it meets, and
// left to choose it picked one per window length (a cold run of the fuzzer took 5.5 minutes).
constexpr std::int64_t kWorkGroup = 256;

// Events of one pipelined window, released when it ends.
class Events {
 public:
  explicit Events(const Api& cl) : cl_(cl) {}
  ~Events() {
    for (cl_event event : events_)
      if (event != nullptr) cl_.clReleaseEvent(event);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  // The event of chunk `i`'s last step, and where to put the next one.
  cl_event& of(std::int64_t i) { return events_[static_cast<std::size_t>(i & 1)]; }
  void replace(std::int64_t i, cl_event event) {
    if (of(i) != nullptr) cl_.clReleaseEvent(of(i));
    of(i) = event;
  }
  Status wait_all() {
    for (cl_event event : events_)
      if (event != nullptr) GDDT_CHECK(status_of(cl_.clWaitForEvents(1, &event), "clWaitForEvents"));
    return GDDT_OK;
  }

 private:
  const Api& cl_;
  cl_event events_[2] = {};
};

// Enqueues the kernel that moves window `w` between the typed buffer and `staged` (whose byte 0 is
// the window's first packed byte) on the caller's queue, after `after` (null: at once).
Status enqueue_kernel(const Api& cl, Program& program, bool packing, const Window& w, const memory::OpenclBuffer& typed,
                      const Target& target, cl_mem table, cl_mem staged, cl_event after, cl_event* done) {
  const int width = word_width_index(w, typed.offset);
  const cl_long origin = typed.offset;
  const cl_long first = w.offset;
  const cl_long words = w.length >> width;
  const std::int64_t items = std::min<std::int64_t>(words, kMostWorkItems);
  const std::size_t global = static_cast<std::size_t>((items + kWorkGroup - 1) / kWorkGroup * kWorkGroup);
  const std::size_t local = static_cast<std::size_t>(kWorkGroup);
  std::lock_guard<std::mutex> lock(program.launch);
  cl_kernel kernel = program.kernels[packing ? 0 : 1][static_cast<int>(kernel_shape(w.layout->shape))][width];
  cl_mem buffer = target.buffer;
  cl_int error = cl.clSetKernelArg(kernel, 0, sizeof table, &table);
  if (error == CL_SUCCESS) error = cl.clSetKernelArg(kernel, 1, sizeof buffer, &buffer);
  if (error == CL_SUCCESS) error = cl.clSetKernelArg(kernel, 2, sizeof origin, &origin);
  if (error == CL_SUCCESS) error = cl.clSetKernelArg(kernel, 3, sizeof staged, &staged);
  if (error == CL_SUCCESS) error = cl.clSetKernelArg(kernel, 4, sizeof first, &first);
  if (error == CL_SUCCESS) error = cl.clSetKernelArg(kernel, 5, sizeof words, &words);
  GDDT_CHECK(status_of(error, "clSetKernelArg"));
  return status_of(cl.clEnqueueNDRangeKernel(target.queue, kernel, 1, nullptr, &global, &local, after ? 1 : 0,
                                             after ? &after : nullptr, done),
                   "clEnqueueNDRangeKernel");
}

// Bytes a pipelined window moves per chunk: the staging chunk, in whole 16-byte words.
std::int64_t pipeline_chunk() { return static_cast<std::int64_t>(config::staging_chunk() / 16 * 16); }

// A window of up to one chunk: one kernel through one staging buffer, then the copy, on the
// caller's queue. A larger one in chunks through two staging buffers: the kernel of a chunk on the
// caller's queue overlaps the copy of the one before on gddt's copy queue, each chunk waiting for
// the step before it and for the last use of its buffer.
template <bool kPack>
Status move(const Window& w, const memory::OpenclBuffer& typed, void* host, const void* host_source) {
  if (w.length == 0) return GDDT_OK;
  const Api* cl = opencl::api();
  if (cl == nullptr) return GDDT_ERR_NO_DEVICE;
  Target target;
  GDDT_CHECK(check_target(*cl, w, typed, &target));
  Program* program = nullptr;
  GDDT_CHECK(program_for(*cl, target.context, target.device, &program));
  cl_mem table = nullptr;
  GDDT_CHECK(layout_table_in(*cl, *w.layout, target.context, target.queue, &table));
  const std::int64_t chunk = std::min(pipeline_chunk(), w.length);
  const bool pipelined = chunk < w.length;
  StagingLease slots[2] = {StagingLease(*cl, target.context), StagingLease(*cl, target.context)};
  for (int slot = 0; slot < (pipelined ? 2 : 1); ++slot)
    GDDT_CHECK(slots[slot].acquire(static_cast<std::size_t>(chunk)));
  cl_command_queue copies = pipelined ? program->copies : target.queue;
  Events last(*cl);  // per buffer: the read of its chunk (pack) or the kernel (unpack)
  // A step that fails leaves earlier ones queued: they end before the buffers go back to the pool
  // and the call returns.
  struct Drain {
    const Api& cl;
    cl_command_queue queues[2];
    bool armed = true;
    ~Drain() {
      if (!armed) return;
      for (cl_command_queue queue : queues) cl.clFinish(queue);
    }
  } drain{*cl, {target.queue, copies}};
  for (std::int64_t i = 0, done = 0; done < w.length; ++i, done += chunk) {
    const std::int64_t bytes = std::min(chunk, w.length - done);
    const Window part{w.layout, w.count, w.offset + done, bytes};
    cl_mem staged = slots[i & 1].buffer();
    cl_event step = nullptr;
    if (kPack) {
      GDDT_CHECK(enqueue_kernel(*cl, *program, true, part, typed, target, table, staged, last.of(i), &step));
      cl_event read = nullptr;
      const cl_int error = cl->clEnqueueReadBuffer(copies, staged, 0, 0, static_cast<std::size_t>(bytes),
                                                   static_cast<char*>(host) + done, 1, &step, &read);
      cl->clReleaseEvent(step);
      GDDT_CHECK(status_of(error, "clEnqueueReadBuffer"));
      last.replace(i, read);
    } else {
      const cl_int error =
          cl->clEnqueueWriteBuffer(copies, staged, 0, 0, static_cast<std::size_t>(bytes),
                                   static_cast<const char*>(host_source) + done, last.of(i) ? 1 : 0,
                                   last.of(i) ? &last.of(i) : nullptr, &step);
      GDDT_CHECK(status_of(error, "clEnqueueWriteBuffer"));
      cl_event kernel = nullptr;
      const Status status = enqueue_kernel(*cl, *program, false, part, typed, target, table, staged, step, &kernel);
      cl->clReleaseEvent(step);
      GDDT_CHECK(status);
      last.replace(i, kernel);
    }
  }
  GDDT_CHECK(last.wait_all());
  drain.armed = false;
  counters::add(kPack ? counters::Counter::kOpenclPacks : counters::Counter::kOpenclUnpacks, 1);
  return GDDT_OK;
}

Status opencl_pack(const Window& w, const void* typed, void* packed, gpu::Stream) {
  return move<true>(w, *static_cast<const memory::OpenclBuffer*>(typed), packed, nullptr);
}

Status opencl_unpack(const Window& w, void* typed, const void* packed, gpu::Stream) {
  return move<false>(w, *static_cast<const memory::OpenclBuffer*>(typed), nullptr, packed);
}

}  // namespace

const Backend& opencl_backend() {
  static const Backend backend = [] {
    Backend b;
    b.name = "opencl";
    // The typed side is an OpenCL buffer, the packed side host memory, read or written through
    // pinned staging.
    b.typed_cost = {kUnreachable, kUnreachable, kUnreachable, kUnreachable, 1};
    b.packed_cost = {4, 4, kUnreachable, kUnreachable, kUnreachable};
    b.pack = opencl_pack;
    b.unpack = opencl_unpack;
    return b;
  }();
  return backend;
}

}  // namespace gddt::pack
