#include "bench/measure.hpp"

#include <algorithm>

#include "bench/backend.hpp"
#include "bench/harness.hpp"
#include "core/error.hpp"

namespace napkin::bench {

MeasuredMfu measure_mfu(const SpecRegistry& registry, Dtype dtype, std::optional<Hardware> hardware,
                        std::optional<long long> iterations, const RunControl& control) {
  auto backend = open_backend("auto");
  BenchConfig cfg;
  cfg.dtype = dtype;
  cfg.hardware = std::move(hardware);
  cfg.target_time_s = 0.5;
  cfg.iterations = iterations;
  MeasuredMfu out;
  const auto ds = backend->dtypes();
  if (std::find(ds.begin(), ds.end(), dtype) == ds.end()) {
    if (backend->key() != "cpu") throw Error("--mfu measured: " + backend->device_description() + " has no " + std::string(dtype_name(dtype)) + " matmul");
    // The CPU has no 16-bit GEMM in OpenBLAS: its fp32 MFU is the closest it can say.
    cfg.dtype = Dtype::fp32;
    out.note = "no CUDA device; the CPU has no " + std::string(dtype_name(dtype)) + " matmul, so fp32 was measured";
  }
  cfg.shapes = {backend->default_shape(cfg.dtype)};
  if (backend->key() == "cuda") cfg.warmup_s = 1.0;
  const BenchRun run = run_bench(*backend, registry, cfg, control);
  if (run.interrupted || run.results.empty())
    throw Error("interrupted by Ctrl-C: --mfu measured did not finish its bench", ExitCode::interrupted);
  const BenchResult& r = run.results.front();
  if (!r.mfu || !run.peak.flops_per_s) throw Error("--mfu measured: " + run.peak.source);
  out.mfu = std::min(*r.mfu, 1.0);
  out.flops_per_s = r.flops_per_s_median;
  out.peak_flops_per_s = *run.peak.flops_per_s;
  out.device = run.device + " (" + run.backend + ")";
  out.peak_source = run.peak.source;
  out.shape = r.shape;
  out.dtype = cfg.dtype;
  return out;
}

}  // namespace napkin::bench
