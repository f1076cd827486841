#include "core/calibration.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/training.hpp"

namespace napkin {

std::vector<GemmShape> distinct_shapes(const std::vector<Gemm>& gemms) {
  std::vector<GemmShape> out;
  for (const Gemm& g : gemms) {
    const GemmShape s{g.m, g.n, g.k, g.batch};
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

double largest_product_bytes(const std::vector<Gemm>& gemms, double bytes_per_value) {
  double most = 0;
  for (const Gemm& g : gemms) {
    const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
    most = std::max(most, (m * k + k * n + m * n) * static_cast<double>(g.batch) * bytes_per_value);
  }
  return most;
}

CalibrationResult combine_timings(const Model& m, const StepConfig& c, const std::vector<Gemm>& gemms,
                                  const std::vector<GemmShape>& shapes, const std::vector<double>& times_s,
                                  double peak_flops_per_s, double mfu_assumed) {
  if (shapes.size() != times_s.size()) throw Error("internal: one time per distinct shape expected", ExitCode::failure);
  if (!(peak_flops_per_s > 0 && std::isfinite(peak_flops_per_s))) throw Error("the device's peak FLOP/s must be positive");
  for (double t : times_s)
    if (!(t > 0 && std::isfinite(t))) throw Error("a timed product took no measurable time", ExitCode::failure);

  CalibrationResult r;
  r.tp = c.tp;
  r.tokens_per_step = c.micro_batch * c.seq;
  r.peak_flops_per_s = peak_flops_per_s;
  r.mfu_assumed = mfu_assumed;
  for (const Gemm& g : gemms) {
    const auto it = std::find(shapes.begin(), shapes.end(), GemmShape{g.m, g.n, g.k, g.batch});
    if (it == shapes.end()) throw Error("internal: a product's shape was not timed", ExitCode::failure);
    TimedGemm t;
    t.gemm = g;
    t.time_per_call_s = times_s[static_cast<std::size_t>(it - shapes.begin())];
    t.time_s = t.time_per_call_s * static_cast<double>(g.count) * g.useful_fraction;
    t.flops_per_s = g.flops / t.time_s;
    r.step_matmul_time_s += t.time_s;
    r.gemm_flops_per_step += g.flops;
    r.products.push_back(t);
  }
  if (!(r.step_matmul_time_s > 0)) throw Error("the step has no matrix products to time", ExitCode::failure);
  for (TimedGemm& t : r.products) t.share = t.time_s / r.step_matmul_time_s;

  r.gemm_flops_per_s = r.gemm_flops_per_step / r.step_matmul_time_s;
  r.tokens_per_s_per_gpu = static_cast<double>(r.tokens_per_step) / r.step_matmul_time_s / static_cast<double>(c.tp);
  r.model_flops_per_token =
      6 * count_params(m).active + attention_flops_per_token(m, static_cast<double>(c.seq), /*causal=*/true);
  r.mfu_measured = r.model_flops_per_token * r.tokens_per_s_per_gpu / peak_flops_per_s;
  r.gemm_utilization = r.gemm_flops_per_s / peak_flops_per_s;
  return r;
}

}  // namespace napkin
