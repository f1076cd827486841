#include "bench/memory_bench.hpp"

#include <cmath>
#include <string>

#include "bench/harness.hpp"
#include "core/error.hpp"

namespace napkin::bench {
namespace {

std::string mib(double bytes) {
  const double m = bytes / 1048576.0;
  return m == std::floor(m) ? std::to_string(static_cast<long long>(m)) + " MiB" : std::to_string(m) + " MiB";
}

struct Peak {
  std::optional<double> bytes_per_s;
  std::string source;
  std::optional<std::string> hardware_key;
};

Peak resolve_bandwidth(Backend& backend, const SpecRegistry& registry, const MemoryBenchConfig& cfg) {
  if (cfg.peak_bytes_per_s) return {cfg.peak_bytes_per_s, "--peak-bandwidth", std::nullopt};
  auto from_spec = [](const Hardware& h, const std::string& how) {
    Peak p{std::nullopt, "", h.key};
    if (h.memory_bandwidth_bytes_per_s > 0) {
      p.bytes_per_s = h.memory_bandwidth_bytes_per_s;
      p.source = "spec " + h.key + " (datasheet" + how + ")";
    } else {
      p.source = "spec " + h.key + " lists no memory bandwidth: MBU needs --peak-bandwidth";
    }
    return p;
  };
  if (cfg.hardware) return from_spec(*cfg.hardware, ", from --hardware");
  const std::string name = backend.device_name();
  if (const Hardware* h = registry.hardware_for_device(name)) return from_spec(*h, ", detected from '" + name + "'");
  return {std::nullopt,
          "no spec for '" + name + "': MBU needs --hardware NAME or --peak-bandwidth (e.g. 3.35TB/s)", std::nullopt};
}

}  // namespace

MemoryBenchRun run_memory_bench(Backend& backend, const SpecRegistry& registry, const MemoryBenchConfig& cfg,
                                const std::function<bool()>& stop) {
  if (cfg.repeats < 1 || cfg.repeats > max_memory_repeats)
    throw Error("--iters must be between 1 and " + std::to_string(max_memory_repeats) + " for --memory");
  const std::size_t bytes = cfg.array_bytes.value_or(backend.default_memory_array_bytes());
  MemoryBenchRun run;
  run.backend = backend.key();
  run.device = backend.device_description();
  run.device_name = backend.device_name();
  run.measured = backend.measure_memory(bytes, cfg.repeats, stop);
  if (const auto llc = backend.last_level_cache_bytes(); llc && double(run.measured.array_bytes) < 4 * *llc)
    run.notes.push_back("each array (" + mib(double(run.measured.array_bytes)) + ") is less than 4 times the " +
                        mib(*llc) + " last-level cache (STREAM's rule): part of what was timed is the cache, not memory");
  if (!run.measured.check_ok && !run.measured.passes.empty())
    throw Error("--memory: the kernels' results are wrong (" + run.measured.check_detail + "); no bandwidth reported",
                ExitCode::failure);
  const Peak peak = resolve_bandwidth(backend, registry, cfg);
  run.peak_bytes_per_s = peak.bytes_per_s;
  run.peak_source = peak.source;
  run.hardware_key = peak.hardware_key;
  for (MemoryPass& p : run.measured.passes) {
    for (double t : p.times_s)
      if (!(t > 0) || !std::isfinite(t))
        throw Error("timing the " + p.kernel + " kernel gave a non-positive time; the timer failed", ExitCode::failure);
    MemoryKernelResult k;
    k.kernel = p.kernel;
    k.bytes_per_call = p.bytes_per_call;
    k.time = summarize_times(p.times_s);
    k.bytes_per_s_best = p.bytes_per_call / k.time.min_s;
    k.bytes_per_s_median = p.bytes_per_call / k.time.median_s;
    if (peak.bytes_per_s) k.mbu = k.bytes_per_s_best / *peak.bytes_per_s;
    if (k.kernel == "triad" || k.kernel == "device copy") run.headline = run.kernels.size();
    run.kernels.push_back(std::move(k));
    p.times_s.clear();
  }
  run.interrupted = stop && stop();
  if (!run.kernels.empty()) {
    run.bytes_per_s = run.kernels[run.headline].bytes_per_s_best;
    run.mbu = run.kernels[run.headline].mbu;
    if (run.mbu && *run.mbu > 1.05)
      run.notes.push_back("measured above the peak bandwidth: the arrays fit a cache, or the peak given is too low");
  }
  return run;
}

}  // namespace napkin::bench
