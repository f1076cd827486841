// A module that claims another ABI version: napkin must refuse it before calling into it.
#include "bench/cuda_module.hpp"

extern "C" __attribute__((visibility("default"))) const napkin::bench::CudaModuleV1* napkin_cuda_module_v1() {
  static const napkin::bench::CudaModuleV1 module = {999, "0.0.0-other", 12080, nullptr};
  return &module;
}
