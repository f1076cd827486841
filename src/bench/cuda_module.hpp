#pragma once
// The interface between the napkin executable and its CUDA module (libnapkin_cuda.so).
//
// The CUDA backend links cuBLASLt and cudart, which cost every process ~100 ms and ~200 MB
// to load and stop the binary from starting where they are missing. So it lives in a
// shared module that napkin loads with dlopen only when a command needs a GPU
// (bench/cuda_loader.cpp). The module exports one C function, napkin_cuda_module_v1(),
// returning the table below. Both sides are built from this header by the same compiler
// in the same build; `abi_version` and `napkin_version` guard against a module left over
// from another build. Bump cuda_module_abi_version whenever this struct or the Backend
// interface (bench/backend.hpp) changes.
#include "bench/backend.hpp"

namespace napkin::bench {

inline constexpr int cuda_module_abi_version = 3;
inline constexpr const char* cuda_module_entry = "napkin_cuda_module_v1";
inline constexpr const char* cuda_module_file = "libnapkin_cuda.so";

extern "C" {
struct CudaModuleV1 {
  int abi_version;                // cuda_module_abi_version of the module's build
  const char* napkin_version;     // NAPKIN_VERSION of the module's build
  int cuda_runtime_version;       // CUDART_VERSION it was built with: 13000 = CUDA 13.0
  // A new backend the caller owns (delete it through the pointer). Never throws; the
  // backend's availability() says why it cannot run. Null only when out of memory.
  Backend* (*create_backend)();
};
using CudaModuleEntryFn = const CudaModuleV1* (*)();
}

}  // namespace napkin::bench
