#include "bench/harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace napkin::bench {
namespace {

std::string dtype_list(const std::vector<Dtype>& ds) {
  std::string out;
  for (Dtype d : ds) out += (out.empty() ? "" : ", ") + std::string(dtype_name(d));
  return out.empty() ? "none" : out;
}

}  // namespace

void require_dtype(Backend& backend, Dtype dtype) {
  const auto ds = backend.dtypes();
  if (std::find(ds.begin(), ds.end(), dtype) != ds.end()) return;
  // The suggestion: fp32 where the backend has it (the CPU's answer to a 16-bit request), else its first.
  const bool has_fp32 = std::find(ds.begin(), ds.end(), Dtype::fp32) != ds.end();
  const std::string try_dtype = has_fp32 ? "fp32" : ds.empty() ? "" : std::string(dtype_name(ds.front()));
  throw Error("--dtype " + std::string(dtype_name(dtype)) + ": " + backend.device_description() + " has no " +
              std::string(dtype_name(dtype)) + " matmul in napkin's " + backend.key() + " backend (it has " + dtype_list(ds) + ")" +
              (try_dtype.empty() ? "" : "; try --dtype " + try_dtype));
}

namespace {

void validate(Backend& backend, const BenchConfig& cfg) {
  require_dtype(backend, cfg.dtype);
  if (cfg.iterations && (*cfg.iterations < 1 || *cfg.iterations > max_iterations))
    throw Error(fmt::format("--iters must be a whole number from 1 to {}", max_iterations));
  if (cfg.algos < 1) throw Error("--algos must be at least 1");
  if (cfg.warmup_s && !(*cfg.warmup_s >= 0 && *cfg.warmup_s <= 3600)) throw Error("--warmup must be between 0 and 3600 seconds");
  if (!(cfg.target_time_s > 0)) throw Error("the target time per shape must be positive");
  if (cfg.peak_flops_per_s && !(*cfg.peak_flops_per_s > 0 && std::isfinite(*cfg.peak_flops_per_s)))
    throw Error("--peak must be a positive FLOP/s figure such as 989.5T");
}

void check_times(const std::vector<double>& times, const Shape& s) {
  for (double t : times)
    if (!(t > 0) || !std::isfinite(t))
      throw Error("timing " + shape_text(s) + " gave a non-positive time (" + std::to_string(t) + " s); the timer failed",
                  ExitCode::failure);
}

// Per-shape counts: warm-up about 0.1 s (2..10 products), timed about target_time_s
// (5..1000 products) unless --iters fixed it, in chunks of about 0.25 s of wall time
// (1..1000 products, cache flushes included) so that progress moves and Ctrl-C is answered
// within a chunk. `probe_s` is one product; `wall_s` the host's time for it (or a chunk).
int warmup_count(double probe_s) { return std::clamp(static_cast<int>(std::ceil(0.1 / probe_s)), 2, 10); }
long long timed_count(double probe_s, const BenchConfig& cfg) {
  if (cfg.iterations) return *cfg.iterations;
  return std::clamp(static_cast<long long>(std::ceil(cfg.target_time_s / probe_s)), 5LL, 1000LL);
}
// An explicit --iters is honoured only when its products fit max_timed_s_per_shape at the pace
// measured so far: `each_s` a product's host time, launch and cache flush included. Judged on the
// first chunk (the probe is a cold call: 57 µs for a 1x1x1 that then takes 0.2 µs), and on the
// probe alone when that took long enough to be its own measure.
void check_timed_total(const BenchConfig& cfg, const Shape& s, double each_s) {
  if (!cfg.iterations) return;
  const double total_s = each_s * static_cast<double>(*cfg.iterations);
  if (total_s <= max_timed_s_per_shape) return;
  const auto most = static_cast<long long>(std::max(1.0, std::floor(max_timed_s_per_shape / each_s)));
  const std::string total = total_s < 2 * 86400 ? fmt::format("{:.3g} h", total_s / 3600) : fmt::format("{:.0f} days", total_s / 86400);
  throw Error(fmt::format("--iters {}: a product of {} {} takes {:.3g} s here{}, so {} would take {}; napkin times at most {:.0f} h "
                          "of products a shape: give --iters at most {}",
                          *cfg.iterations, shape_text(s), dtype_name(cfg.dtype), each_s, cfg.flush_cache ? " (cache flush included)" : "",
                          *cfg.iterations, total, max_timed_s_per_shape / 3600, most));
}
int chunk_count(double wall_s_per_product) {
  return std::clamp(static_cast<int>(std::ceil(0.25 / std::max(wall_s_per_product, 1e-9))), 1, 1000);
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One shape's telemetry from its chunks: the median of their SM clocks, the most power and heat.
Telemetry merge(const std::vector<Telemetry>& parts) {
  Telemetry t;
  std::vector<double> clocks;
  for (const Telemetry& p : parts) {
    if (p.sm_clock_mhz) clocks.push_back(*p.sm_clock_mhz);
    if (p.power_watts) t.power_watts = std::max(t.power_watts.value_or(0), *p.power_watts);
    if (p.temperature_c) t.temperature_c = std::max(t.temperature_c.value_or(0), *p.temperature_c);
  }
  if (!clocks.empty()) t.sm_clock_mhz = summarize_times(clocks).median_s;
  return t;
}

bool stopped(const RunControl& c) { return c.stop_requested && c.stop_requested(); }

}  // namespace

TimingStats summarize_times(std::vector<double> t) {
  if (t.empty()) throw Error("no timed iterations to summarize", ExitCode::failure);
  std::sort(t.begin(), t.end());
  TimingStats s;
  s.count = static_cast<long long>(t.size());
  const std::size_t n = t.size();
  s.median_s = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  s.min_s = t.front();
  s.max_s = t.back();
  double sum = 0;
  for (double x : t) sum += x;
  s.mean_s = sum / static_cast<double>(n);
  return s;
}

void TimeSamples::add(double t) {
  min_ = count_ ? std::min(min_, t) : t;
  max_ = count_ ? std::max(max_, t) : t;
  sum_ += t;
  ++count_;
  if (kept_.size() < keep_) {
    kept_.push_back(t);
    return;
  }
  // Algorithm R: the n-th value replaces a random kept one with probability keep / n.
  rng_ = rng_ * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
  const auto j = static_cast<long long>((rng_ >> 11) % static_cast<std::uint64_t>(count_));
  if (j < static_cast<long long>(keep_)) kept_[static_cast<std::size_t>(j)] = t;
}

TimingStats TimeSamples::stats() const {
  TimingStats s = summarize_times(kept_);
  s.count = count_;
  s.min_s = min_;
  s.max_s = max_;
  s.mean_s = sum_ / static_cast<double>(count_);
  return s;
}

std::optional<double> mfu(double achieved, std::optional<double> peak) {
  if (!peak || !(*peak > 0) || !std::isfinite(achieved)) return std::nullopt;
  return achieved / *peak;
}

PeakInfo resolve_peak(Backend& backend, const SpecRegistry& registry, const BenchConfig& cfg) {
  if (cfg.peak_flops_per_s) return {cfg.peak_flops_per_s, "--peak", std::nullopt, std::nullopt, {}};
  const Dtype pd = backend.peak_dtype(cfg.dtype);
  auto from_spec = [&](const Hardware& h, const std::string& how) {
    PeakInfo p;
    p.hardware_key = h.key;
    // The units the product runs on (fp64_tensor for DGEMM on an A100/H100), else its dtype.
    const Dtype used = h.dense_peak(pd) ? pd : cfg.dtype;
    const std::string dt(dtype_name(used));
    p.flops_per_s = h.dense_peak(used);
    p.source = p.flops_per_s ? "spec " + h.key + " (" + dt + " dense" + how + ")"
                             : "spec " + h.key + " lists no " + dt + " peak: MFU needs --peak";
    if (p.flops_per_s && used != cfg.dtype)
      p.source += "; cuBLAS runs " + std::string(dtype_name(cfg.dtype)) + " products on the " + dt + " units here";
    return p;
  };
  const std::string name = backend.device_name();
  if (cfg.peak_choice == BenchConfig::PeakChoice::measured) {
    if (auto measured = backend.measured_peak(cfg.dtype)) return *measured;
    throw Error("--peak measured: napkin's " + backend.key() + " backend measures no peak (a GPU's comes from its spec); give --peak spec or a "
                "FLOP/s figure");
  }
  if (cfg.hardware) return from_spec(*cfg.hardware, ", from --hardware");
  if (cfg.peak_choice == BenchConfig::PeakChoice::spec) {
    if (const Hardware* h = registry.hardware_for_device(name)) return from_spec(*h, ", detected from '" + name + "', --peak spec");
    // No spec for a CPU: its nominal figure, cores × clock × FLOP/cycle, fixed from run to run.
    if (auto measured = backend.measured_peak(cfg.dtype); measured && measured->nominal_flops_per_s) {
      PeakInfo p;
      p.flops_per_s = measured->nominal_flops_per_s;
      p.source = "--peak spec: nominal " + measured->nominal_source;
      return p;
    }
    throw Error("--peak spec: no hardware spec lists '" + name + "'; give --hardware NAME or --peak FLOPS");
  }
  if (auto measured = backend.measured_peak(cfg.dtype)) return *measured;
  if (const Hardware* h = registry.hardware_for_device(name)) return from_spec(*h, ", detected from '" + name + "'");
  PeakInfo none;
  none.source = "unknown device '" + name + "': MFU needs --hardware NAME or --peak FLOPS";
  return none;
}

BenchRun run_bench(Backend& backend, const SpecRegistry& registry, const BenchConfig& cfg, const RunControl& control) {
  validate(backend, cfg);
  const std::vector<Shape> shapes = cfg.shapes.empty() ? std::vector<Shape>{backend.default_shape(cfg.dtype)} : cfg.shapes;
  BenchRun run;
  run.backend = backend.key();
  run.device = backend.device_description();
  run.device_name = backend.device_name();
  run.dtype = cfg.dtype;
  const PrepareOptions opts{cfg.algos, cfg.flush_cache};
  auto report = [&](std::size_t i, long long done, long long total) {
    if (control.progress) control.progress({i, shapes.size(), shapes[i], done, total});
  };

  // Clocks ramp and settle in the first seconds of load; warm up for a fixed time, the
  // device never idle, before anything is timed (on the first shape's product).
  // Said before the operands are written: a batch of millions of small products takes seconds
  // to fill, and nothing may be silent that long.
  report(0, 0, 0);
  backend.prepare(shapes.front(), cfg.dtype, opts);
  backend.warm_up(cfg.warmup_s.value_or(backend.default_warmup_s()), [&] { return stopped(control); });
  run.peak = resolve_peak(backend, registry, cfg);  // after the warm-up: a measured peak sees the same clocks

  for (std::size_t i = 0; i < shapes.size() && !stopped(control); ++i) {
    const Shape& s = shapes[i];
    if (i > 0) {
      report(i, 0, 0);
      backend.prepare(s, cfg.dtype, opts);
    }
    auto t0 = Clock::now();
    const auto probe = backend.time_iterations(0, 1, cfg.flush_cache);
    const double probe_wall_s = seconds_since(t0);
    int chunk = chunk_count(probe_wall_s);
    check_times(probe, s);
    if (probe_wall_s >= 0.1) check_timed_total(cfg, s, std::max(probe.front(), probe_wall_s));
    BenchResult r;
    r.shape = s;
    r.dtype = cfg.dtype;
    r.backend = backend.key();
    r.algorithm = backend.algorithm();
    r.cache_flushed = cfg.flush_cache;
    r.warmup_iterations = warmup_count(probe.front());
    const long long total = timed_count(probe.front(), cfg);
    TimeSamples samples;
    std::vector<Telemetry> telemetry;
    report(i, 0, total);
    while (samples.count() < total) {
      const int n = static_cast<int>(std::min<long long>(chunk, total - samples.count()));
      const int warm = samples.count() == 0 ? r.warmup_iterations : 0;
      t0 = Clock::now();
      const auto times = backend.time_iterations(warm, n, cfg.flush_cache);
      const double each_s = seconds_since(t0) / (n + warm);
      chunk = chunk_count(each_s);
      check_times(times, s);
      if (samples.count() == 0) check_timed_total(cfg, s, each_s);
      for (double t : times) samples.add(t);
      telemetry.push_back(backend.telemetry());
      report(i, samples.count(), total);
      if (samples.count() < total && stopped(control)) break;
    }
    r.telemetry = merge(telemetry);
    r.check = backend.check_correctness();
    if (!r.check.ok)
      throw Error("wrong result: " + shape_text(s) + " " + std::string(dtype_name(cfg.dtype)) + " on " + run.device +
                      " differs from the reference by " + std::to_string(r.check.max_error) + " (tolerance " +
                      std::to_string(r.check.tolerance) + "); no throughput reported",
                  ExitCode::failure);
    r.time = samples.stats();
    if (samples.sampled())
      run.notes.push_back(fmt::format("{}: the median is of a uniform sample of {} of the {} products", shape_text(s),
                                      std::size_t(1) << 20, samples.count()));
    r.flops = matmul_flops(s);
    r.flops_per_s_median = r.flops / r.time.median_s;
    r.flops_per_s_max = r.flops / r.time.min_s;
    run.results.push_back(std::move(r));
  }
  run.interrupted = stopped(control);

  // A measured peak is a floor on what the machine can do, not a datasheet ceiling: if a
  // product beat it (the clock rose, a neighbour went quiet), measure again and, failing
  // that, take the best product as the peak, so MFU cannot exceed 1 from a low peak.
  double best_max = 0;
  for (const auto& r : run.results) best_max = std::max(best_max, r.flops_per_s_max);
  if (run.peak.flops_per_s && best_max > *run.peak.flops_per_s && !cfg.peak_flops_per_s && !cfg.hardware &&
      cfg.peak_choice != BenchConfig::PeakChoice::spec) {
    if (auto again = backend.measured_peak(cfg.dtype); again && again->flops_per_s) {
      if (*again->flops_per_s > *run.peak.flops_per_s) run.peak = *again;
      if (best_max > *run.peak.flops_per_s) {
        run.peak.flops_per_s = best_max;
        run.peak.source += "; raised to the fastest product observed";
      }
    }
  }
  if (run.peak.flops_per_s && best_max > *run.peak.flops_per_s)
    run.notes.push_back("a product ran faster than the peak (" + run.peak.source + "): check the peak");
  for (auto& r : run.results) {
    r.mfu = mfu(r.flops_per_s_median, run.peak.flops_per_s);
    r.mfu_max = mfu(r.flops_per_s_max, run.peak.flops_per_s);
  }
  for (std::size_t i = 0; i < run.results.size(); ++i)
    if (!run.best || run.results[i].flops_per_s_median > run.results[*run.best].flops_per_s_median) run.best = i;
  return run;
}

}  // namespace napkin::bench
