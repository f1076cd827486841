#pragma once
// From per-shape GEMM times to a step's matmul time, tokens/s and a measured MFU. Pure
// arithmetic: src/calibrate/ does the timing (bench harness) and calls combine_timings().
// Methodology: docs/METHODOLOGY.md §5.
#include <optional>
#include <vector>

#include "core/model.hpp"
#include "core/step_gemms.hpp"

namespace napkin {

// A distinct call to time: `batch` products of m x n x k launched together (one
// strided-batched call on a GPU), as the step runs them.
struct GemmShape {
  long long m = 0, n = 0, k = 0;
  long long batch = 1;
  bool operator==(const GemmShape&) const = default;
};

// The distinct shapes of a product list, in first-seen order.
std::vector<GemmShape> distinct_shapes(const std::vector<Gemm>& gemms);

struct TimedGemm {
  Gemm gemm;
  double time_per_call_s = 0;  // median of one call: all `batch` products of the shape together
  // The step's time in this entry: time_per_call · count · useful_fraction.
  // A causal kernel (FlashAttention, Dao et al. 2022 §3.1) skips the fully masked tiles,
  // so the attention products are charged the useful half of the dense product's time.
  double time_s = 0;
  double flops_per_s = 0;  // flops / time_s
  double share = 0;        // time_s / step_matmul_time_s
};

struct CalibrationResult {
  std::vector<TimedGemm> products;
  long long tokens_per_step = 0;   // micro_batch · seq, per tensor-parallel group
  long long tp = 1;
  double step_matmul_time_s = 0;   // Σ time_s
  double gemm_flops_per_step = 0;  // Σ flops on this GPU
  double gemm_flops_per_s = 0;     // gemm_flops_per_step / step_matmul_time_s
  double tokens_per_s_per_gpu = 0; // tokens_per_step / step_matmul_time_s / tp
  double peak_flops_per_s = 0;     // the card's dense peak for the dtype timed
  // napkin train's FLOPs per token: 6·P_active + the causal attention term. mfu_measured
  // uses it so that `napkin train --mfu calibrated` reproduces the measured token rate.
  double model_flops_per_token = 0;
  double mfu_measured = 0;         // model_flops_per_token · tokens_per_s_per_gpu / peak
  double gemm_utilization = 0;     // gemm_flops_per_s / peak
  double mfu_assumed = 0.5;
};

// `times_s[i]` is the median time of one call of `shapes[i]` (from distinct_shapes), its
// whole batch.
// Throws Error when a time or the peak is not positive and finite, or the sizes disagree.
CalibrationResult combine_timings(const Model& m, const StepConfig& c, const std::vector<Gemm>& gemms,
                                  const std::vector<GemmShape>& shapes, const std::vector<double>& times_s,
                                  double peak_flops_per_s, double mfu_assumed = 0.5);

// Bytes needed to time the largest call of the list: its A, B and C, for every member of its
// batch, in `bytes_per_value`.
double largest_product_bytes(const std::vector<Gemm>& gemms, double bytes_per_value);

}  // namespace napkin
