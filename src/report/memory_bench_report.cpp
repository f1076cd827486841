#include "report/memory_bench_report.hpp"

#include <fmt/format.h>

#include "report/bench_report.hpp"
#include "report/format.hpp"
#include "report/table.hpp"

namespace napkin {
namespace {

using bench::MemoryBenchRun;
using bench::MemoryKernelResult;

std::string pct(const std::optional<double>& v) { return v ? format_sig(*v * 100, 3) + "%" : "-"; }

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

std::string memory_bench_text(const MemoryBenchRun& run, std::size_t max_width) {
  KeyValues kv;
  kv.max_width = max_width;
  kv.add("device", run.device, "(" + run.backend + ")");
  kv.add("method", run.measured.method);
  kv.add("arrays", fmt::format("{} × {}", run.measured.arrays, format_si(double(run.measured.array_bytes), "B")),
         fmt::format("({} bytes each)", run.measured.array_bytes));
  kv.add("peak", run.peak_bytes_per_s ? format_si(*run.peak_bytes_per_s, "B/s") : "unknown", run.peak_source);
  Table t;  // the slowest run's time is in --json and --csv: the table fits 80 columns without it
  t.max_width = max_width;
  t.header = {"kernel", "bytes/call", "best", "median", "best B/s", "median B/s", "MBU"};
  t.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
  for (const MemoryKernelResult& k : run.kernels)
    t.add({k.kernel, format_si(k.bytes_per_call, "B"), format_duration_short(k.time.min_s), format_duration_short(k.time.median_s),
           format_si(k.bytes_per_s_best, "B/s"), format_si(k.bytes_per_s_median, "B/s"), pct(k.mbu)});
  std::string out = kv.render() + "\n" + t.render();
  if (!run.kernels.empty()) {
    const MemoryKernelResult& h = run.kernels[run.headline];
    out += fmt::format("\n  memory bandwidth: {} ({}, best of {}), MBU {}\n", format_si(run.bytes_per_s, "B/s"), h.kernel,
                       h.time.count, run.mbu ? pct(run.mbu) : "unknown (no peak: see above)");
    out += h.kernel == "device copy"
               ? "  bytes counted as nvbandwidth counts a device copy: each byte read and written (2 × the buffer)\n"
               : "  bytes counted as STREAM counts them: what each kernel reads and writes, no write-allocate\n";
  }
  for (const auto& n : run.notes) out += "  note: " + n + "\n";
  if (run.interrupted) out += "  interrupted by Ctrl-C: these are the runs timed before it\n";
  return out;
}

nlohmann::json memory_bench_json(const MemoryBenchRun& run) {
  nlohmann::json j;
  j["device"] = device_json(run.backend, run.device_name, run.device);
  // `hardware` is the spec's key (null when none matched), as in every other command's JSON.
  j["hardware"] = run.hardware_key ? nlohmann::json(*run.hardware_key) : nlohmann::json(nullptr);
  j["peak_bytes_per_s"] = opt(run.peak_bytes_per_s);
  j["peak_source"] = run.peak_source;
  j["method"] = run.measured.method;
  j["array_bytes"] = run.measured.array_bytes;
  j["arrays"] = run.measured.arrays;
  j["threads"] = run.measured.threads;
  j["bytes_per_s"] = run.kernels.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.bytes_per_s);
  j["mbu"] = opt(run.mbu);
  nlohmann::json kernels = nlohmann::json::array();
  for (const MemoryKernelResult& k : run.kernels)
    kernels.push_back({{"kernel", k.kernel}, {"bytes_per_call", static_cast<long long>(k.bytes_per_call)},
                       {"iterations", k.time.count}, {"time_s_min", k.time.min_s}, {"time_s_median", k.time.median_s},
                       {"time_s_max", k.time.max_s}, {"bytes_per_s", k.bytes_per_s_best},
                       {"bytes_per_s_median", k.bytes_per_s_median}, {"mbu", opt(k.mbu)}});
  j["kernels"] = std::move(kernels);
  j["check"] = {{"ok", run.measured.check_ok}, {"detail", run.measured.check_detail}};
  j["notes"] = run.notes;
  j["interrupted"] = run.interrupted;
  return j;
}

std::string memory_bench_csv(const MemoryBenchRun& run) {
  std::string out = "kernel,array_bytes,bytes_per_call,iterations,time_s_min,time_s_median,time_s_max,bytes_per_s,bytes_per_s_median,mbu\n";
  for (const MemoryKernelResult& k : run.kernels)
    out += fmt::format("{},{},{:.0f},{},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{}\n", k.kernel, run.measured.array_bytes,
                       k.bytes_per_call, k.time.count, k.time.min_s, k.time.median_s, k.time.max_s, k.bytes_per_s_best,
                       k.bytes_per_s_median, k.mbu ? fmt::format("{:.6g}", *k.mbu) : "");
  return out;
}

}  // namespace napkin
