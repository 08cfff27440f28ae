// The OpenCL door: the ICD loader opened at run time (dlopen of libOpenCL.so.1), so one gddt
// build runs with or without an OpenCL runtime, and nothing of OpenCL is needed to build it.
// The types and constants below are the few of the Khronos API the backend uses, with the
// values the specification fixes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gddt::pack::opencl {

using cl_int = std::int32_t;
using cl_uint = std::uint32_t;
using cl_long = std::int64_t;
using cl_ulong = std::uint64_t;
using cl_bool = cl_uint;
using cl_bitfield = cl_ulong;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

constexpr cl_int CL_SUCCESS = 0;
constexpr cl_int CL_DEVICE_NOT_FOUND = -1;
constexpr cl_int CL_MEM_OBJECT_ALLOCATION_FAILURE = -4;
constexpr cl_int CL_OUT_OF_RESOURCES = -5;
constexpr cl_int CL_OUT_OF_HOST_MEMORY = -6;
constexpr cl_int CL_INVALID_CONTEXT = -34;
constexpr cl_int CL_INVALID_COMMAND_QUEUE = -36;
constexpr cl_int CL_INVALID_MEM_OBJECT = -38;
constexpr cl_bool CL_TRUE = 1;
constexpr cl_uint CL_PLATFORM_VERSION = 0x0901;
constexpr cl_uint CL_PLATFORM_NAME = 0x0902;
constexpr cl_uint CL_PLATFORM_VENDOR = 0x0903;
constexpr cl_bitfield CL_DEVICE_TYPE_ALL = 0xFFFFFFFF;
constexpr cl_uint CL_DEVICE_AVAILABLE = 0x1027;
constexpr cl_uint CL_DEVICE_NAME = 0x102B;
constexpr cl_uint CL_DEVICE_VERSION = 0x102F;
constexpr cl_uint CL_QUEUE_CONTEXT = 0x1090;
constexpr cl_uint CL_QUEUE_DEVICE = 0x1091;
constexpr cl_bitfield CL_MEM_READ_WRITE = 1 << 0;
constexpr cl_bitfield CL_MEM_ALLOC_HOST_PTR = 1 << 4;
constexpr cl_uint CL_MEM_SIZE = 0x1102;
constexpr cl_uint CL_MEM_CONTEXT = 0x1106;
constexpr cl_uint CL_PROGRAM_BUILD_LOG = 0x1183;

// X(name, return type, parameter list): every entry point the backend calls, loaded by name.
#define GDDT_OPENCL_FUNCTIONS(X)                                                                                     \
  X(clGetPlatformIDs, cl_int, (cl_uint, cl_platform_id*, cl_uint*))                                                  \
  X(clGetPlatformInfo, cl_int, (cl_platform_id, cl_uint, std::size_t, void*, std::size_t*))                          \
  X(clGetDeviceIDs, cl_int, (cl_platform_id, cl_bitfield, cl_uint, cl_device_id*, cl_uint*))                         \
  X(clGetDeviceInfo, cl_int, (cl_device_id, cl_uint, std::size_t, void*, std::size_t*))                              \
  X(clGetCommandQueueInfo, cl_int, (cl_command_queue, cl_uint, std::size_t, void*, std::size_t*))                    \
  X(clGetMemObjectInfo, cl_int, (cl_mem, cl_uint, std::size_t, void*, std::size_t*))                                 \
  X(clRetainContext, cl_int, (cl_context))                                                                           \
  X(clCreateBuffer, cl_mem, (cl_context, cl_bitfield, std::size_t, void*, cl_int*))                                  \
  X(clReleaseMemObject, cl_int, (cl_mem))                                                                            \
  X(clCreateProgramWithSource, cl_program, (cl_context, cl_uint, const char**, const std::size_t*, cl_int*))         \
  X(clBuildProgram, cl_int,                                                                                          \
    (cl_program, cl_uint, const cl_device_id*, const char*, void (*)(cl_program, void*), void*))                     \
  X(clGetProgramBuildInfo, cl_int, (cl_program, cl_device_id, cl_uint, std::size_t, void*, std::size_t*))            \
  X(clReleaseProgram, cl_int, (cl_program))                                                                          \
  X(clCreateKernel, cl_kernel, (cl_program, const char*, cl_int*))                                                   \
  X(clSetKernelArg, cl_int, (cl_kernel, cl_uint, std::size_t, const void*))                                          \
  X(clEnqueueNDRangeKernel, cl_int,                                                                                  \
    (cl_command_queue, cl_kernel, cl_uint, const std::size_t*, const std::size_t*, const std::size_t*, cl_uint,      \
     const cl_event*, cl_event*))                                                                                    \
  X(clEnqueueReadBuffer, cl_int,                                                                                     \
    (cl_command_queue, cl_mem, cl_bool, std::size_t, std::size_t, void*, cl_uint, const cl_event*, cl_event*))       \
  X(clEnqueueWriteBuffer, cl_int,                                                                                    \
    (cl_command_queue, cl_mem, cl_bool, std::size_t, std::size_t, const void*, cl_uint, const cl_event*, cl_event*)) \
  X(clFinish, cl_int, (cl_command_queue))                                                                            \
  X(clCreateCommandQueue, cl_command_queue, (cl_context, cl_device_id, cl_bitfield, cl_int*))                        \
  X(clWaitForEvents, cl_int, (cl_uint, const cl_event*))                                                             \
  X(clReleaseEvent, cl_int, (cl_event))

struct Api {
#define GDDT_OPENCL_FIELD(name, result, parameters) result(*name) parameters = nullptr;
  GDDT_OPENCL_FUNCTIONS(GDDT_OPENCL_FIELD)
#undef GDDT_OPENCL_FIELD
};

// The loaded API, or null where no ICD loader could be opened or it lacks an entry point
// (asked once; the reason is logged at info level).
const Api* api();

// Why api() is null ("" when it is not), for gddt-info.
const std::string& unavailable_reason();

// What gddt-info prints: every platform with its devices.
struct DeviceInfo {
  std::string name, version;
  bool available = false;
};
struct PlatformInfo {
  std::string name, vendor, version;
  std::vector<DeviceInfo> devices;
};
std::vector<PlatformInfo> platforms();

}  // namespace gddt::pack::opencl
