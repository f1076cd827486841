// The CUDA module's one exported symbol (bench/cuda_module.hpp): napkin dlopens this module
// and calls napkin_cuda_module_v1() to get its backend. Everything else is hidden.
#include <cuda_runtime_api.h>

#include "bench/cuda_module.hpp"

namespace napkin::bench::cuda {
Backend* new_backend();  // cuda_backend.cpp
}

extern "C" __attribute__((visibility("default"))) const napkin::bench::CudaModuleV1* napkin_cuda_module_v1() {
  static const napkin::bench::CudaModuleV1 module = {napkin::bench::cuda_module_abi_version, NAPKIN_VERSION,
                                                     CUDART_VERSION, &napkin::bench::cuda::new_backend};
  return &module;
}
