#pragma once
// A power-capped GPU (docs/METHODOLOGY.md §6.12). Under a power limit below its TDP the GPU lowers
// its clocks until it draws no more than the limit, so work bound by the SMs' arithmetic (matrix
// products, flash attention) runs slower; work bound by HBM barely does (the memory clock is not
// the one that drops). napkin scales the compute rates by
//
//   f(P) = min(1, (P / TDP)^power_cap_exponent)
//
// and leaves bandwidths alone.
namespace napkin {

// MLPerf Inference v4.0, NVIDIA's DGX-H100 (8 × H100 SXM, 700 W TDP) run uncapped ("MaxP") and
// power-capped ("MaxQ") on the same system and software (mlcommons/inference_results_v4.0,
// closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT{,_MaxQ}/*/Offline/performance/run_1/
// mlperf_log_summary.txt; caps from closed/NVIDIA/configs/*: power_limit): Llama 2 70B fp8 at 450 W
// kept 0.805 of its throughput, BERT fp8 at 400 W 0.766, Stable Diffusion XL at 350 W 0.735. Each
// is (P/700)^α with α = 0.491, 0.476, 0.444; mean 0.470. Offline inference at large batch is
// compute-bound, as training's products are.
inline constexpr double power_cap_exponent = 0.47;

// The fraction of the datasheet compute rate sustained at `limit_w` on a part whose TDP is
// `tdp_w`: 1 at or above the TDP. Throws Error for a limit or TDP that is not positive.
double power_capped_compute_fraction(double limit_w, double tdp_w);

}  // namespace napkin
