#include "calibrate/calibrate.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "bench/harness.hpp"
#include "core/error.hpp"

namespace napkin {
namespace {

// The CPU backend multiplies in fp32/fp64 only; a 16-bit request is timed in fp32 (what a
// CPU would run it as), and said so.
Dtype dtype_to_time(bench::Backend& backend, Dtype wanted, std::vector<std::string>& notes) {
  const auto ds = backend.dtypes();
  if (std::find(ds.begin(), ds.end(), wanted) != ds.end()) return wanted;
  if (backend.key() == "cpu" && std::find(ds.begin(), ds.end(), Dtype::fp32) != ds.end()) {
    notes.push_back(fmt::format("The CPU backend has no {} matmul; the products were timed in fp32.", dtype_name(wanted)));
    return Dtype::fp32;
  }
  return wanted;  // the harness rejects it with the list of what the device has
}

std::string bytes_text(double b) { return fmt::format("{:.3g} GB", b / 1e9); }

void check_fits(const Model& m, const CalibrateOptions& o, const std::vector<Gemm>& gemms, Dtype dtype,
                std::optional<double> memory_bytes) {
  if (!memory_bytes) return;
  const double bytes = dtype_bytes(dtype);
  const double need = largest_product_bytes(gemms, bytes);
  if (need <= *memory_bytes) return;
  const auto it = std::max_element(gemms.begin(), gemms.end(), [&](const Gemm& a, const Gemm& b) {
    return largest_product_bytes({a}, bytes) < largest_product_bytes({b}, bytes);
  });
  throw Error(fmt::format("{} at micro-batch {} x seq {} needs {} to time its largest product ({}, {}x{}x{}), more than the "
                          "device's {}; lower --micro-batch or --seq, or split the layer with --tp",
                          m.key, o.step.micro_batch, o.step.seq, bytes_text(need), it->name, it->m, it->n, it->k,
                          bytes_text(*memory_bytes)));
}

}  // namespace

std::optional<double> device_memory_bytes(bench::Backend& backend, const SpecRegistry& registry,
                                          const std::optional<std::string>& hardware_key) {
  if (backend.key() == "cpu") {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) return static_cast<double>(pages) * static_cast<double>(page);
    return std::nullopt;
  }
  if (hardware_key) return registry.hardware(*hardware_key).memory_bytes;  // datasheet, not free memory
  return std::nullopt;
}

Calibration calibrate(const Model& model, const CalibrateOptions& o, bench::Backend& backend, const SpecRegistry& registry) {
  Calibration c;
  c.gemms = step_gemms(model, o.step);
  c.dtype_timed = dtype_to_time(backend, o.dtype, c.notes);
  c.device = backend.device_description();
  c.device_name = backend.device_name();
  c.backend = backend.key();

  bench::BenchConfig cfg;
  cfg.dtype = c.dtype_timed;
  cfg.iterations = o.iterations;
  cfg.target_time_s = o.target_time_s;
  cfg.warmup_s = o.warmup_s;
  cfg.hardware = o.hardware;
  const auto shapes = distinct_shapes(c.gemms);
  for (const GemmShape& s : shapes) cfg.shapes.push_back({s.m, s.n, s.k, s.batch});

  // Before anything is allocated: does the largest product fit?
  std::optional<std::string> spec_key;
  if (o.hardware) spec_key = o.hardware->key;
  else if (const Hardware* h = registry.hardware_for_device(backend.device_name())) spec_key = h->key;
  check_fits(model, o, c.gemms, c.dtype_timed, device_memory_bytes(backend, registry, spec_key));

  const bench::BenchRun run = bench::run_bench(backend, registry, cfg, o.control);
  c.shapes = shapes;
  if (run.interrupted) {
    c.interrupted = true;
    c.timed = run.results;
    c.peak_source = run.peak.source;
    return c;
  }
  if (!run.peak.flops_per_s)
    throw Error("no dense peak known for " + c.device + ": " + run.peak.source + "; give --hardware NAME");
  c.peak_source = run.peak.source;
  std::vector<double> times;
  for (const auto& r : run.results) times.push_back(r.time.median_s);
  c.result = combine_timings(model, o.step, c.gemms, shapes, times, *run.peak.flops_per_s, o.mfu_assumed);
  for (const auto& n : run.notes) c.notes.push_back(n);
  return c;
}

}  // namespace napkin
