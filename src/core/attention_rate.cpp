#include "core/attention_rate.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace napkin {
namespace {

constexpr double hopper_dense_bf16_flops_per_s = 989.5e12;  // H100 SXM / H200 datasheet, dense

// cuDNN 9.19 on an H200 (see the header), TFLOP/s: 2k, 4k, 8k, 16k, 32k tokens.
constexpr std::array<double, 5> measured_lengths = {2048, 4096, 8192, 16384, 32768};
constexpr std::array<double, 5> causal_forward_tflops = {484, 591, 644, 673, 688};
constexpr std::array<double, 5> causal_backward_tflops = {370, 474, 541, 579, 581};
constexpr std::array<double, 5> unmasked_forward_tflops = {633, 671, 691, 702, 693};
constexpr std::array<double, 5> unmasked_backward_tflops = {504, 560, 594, 612, 572};

double d(long long v) { return static_cast<double>(v); }

double curve(const std::array<double, 5>& tflops, double length) {
  const auto frac = [&](size_t i) { return tflops[i] * 1e12 / hopper_dense_bf16_flops_per_s; };
  if (length >= measured_lengths.back()) return frac(measured_lengths.size() - 1);
  if (length < measured_lengths[0]) {
    // e(s) = e∞ / (1 + s₀/s) through the two shortest points: a fixed cost per diagonal tile.
    const double s1 = measured_lengths[0], s2 = measured_lengths[1], e1 = frac(0), e2 = frac(1);
    const double s0 = (e2 - e1) / (e1 / s1 - e2 / s2);
    const double e_inf = e1 * (1 + s0 / s1);
    return e_inf / (1 + s0 / std::max(length, 1.0));
  }
  size_t i = 1;
  while (measured_lengths[i] < length) ++i;
  const double t = std::log(length / measured_lengths[i - 1]) / std::log(measured_lengths[i] / measured_lengths[i - 1]);
  return frac(i - 1) + t * (frac(i) - frac(i - 1));
}

}  // namespace

double hopper_fused_attention_efficiency(bool backward, bool causal, double length) {
  if (causal) return curve(backward ? causal_backward_tflops : causal_forward_tflops, length);
  return curve(backward ? unmasked_backward_tflops : unmasked_forward_tflops, length);
}

double FlashRate::efficiency(bool backward, bool causal, double length) const {
  if (curve == FlashCurve::hopper_fused) return hopper_fused_attention_efficiency(backward, causal, length);
  return flat_efficiency;
}

FlashRate flash_rate_for(AttentionKernel k, std::string_view gpu_generation) {
  if (gpu_generation != "h100") return {FlashCurve::flat, flash_attention_efficiency};
  if (k == AttentionKernel::fa2) return {FlashCurve::flat, flash_attention2_hopper_efficiency};
  return {FlashCurve::hopper_fused, flash_attention_efficiency};
}

double flash_attention_s(const FlashRate& rate, bool backward, double fwd_flops, double rate_flops_per_s, double seq, long long cp) {
  const double flops = (backward ? flash_backward_over_forward : 1.0) * fwd_flops;
  const double local = seq / d(cp);
  const double diagonal = flops / d(cp) / (rate_flops_per_s * rate.efficiency(backward, true, local));
  if (cp <= 1) return diagonal;
  // The other steps: s/cp queries against s/(2cp) keys (or half the queries against all), unmasked;
  // priced at the length of the square with the same number of tiles.
  const double off_length = local / std::sqrt(2.0);
  return diagonal + flops * (d(cp) - 1) / d(cp) / (rate_flops_per_s * rate.efficiency(backward, false, off_length));
}

}  // namespace napkin
