#pragma once
// What a matmul benchmark measured: plain data, units in the names. Rendered by
// report/bench_report.hpp; produced by bench/harness.hpp. Header-only on purpose so the
// report library needs no bench code.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "bench/shape.hpp"
#include "core/dtype.hpp"

namespace napkin::bench {

// Order statistics of per-iteration times.
struct TimingStats {
  double median_s = 0, min_s = 0, max_s = 0, mean_s = 0;
  long long count = 0;
};

// GPU state sampled while the timed iterations ran (NVML); absent where unavailable.
struct Telemetry {
  std::optional<double> sm_clock_mhz;   // median of samples
  std::optional<double> power_watts;    // max of samples
  std::optional<double> temperature_c;  // max of samples
};

struct CorrectnessCheck {
  bool ok = false;
  int samples = 0;           // entries of D compared with the reference
  double max_error = 0;      // max |d - ref| / sqrt(sum_k (a_mk b_kn)^2) over the samples
  double tolerance = 0;      // the dtype's bound on that error
};

// The peak FLOP/s that MFU divides by, and where it came from.
struct PeakInfo {
  std::optional<double> flops_per_s;       // none: MFU cannot be computed
  std::string source;                      // "spec h100-sxm (bf16 dense)", "--peak", "measured: ..."
  std::optional<std::string> hardware_key; // the spec used, if any
  std::optional<double> nominal_flops_per_s;  // CPU: cores x clock x FLOP/cycle, for comparison
  std::string nominal_source;
};

struct BenchResult {
  Shape shape;
  Dtype dtype = Dtype::fp32;
  std::string backend;    // "cpu", "cuda"
  std::string algorithm;  // what won: "cuBLASLt heuristic #1 of 4 (...)", "OpenBLAS sgemm"
  int warmup_iterations = 0;
  bool cache_flushed = true;
  TimingStats time;
  double flops = 0;                // per product: 2*M*N*K
  double flops_per_s_median = 0;   // flops / median time
  double flops_per_s_max = 0;      // flops / min time
  std::optional<double> mfu;       // flops_per_s_median / peak
  std::optional<double> mfu_max;   // flops_per_s_max / peak
  CorrectnessCheck check;
  Telemetry telemetry;
};

struct BenchRun {
  std::string backend;      // key
  std::string device;       // "NVIDIA H100 80GB HBM3 (compute capability 9.0, 79.19 GiB)"
  std::string device_name;  // what the driver or OS calls it: "NVIDIA H100 80GB HBM3"
  Dtype dtype = Dtype::fp32;
  PeakInfo peak;
  std::vector<BenchResult> results;
  std::optional<std::size_t> best;  // index of the highest median throughput
  std::vector<std::string> notes;   // said once, under the table
  bool interrupted = false;         // stopped early (Ctrl-C): the results are what was measured
};

}  // namespace napkin::bench
