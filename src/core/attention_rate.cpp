#include "core/attention_rate.hpp"

#include <algorithm>
#include <span>
#include <cmath>

namespace napkin {
namespace {

constexpr double hopper_dense_bf16_flops_per_s = 989.5e12;  // H100 SXM / H200 datasheet, dense

// A kernel measured at a few call lengths: TFLOP/s causal and unmasked, forward and backward.
struct MeasuredCurve {
  std::span<const double> lengths;
  std::span<const double> causal_forward, causal_backward, unmasked_forward, unmasked_backward;
};

// cuDNN 9.19 on an H200 (see the header): 2k, 4k, 8k, 16k, 32k tokens.
constexpr double cudnn_lengths[] = {2048, 4096, 8192, 16384, 32768};
constexpr double cudnn_causal_forward[] = {484, 591, 644, 673, 688};
constexpr double cudnn_causal_backward[] = {370, 474, 541, 579, 581};
constexpr double cudnn_unmasked_forward[] = {633, 671, 691, 702, 693};
constexpr double cudnn_unmasked_backward[] = {504, 560, 594, 612, 572};
constexpr MeasuredCurve cudnn_h200 = {cudnn_lengths, cudnn_causal_forward, cudnn_causal_backward, cudnn_unmasked_forward,
                                      cudnn_unmasked_backward};

// FlashAttention-2 on an H100 SXM5 (see the header): 512, 1k, 2k, 4k, 8k, 16k tokens. The causal
// backward is not published; it is the unmasked backward scaled by the same kernel's causal over
// unmasked forward at that length (the mask skips and half-fills the same tiles both ways).
constexpr double fa2_lengths[] = {512, 1024, 2048, 4096, 8192, 16384};
constexpr double fa2_causal_forward[] = {191, 260, 298, 319, 333, 335};
constexpr double fa2_unmasked_forward[] = {309, 350, 362, 368, 370, 370};
constexpr double fa2_unmasked_backward[] = {214, 260, 291, 310, 318, 322};
constexpr double fa2_causal_backward[] = {214.0 * 191 / 309, 260.0 * 260 / 350, 291.0 * 298 / 362,
                                          310.0 * 319 / 368, 318.0 * 333 / 370, 322.0 * 335 / 370};
constexpr MeasuredCurve fa2_h100 = {fa2_lengths, fa2_causal_forward, fa2_causal_backward, fa2_unmasked_forward, fa2_unmasked_backward};

double d(long long v) { return static_cast<double>(v); }

double interpolate(std::span<const double> lengths, std::span<const double> tflops, double length) {
  const auto frac = [&](std::size_t i) { return tflops[i] * 1e12 / hopper_dense_bf16_flops_per_s; };
  const std::size_t n = lengths.size();
  if (length >= lengths[n - 1]) return frac(n - 1);
  if (length < lengths[0]) {
    // e(s) = e∞ / (1 + s₀/s) through the two shortest points: a fixed cost per diagonal tile.
    const double s1 = lengths[0], s2 = lengths[1], e1 = frac(0), e2 = frac(1);
    const double s0 = std::max(0.0, (e2 - e1) / (e1 / s1 - e2 / s2));
    const double e_inf = e1 * (1 + s0 / s1);
    return e_inf / (1 + s0 / std::max(length, 1.0));
  }
  std::size_t i = 1;
  while (lengths[i] < length) ++i;
  const double t = std::log(length / lengths[i - 1]) / std::log(lengths[i] / lengths[i - 1]);
  return frac(i - 1) + t * (frac(i) - frac(i - 1));
}

double efficiency_on(const MeasuredCurve& c, bool backward, bool causal, double length) {
  if (causal) return interpolate(c.lengths, backward ? c.causal_backward : c.causal_forward, length);
  return interpolate(c.lengths, backward ? c.unmasked_backward : c.unmasked_forward, length);
}

}  // namespace

double hopper_fused_attention_efficiency(bool backward, bool causal, double length) {
  return efficiency_on(cudnn_h200, backward, causal, length);
}

double hopper_fa2_efficiency(bool backward, bool causal, double length) { return efficiency_on(fa2_h100, backward, causal, length); }

double FlashRate::efficiency(bool backward, bool causal, double length) const {
  switch (curve) {
    case FlashCurve::hopper_fused: return hopper_fused_attention_efficiency(backward, causal, length);
    case FlashCurve::hopper_fa2: return hopper_fa2_efficiency(backward, causal, length);
    case FlashCurve::flat: break;
  }
  return flat_efficiency;
}

FlashRate flash_rate_for(AttentionKernel k, std::string_view gpu_generation) {
  if (gpu_generation != "h100") return {FlashCurve::flat, flash_attention_efficiency};
  if (k == AttentionKernel::fa2) return {FlashCurve::hopper_fa2, flash_attention2_hopper_efficiency};
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
