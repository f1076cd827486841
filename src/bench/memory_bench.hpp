#pragma once
// napkin bench --memory: the device's sustainable memory bandwidth and its memory-bandwidth
// utilisation (MBU = measured / the spec's bandwidth), the figure that bounds decoding (every
// weight and the whole KV cache are read once per output token). Methodology:
// docs/METHODOLOGY.md, "Memory-bandwidth benchmark".
#include <functional>
#include <optional>

#include "bench/backend.hpp"
#include "bench/result.hpp"
#include "core/hardware.hpp"
#include "spec/registry.hpp"

namespace napkin::bench {

// STREAM's NTIMES: every kernel 10 times, the best reported.
inline constexpr int default_memory_repeats = 10;
inline constexpr int max_memory_repeats = 100000;

struct MemoryBenchConfig {
  std::optional<std::size_t> array_bytes;        // --size; nullopt: the backend's default
  int repeats = default_memory_repeats;          // --iters
  std::optional<double> peak_bytes_per_s;        // --peak-bandwidth: overrides everything
  std::optional<Hardware> hardware;              // --hardware: its datasheet bandwidth
};

// Runs the backend's measurement, summarises each kernel (best and median), and divides the
// headline kernel's best by the peak: --peak-bandwidth; --hardware; the spec whose
// device_names lists the device; none (a CPU has no spec napkin can find: MBU needs one of
// the flags). The headline is the triad on a CPU (STREAM's usual figure), the copy on a GPU.
// Throws Error; never reports a bandwidth whose kernels' results were wrong.
MemoryBenchRun run_memory_bench(Backend& backend, const SpecRegistry& registry, const MemoryBenchConfig& cfg,
                                const std::function<bool()>& stop = {});

}  // namespace napkin::bench
