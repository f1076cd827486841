#include "core/gemm_time.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace napkin {

double GemmTimeModel::curve_time_s(long long m, long long n, long long k) const {
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double flops = 2 * M * N * K;
  const double bytes = (M * K + K * N + M * N) * value_bytes;
  const double compute = flops / (peak_flops_per_s * gemm_peak_efficiency);
  const double memory = bytes / (memory_bandwidth_bytes_per_s * memory_bandwidth_efficiency);
  return std::max(compute, memory) + gemm_launch_s;
}

double GemmTimeModel::time_s(long long m, long long n, long long k) const {
  switch (kind) {
    case Kind::fraction:
      return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (peak_flops_per_s * fraction);
    case Kind::measured:
      for (const MeasuredGemm& g : measured)
        if (g.m == m && g.n == n && g.k == k) return g.time_s;
      return curve_time_s(m, n, k) * measured_over_curve;
    case Kind::curve:
      break;
  }
  return curve_time_s(m, n, k);
}

GemmTimeModel measured_gemm_model(GemmTimeModel base, std::vector<MeasuredGemm> measured, std::string source) {
  if (measured.empty()) throw Error("--gemm-efficiency: " + source + " has no timed products (run 'napkin calibrate' without --dry-run)");
  std::vector<double> ratios;
  for (const MeasuredGemm& g : measured) {
    if (!(g.time_s > 0) || !std::isfinite(g.time_s) || g.m < 1 || g.n < 1 || g.k < 1)
      throw Error("--gemm-efficiency: " + source + " has a product with a non-positive shape or time");
    ratios.push_back(g.time_s / base.curve_time_s(g.m, g.n, g.k));
  }
  std::sort(ratios.begin(), ratios.end());
  const std::size_t mid = ratios.size() / 2;
  base.measured_over_curve = ratios.size() % 2 ? ratios[mid] : (ratios[mid - 1] + ratios[mid]) / 2;
  base.kind = GemmTimeModel::Kind::measured;
  base.measured = std::move(measured);
  base.source = std::move(source);
  return base;
}

}  // namespace napkin
