#pragma once
// The timing harness: backend-independent. Warms the device up for a fixed time, then for
// each shape: prepare, warm-up iterations, timed iterations in chunks (so progress shows and
// Ctrl-C stops a long run between chunks), statistics, correctness check, FLOP/s and MFU.
// Methodology: docs/METHODOLOGY.md, section "Matmul benchmark".
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/result.hpp"
#include "core/hardware.hpp"
#include "spec/registry.hpp"

namespace napkin::bench {

inline constexpr long long max_iterations = 2147483647;  // --iters: napkin's count rule (INT_MAX)

struct BenchConfig {
  Dtype dtype = Dtype::fp32;
  std::vector<Shape> shapes;           // empty: the backend's default shape
  std::optional<long long> iterations; // timed per shape; nullopt: about target_time_s worth
  double target_time_s = 1.0;          // used when iterations is unset (5..1000 iterations)
  std::optional<double> warmup_s;      // before the first shape; nullopt: backend default
  bool flush_cache = true;
  int algos = 4;
  std::optional<double> peak_flops_per_s;  // --peak VALUE: overrides everything
  // --peak measured: the backend's own measurement (the CPU's FMA microkernel), an error where
  // it has none; --peak spec: the spec's dense peak (--hardware or detected; the CPU's nominal
  // cores × clock × FLOP/cycle), never a measurement; automatic: resolve_peak's order.
  enum class PeakChoice { automatic, measured, spec };
  PeakChoice peak_choice = PeakChoice::automatic;
  std::optional<Hardware> hardware;        // --hardware: its dense peak for the dtype
};

// Where a run is, reported after the warm-up and after each chunk of timed products.
struct BenchProgress {
  std::size_t shape = 0, shapes = 0;  // the shape being timed (0-based) of how many
  Shape current;
  long long done = 0, total = 0;      // its timed products so far, of how many
};

// How a caller watches and stops a run: `progress` is called as above; `stop_requested` is
// polled between chunks (and during the warm-up). A stopped run returns what it measured,
// with `interrupted` set; a shape stopped before its first timed product is left out.
struct RunControl {
  std::function<void(const BenchProgress&)> progress;
  std::function<bool()> stop_requested;
};

// Median (mean of the two middle values for an even count), min, max, mean. Throws Error
// for an empty list.
TimingStats summarize_times(std::vector<double> times_s);

// Per-product times of any count in bounded memory: every time up to `keep`, then a uniform
// random sample of `keep` of them (Vitter's algorithm R) for the median; count, min, max and
// mean stay exact.
class TimeSamples {
 public:
  explicit TimeSamples(std::size_t keep = std::size_t(1) << 20) : keep_(keep) {}
  void add(double t_s);
  long long count() const { return count_; }
  bool sampled() const { return count_ > static_cast<long long>(keep_); }
  TimingStats stats() const;  // throws Error when empty

 private:
  std::size_t keep_;
  std::vector<double> kept_;
  long long count_ = 0;
  double min_ = 0, max_ = 0, sum_ = 0;
  std::uint64_t rng_ = 0x853c49e6748fea9bull;
};

// achieved / peak, nullopt when there is no usable peak.
std::optional<double> mfu(double achieved_flops_per_s, std::optional<double> peak_flops_per_s);

// Throws Error when `backend` has no `dtype` matmul, listing what it has and suggesting one
// (fp32 on the CPU). bench and calibrate refuse a dtype asked for by name the same way.
void require_dtype(Backend& backend, Dtype dtype);

// Where MFU's denominator comes from, in order: --peak; --hardware; a peak the backend
// measures itself (CPU); the spec whose device_names lists the device's name; none. The
// spec's peak is for backend.peak_dtype(dtype) where it lists one.
PeakInfo resolve_peak(Backend& backend, const SpecRegistry& registry, const BenchConfig& cfg);

// Validates cfg (dtype supported, iterations >= 1, ...), runs everything, fills MFU and the
// best shape. Throws Error; never reports a throughput for a product that failed its check.
BenchRun run_bench(Backend& backend, const SpecRegistry& registry, const BenchConfig& cfg,
                   const RunControl& control = {});

}  // namespace napkin::bench
