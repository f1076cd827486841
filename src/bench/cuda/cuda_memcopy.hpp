#pragma once
// The GPU's memory bandwidth: a device-to-device cudaMemcpyAsync between two buffers far larger
// than the L2, bracketed by its own CUDA event pair each time, the best of `repeats` copies
// reported (as nvbandwidth's device-local copy and BabelStream's Copy measure it: each byte is
// read from and written to HBM, so a copy of N bytes moves 2N).
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

#include "bench/result.hpp"

namespace napkin::bench::cuda {

MemoryMeasurement measure_device_copy(cudaStream_t stream, std::size_t buffer_bytes, int repeats,
                                      const std::function<bool()>& stop);

}  // namespace napkin::bench::cuda
