#include "pack/opencl/api.hpp"

#include <dlfcn.h>

#include "core/log.hpp"

namespace gddt::pack::opencl {
namespace {

// The ICD loader's versioned name: the unversioned one comes only with development packages.
constexpr const char* kLoader = "libOpenCL.so.1";

struct Loaded {
  Api api;
  bool usable = false;
  std::string reason;
};

Loaded load() {
  Loaded loaded;
  void* library = dlopen(kLoader, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    loaded.reason = std::string("cannot open ") + kLoader + (error != nullptr ? std::string(": ") + error : "");
    GDDT_LOG(kInfo, "OpenCL backend unusable: %s", loaded.reason.c_str());
    return loaded;
  }
#define GDDT_OPENCL_LOAD(name, result, parameters)                                 \
  loaded.api.name = reinterpret_cast<result(*) parameters>(dlsym(library, #name)); \
  if (loaded.api.name == nullptr) {                                                \
    loaded.reason = std::string(kLoader) + " lacks " #name;                        \
    GDDT_LOG(kInfo, "OpenCL backend unusable: %s", loaded.reason.c_str());         \
    return loaded;                                                                 \
  }
  GDDT_OPENCL_FUNCTIONS(GDDT_OPENCL_LOAD)
#undef GDDT_OPENCL_LOAD
  loaded.usable = true;
  return loaded;
}

const Loaded& loaded() {
  static const Loaded instance = load();
  return instance;
}

template <typename Info, typename Handle>
std::string info_string(Info info, Handle handle, cl_uint what) {
  std::size_t bytes = 0;
  if (info(handle, what, 0, nullptr, &bytes) != CL_SUCCESS || bytes == 0) return "?";
  std::string text(bytes, '\0');
  if (info(handle, what, bytes, text.data(), nullptr) != CL_SUCCESS) return "?";
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace

const Api* api() { return loaded().usable ? &loaded().api : nullptr; }

const std::string& unavailable_reason() { return loaded().reason; }

std::vector<PlatformInfo> platforms() {
  std::vector<PlatformInfo> result;
  const Api* cl = api();
  if (cl == nullptr) return result;
  cl_uint count = 0;
  if (cl->clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return result;
  std::vector<cl_platform_id> ids(count);
  if (cl->clGetPlatformIDs(count, ids.data(), nullptr) != CL_SUCCESS) return result;
  for (cl_platform_id id : ids) {
    PlatformInfo platform{info_string(cl->clGetPlatformInfo, id, CL_PLATFORM_NAME),
                          info_string(cl->clGetPlatformInfo, id, CL_PLATFORM_VENDOR),
                          info_string(cl->clGetPlatformInfo, id, CL_PLATFORM_VERSION),
                          {}};
    cl_uint devices = 0;
    if (cl->clGetDeviceIDs(id, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) == CL_SUCCESS && devices > 0) {
      std::vector<cl_device_id> device_ids(devices);
      if (cl->clGetDeviceIDs(id, CL_DEVICE_TYPE_ALL, devices, device_ids.data(), nullptr) == CL_SUCCESS) {
        for (cl_device_id device : device_ids) {
          cl_bool available = 0;
          cl->clGetDeviceInfo(device, CL_DEVICE_AVAILABLE, sizeof available, &available, nullptr);
          platform.devices.push_back({info_string(cl->clGetDeviceInfo, device, CL_DEVICE_NAME),
                                      info_string(cl->clGetDeviceInfo, device, CL_DEVICE_VERSION), available != 0});
        }
      }
    }
    result.push_back(std::move(platform));
  }
  return result;
}

}  // namespace gddt::pack::opencl
