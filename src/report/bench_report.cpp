#include "report/bench_report.hpp"

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

namespace napkin {
namespace {

using bench::BenchResult;
using bench::BenchRun;

// Significant digits, not decimals: a small MFU is "0.0248%", not "0.0%".
std::string opt_pct(const std::optional<double>& v) {
  if (!v) return "-";
  return (*v * 100 >= 1 ? fmt::format("{:.1f}", *v * 100) : format_sig(*v * 100, 3)) + "%";
}

template <typename T>
nlohmann::json opt_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string telemetry_text(const bench::Telemetry& t) {
  std::string out;
  if (t.sm_clock_mhz) out += fmt::format("SM {:.0f} MHz", *t.sm_clock_mhz);
  if (t.power_watts) out += fmt::format("{}{:.0f} W", out.empty() ? "" : ", ", *t.power_watts);
  if (t.temperature_c) out += fmt::format("{}{:.0f} C", out.empty() ? "" : ", ", *t.temperature_c);
  return out;
}

}  // namespace

std::string format_duration_short(double s) {
  if (s < 1e-3) return format_sig(s * 1e6, 4) + " us";
  if (s < 1) return format_sig(s * 1e3, 4) + " ms";
  return format_sig(s, 4) + " s";
}

std::string bench_text(const BenchRun& run, std::size_t max_width) {
  KeyValues kv;
  kv.max_width = max_width;
  kv.add("device", run.device, "(" + run.backend + ")");
  kv.add("dtype", std::string(dtype_name(run.dtype)));
  kv.add("peak", run.peak.flops_per_s ? format_si(*run.peak.flops_per_s, "FLOP/s") : "unknown", run.peak.source);
  if (run.peak.nominal_flops_per_s)
    kv.add("nominal peak", format_si(*run.peak.nominal_flops_per_s, "FLOP/s"), run.peak.nominal_source + "; not used");
  Table t;
  t.max_width = max_width;
  bool batched = false;
  for (const BenchResult& r : run.results) batched = batched || r.shape.batch > 1;
  t.header = {"M", "N", "K", "algorithm", "median", "min", "max", "FLOP/s median", "FLOP/s max", "MFU", "check"};
  t.align = {Align::right, Align::right, Align::right, Align::left, Align::right, Align::right, Align::right,
             Align::right, Align::right, Align::right, Align::right};
  // Too wide for the terminal: "FLOP/s median" is the figure (MFU its share of the peak); the
  // slowest and fastest run, and the fastest run's rate, go first.
  t.short_header = {"", "", "", "", "", "", "", "FLOP/s", "max FLOP/s", "", ""};
  t.drop_rank = {0, 0, 0, 0, 0, 3, 4, 0, 5, 0, 1};
  if (batched) {
    t.header.insert(t.header.begin() + 3, "batch"), t.align.insert(t.align.begin() + 3, Align::right);
    t.short_header.insert(t.short_header.begin() + 3, ""), t.drop_rank.insert(t.drop_rank.begin() + 3, 0);
  }
  bool any_telemetry = false;
  for (const BenchResult& r : run.results) {
    std::vector<std::string> row = {std::to_string(r.shape.m), std::to_string(r.shape.n), std::to_string(r.shape.k),
                                    r.algorithm, format_duration_short(r.time.median_s), format_duration_short(r.time.min_s),
                                    format_duration_short(r.time.max_s), format_si(r.flops_per_s_median, "FLOP/s"),
                                    format_si(r.flops_per_s_max, "FLOP/s"), opt_pct(r.mfu),
                                    r.check.max_error > 0 ? fmt::format("ok {:.0e}", r.check.max_error) : "ok exact"};
    if (batched) row.insert(row.begin() + 3, std::to_string(r.shape.batch));
    t.add(row);
    any_telemetry = any_telemetry || !telemetry_text(r.telemetry).empty();
  }
  std::string out = kv.render() + "\n" + t.render();
  std::string after;  // lines of prose: wrapped
  if (!run.results.empty())
    after += fmt::format("\n  {} timed products per shape (median), cache flushed between products: {}\n",
                       run.results.front().time.count, run.results.front().cache_flushed ? "yes" : "no (--no-flush)");
  if (any_telemetry)
    for (const BenchResult& r : run.results)
      if (auto tt = telemetry_text(r.telemetry); !tt.empty()) after += fmt::format("  during {}: {}\n", bench::shape_text(r.shape), tt);
  if (run.best && run.results.size() > 1) {
    const BenchResult& b = run.results[*run.best];
    after += fmt::format("  best: {} at {} ({} MFU)\n", bench::shape_text(b.shape), format_si(b.flops_per_s_median, "FLOP/s"),
                       opt_pct(b.mfu));
  }
  if (!run.peak.flops_per_s) after += "  MFU: " + run.peak.source + "\n";
  for (const auto& n : run.notes) after += "  note: " + n + "\n";
  if (run.interrupted) after += "  interrupted by Ctrl-C: these are the products timed before it\n";
  out += wrap_lines(after, max_width);
  return out;
}

nlohmann::json device_json(const std::string& backend, const std::string& name, const std::string& description) {
  return {{"backend", backend}, {"name", name}, {"description", description}};
}

nlohmann::json bench_json(const BenchRun& run) {
  nlohmann::json j;
  j["device"] = device_json(run.backend, run.device_name, run.device);
  // `hardware` is the spec's key (null when none matched), as in train, memory, plan and infer;
  // the peak beside it, top-level, as calibrate gives it.
  j["hardware"] = opt_json(run.peak.hardware_key);
  j["peak_flops_per_s"] = opt_json(run.peak.flops_per_s);
  j["peak_source"] = run.peak.source;
  j["nominal_peak_flops_per_s"] = opt_json(run.peak.nominal_flops_per_s);
  j["nominal_peak_source"] = run.peak.nominal_source;
  nlohmann::json results = nlohmann::json::array();
  for (const BenchResult& r : run.results) {
    nlohmann::json x = {{"m", r.shape.m}, {"n", r.shape.n}, {"k", r.shape.k}, {"batch", r.shape.batch},
                        {"dtype", std::string(dtype_name(r.dtype))},
                        {"backend", r.backend}, {"algorithm", r.algorithm}, {"iterations", r.time.count},
                        {"warmup_iterations", r.warmup_iterations}, {"cache_flushed", r.cache_flushed},
                        {"flops", r.flops}, {"time_s_median", r.time.median_s}, {"time_s_min", r.time.min_s},
                        {"time_s_max", r.time.max_s}, {"time_s_mean", r.time.mean_s},
                        {"flops_per_s_median", r.flops_per_s_median}, {"flops_per_s_max", r.flops_per_s_max},
                        {"mfu", opt_json(r.mfu)}, {"mfu_max", opt_json(r.mfu_max)},
                        {"check", {{"ok", r.check.ok}, {"samples", r.check.samples}, {"max_error", r.check.max_error},
                                   {"tolerance", r.check.tolerance}}},
                        {"sm_clock_mhz", opt_json(r.telemetry.sm_clock_mhz)}, {"power_watts", opt_json(r.telemetry.power_watts)},
                        {"temperature_c", opt_json(r.telemetry.temperature_c)}};
    results.push_back(std::move(x));
  }
  j["results"] = std::move(results);
  j["best"] = run.best ? nlohmann::json(*run.best) : nlohmann::json(nullptr);
  j["notes"] = run.notes;
  j["interrupted"] = run.interrupted;
  return j;
}

std::string bench_csv(const BenchRun& run) {
  std::string out =
      "m,n,k,batch,dtype,backend,algorithm,iterations,time_s_median,time_s_min,time_s_max,flops_per_s_median,flops_per_s_max,mfu\n";
  for (const BenchResult& r : run.results) {
    std::string algo = r.algorithm;
    for (auto& c : algo)
      if (c == ',' || c == '"') c = ';';  // keep the field one CSV cell without quoting rules
    out += fmt::format("{},{},{},{},{},{},{},{},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{}\n", r.shape.m, r.shape.n, r.shape.k,
                       r.shape.batch, dtype_name(r.dtype), r.backend, algo, r.time.count, r.time.median_s, r.time.min_s, r.time.max_s,
                       r.flops_per_s_median, r.flops_per_s_max, r.mfu ? fmt::format("{:.6g}", *r.mfu) : "");
  }
  return out;
}

}  // namespace napkin
