// APPS_HD marks what runs on both sides: nvcc compiles the apps' kernel files where CUDA is
// built, the C++ compiler where it is not.
#pragma once

#ifdef __CUDACC__
#define APPS_HD __host__ __device__
#else
#define APPS_HD
#endif
