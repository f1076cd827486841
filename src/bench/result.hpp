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

// The most an explicit --iters may ask of one shape (bench, calibrate) or of bench --memory's
// passes, at the pace the first products or passes ran: 2^31 products of 1x1x1 are microseconds
// each, and 90 days in all.
inline constexpr double max_timed_s_per_shape = 3600;

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

// A memory-bandwidth measurement (napkin bench --memory): what a backend timed, per kernel.
// STREAM's convention counts the bytes a kernel's source reads and writes (copy c = a: 2
// arrays; triad b = a + s·c: 3), not the write-allocate reads a cache adds (McCalpin,
// "STREAM: Sustainable Memory Bandwidth", stream.c's bytes[] table); a device copy moves its
// buffer in and out of HBM (2 × its bytes), as nvbandwidth and BabelStream count it.
struct MemoryPass {
  std::string kernel;         // "copy", "triad", "device copy"
  double bytes_per_call = 0;  // bytes counted per timed call, by the convention above
  std::vector<double> times_s;
};

struct MemoryMeasurement {
  std::size_t array_bytes = 0;  // bytes of each array (buffer) the kernels stream through
  int arrays = 0;               // how many such arrays were allocated
  int threads = 0;              // CPU threads (0 on a GPU)
  std::string method;           // "STREAM-style copy and triad, 2 threads, fp64"
  bool check_ok = false;        // the kernels' results were read back and are right
  std::string check_detail;
  std::vector<MemoryPass> passes;
};

struct MemoryKernelResult {
  std::string kernel;
  double bytes_per_call = 0;
  TimingStats time;
  double bytes_per_s_best = 0;    // bytes / min time: STREAM reports the best of its runs
  double bytes_per_s_median = 0;  // bytes / median time
  std::optional<double> mbu;      // bytes_per_s_best / peak bandwidth
};

struct MemoryBenchRun {
  std::string backend, device, device_name;
  MemoryMeasurement measured;         // passes left out: they are summarised in `kernels`
  std::vector<MemoryKernelResult> kernels;
  std::size_t headline = 0;           // the kernel that `bytes_per_s` and `mbu` report
  double bytes_per_s = 0;             // kernels[headline].bytes_per_s_best
  std::optional<double> mbu;          // bytes_per_s / peak
  std::optional<double> peak_bytes_per_s;
  std::string peak_source;            // "spec h100-sxm (datasheet)", "--peak-bandwidth", or why none
  std::optional<std::string> hardware_key;
  std::vector<std::string> notes;
  bool interrupted = false;
};

}  // namespace napkin::bench
