#pragma once
// The CPU's sustainable memory bandwidth, measured the way STREAM measures it (McCalpin,
// stream.c): fp64 arrays each far larger than the last-level cache, every hardware thread
// streaming its own contiguous slice (first touched by that thread, so its pages sit on its
// NUMA node), each kernel timed `repeats` times and the best run reported. Two kernels:
// copy (c = a, 16 bytes per element) and triad (b = a + 3·c, 24 bytes per element).
#include <cstddef>
#include <functional>

#include "bench/result.hpp"

namespace napkin::bench {

MemoryMeasurement measure_cpu_stream(std::size_t array_bytes, int threads, int repeats, const std::function<bool()>& stop);

}  // namespace napkin::bench
