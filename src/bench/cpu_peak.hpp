#pragma once
// The CPU's achievable FLOP/s, measured: no datasheet napkin can read gives it, and the
// clock the OS reports is often the base clock, not the boost clock the cores run at.
#include <optional>
#include <string>

#include "core/dtype.hpp"

namespace napkin::bench {

struct CpuInfo {
  std::string model_name;       // /proc/cpuinfo "model name"
  int threads = 1;              // hardware threads (std::thread::hardware_concurrency)
  std::optional<double> clock_hz;  // cpufreq max, else /proc/cpuinfo "cpu MHz"
  std::string isa;              // "AVX-512", "AVX2+FMA", "NEON", "scalar"
  double flops_per_cycle_fp32 = 2;  // per core, as the ISA and the vendor suggest
  std::string flops_per_cycle_basis;
  std::optional<double> last_level_cache_bytes;
};
CpuInfo cpu_info();

// Independent FMA chains (enough to cover FMA latency x throughput) in the widest vector
// ISA, on every hardware thread at once, `trials` times for `trial_s` each; the best trial.
// Only fp32 and fp64.
double measure_cpu_peak_flops(Dtype dtype, int trials = 4, double trial_s = 0.1);

// The same, keeping the slowest trial too: a shared or throttling CPU's peak moves between
// trials (153 → 219 GFLOP/s within minutes on a shared machine), and the spread says so.
struct CpuPeak {
  double best_flops_per_s = 0;
  double worst_flops_per_s = 0;
  int trials = 0;
};
CpuPeak measure_cpu_peak(Dtype dtype, int trials = 4, double trial_s = 0.1);

// Above this spread ((best − worst) / best) a measured peak is called unstable.
inline constexpr double unstable_peak_spread = 0.1;

}  // namespace napkin::bench
