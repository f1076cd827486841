#pragma once
// How long one matrix product takes on one GPU (docs/METHODOLOGY.md §6.2). Three sources, in
// the order a user would trust them:
//   measured — `napkin calibrate --json` times of the model's own shapes (exact shapes used
//              as measured; other shapes get the default curve scaled by the median ratio
//              measured / curve over the measured shapes);
//   fraction — one efficiency F for every product: time = FLOPs / (peak · F);
//   curve    — the default: a roofline with a per-launch cost and a flat product's exposed time,
//              compute = FLOPs / (peak · peak_efficiency),
//              memory  = bytes / (bandwidth · memory_bandwidth_efficiency),
//              time = max(compute, memory) + min(compute, memory) / max(1, m / gemm_tile_m) + gemm_launch_s,
//              bytes = (m·k + m·n) · value bytes + k·n · weight bytes (A and B read once, C written once).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"

namespace napkin {

// The best matmul throughput found by a shape search, as a fraction of the dense peak: Stas
// Bekman's "Maximum Achievable Matmul FLOPS" (MAMF) table, ml-engineering
// compute/accelerator/README.md (mamf-finder.py, mean of 100 iterations, torch 2.5-2.10). A listed
// part's fp8 falls back to its bf16 share, Blackwell's fp4 derives from its fp8 (gemm_time.cpp);
// nullopt for a part the table does not list, or a dtype neither gives.
std::optional<double> mamf_fraction(std::string_view hardware_key, Dtype dtype);
// Large training-sized products reach a little less than the best shape: A100-SXM4-80GB fp16
// cuBLASLt at 8192³, 16384³ and 6144×12288×12288 runs 253.7, 256.5 and 250.8 TFLOP/s (Azure ND A100
// v4, samuel-bohman/AI-benchmarking-guide) against its MAMF of 271.2: 0.935, 0.946, 0.925; mean 0.935.
// Those runs held the products for 10,000 warm-up iterations before timing: a sustained rate.
inline constexpr double gemm_over_mamf = 0.935;
// A Hopper SXM part at 700 W does not hold a short benchmark's rate through minutes of products:
// its power cap pulls the SM clock down. napkin bench on an H200 (the H100 SXM's SMs, clock and
// 700 W; docs/bench/NVIDIA_H200/sustained, tests/gpu/sustained_clock.sh), bf16 8192³ back to back
// for a minute: 663.8 and 664.0 TFLOP/s in two runs, the SM clock settling at 1455 MHz against the
// 1980 MHz boost (nvidia-smi clocks_event_reasons 0x4, software power cap, 690 W), where 50
// products on an idle GPU run at 721.7-736.2. Over the part's bf16 MAMF (794.5 TFLOP/s): 0.836, in
// place of the A100's 0.935 (which the 400 W part holds: the A100 validation rows). fp8 holds the
// same share: on the same H200, hot from that minute, fp8 8192³ ran at 1219 TFLOP/s for a second
// and at a median of 1240.5 in gpu_check.sh (SM clock 1365 MHz), 0.84 and 0.85 of the H200's fp8
// MAMF (0.734 × 1979 = 1452.6), where bf16 in that state ran at 673.9, 1.5% above its minute.
inline constexpr double hopper_sxm_sustained_over_mamf = 0.836;
// The same runs' minute over their short runs, 663.9 / 729.6: what any short benchmark of a Hopper
// SXM part's compute (cuDNN's attention timings, the FlashAttention papers' bars) keeps when the
// work runs for minutes at 700 W (core/attention_rate.hpp).
inline constexpr double hopper_sxm_sustained_over_short = 0.91;
// Blackwell holds less of its short-benchmark rate still. GB200: Azure's cuBLASLt fp8 products after
// 10,000 warm-up iterations (Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md @2a370be:
// 8192³ 2876.6, 16384³ 2906.9, 6144×12288×12288 2895.6 TFLOP/s, mean 2893) against the part's fp8
// MAMF (0.723 × 5 PFLOP/s = 3615): 0.800. B200: back-to-back bf16 FlashAttention-4 kernels fall from
// 1450 to 1237 TFLOP/s within 100 iterations, the SM clock from 1965 to about 1580 MHz at about
// 1000 W (flashinfer-ai/flashinfer#2899), 0.853 of the short rate, × gemm_over_mamf = 0.798. The same
// harness ran Hopper's fp8 at 0.96 of its MAMF (ND_H100_v5: 6144×12288×12288 1351.4 of 1403), so the
// drop is the part's, not the harness's. B200 and GB200 products in bf16, fp16, fp8 and fp4 (its
// share from a short benchmark's best, below) run at MAMF × 0.80.
// Blackwell's attention is priced from cuDNN's measured curves (core/attention_rate.hpp), held at
// blackwell_attention_sustained_over_short below.
inline constexpr double blackwell_sustained_over_mamf = 0.80;
// The attention kernels' own held share on Blackwell, from the same flashinfer#2899 measurement:
// FlashAttention-4 back to back on a B200, 1237 of its short 1450 TFLOP/s. What the measured cuDNN
// curves of core/attention_rate.hpp keep over minutes of work on every Blackwell part (no GB300 or
// B300 measurement of it is published; their higher power limits may hold more).
inline constexpr double blackwell_attention_sustained_over_short = 1237.0 / 1450.0;
// Blackwell's fp4 against its fp8, per unit of peak: the best published dense FP4 products on a B200,
// 5,702 TFLOP/s at 8192³ (DeepGEMM's MXFP4 kernel, deepseek-ai/DeepGEMM#348; cuBLASLt ran 5,239 there),
// are 0.634 of its 9 PFLOP/s, where the MAMF table's B200 fp8 is 0.763 of 4.5: 0.831. B200 and GB200
// are one die (148 SMs) whose fp8 shares agree (0.763, 0.723), so GB200's fp4 is its fp8 share × 0.831
// too (0.601, 6.0 PFLOP/s short, 4.8 held). Azure's cuBLASLt GB200 fp4 run (ND_GB200_v6_results.md
// @2a370be: 7,535.6 at 8192³) is not used: its harness ran the same GPU's fp8 at 2,876.6, so its fp4
// came out 2.62× its fp8 where the tensor cores' peaks differ 2×; a fp4 share 1.3× the fp8 share of the
// same harness is not the rate the same kernels' fp8 implies. Checked after the change, not fitted: in
// TensorRT-LLM's NVFP4 throughput tables GB200 serves 1.02-1.16× what B200 does (mean about 1.07), the
// datasheets' 10/9 compute and 8.0/7.7 bandwidth; the two fp4 figures had napkin at 1.2-1.45×.
inline constexpr double blackwell_fp4_over_fp8_mamf = 0.831;
// For a part without a MAMF: the median MAMF fraction of the table's twelve BF16 rows (0.781) × 0.935.
inline constexpr double gemm_peak_efficiency_unknown = 0.73;
// The curve's compute-bound efficiency for a part: MAMF × gemm_over_mamf (A100 SXM: 0.869 × 0.935 =
// 0.81), for Hopper SXM in bf16, fp16 and fp8 MAMF × hopper_sxm_sustained_over_mamf (0.803 × 0.836 = 0.671,
// the measured minute's 663.8 of 989.5 TFLOP/s; in fp8 H100 0.709 × 0.836 = 0.593, H200 0.614),
// for B200 and GB200 MAMF × blackwell_sustained_over_mamf (B200 bf16 0.776 × 0.80 = 0.621, GB200 fp8
// 0.723 × 0.80 = 0.578), or gemm_peak_efficiency_unknown.
double gemm_peak_efficiency(std::string_view hardware_key, Dtype dtype);
// The same, in its parts, for the reports: the MAMF fraction used (of the part's own row, or the
// H100 SXM's for the parts sharing its die) and the factor applied to it; no MAMF for the median.
struct GemmPeakEfficiency {
  double efficiency = 0;
  std::optional<double> mamf;
  double over_mamf = 0;
};
GemmPeakEfficiency gemm_peak_efficiency_parts(std::string_view hardware_key, Dtype dtype);

// Fraction of the datasheet memory bandwidth a streaming copy reaches: A100-SXM4-80GB 1.61 of
// 2.039 TB/s (0.790), H100 SXM 2.90 of 3.35 TB/s (0.866) (STREAM copy, Azure ND A100 v4 / ND H100
// v5, samuel-bohman/AI-benchmarking-guide). Mean: 0.83.
inline constexpr double memory_bandwidth_efficiency = 0.83;
// What a small product costs beyond its roofline time (wave and tile quantization, the tail of
// the last wave): 1024³ fp16 on A100 takes 18.0 µs against 8.4 µs at 0.81 of peak (9.6 µs more);
// 1024³ fp8 on H100 7.8 µs against 1.3 µs (6.5 µs more) (same sources). Mean: 8 µs.
inline constexpr double gemm_launch_s = 8e-6;
// Rows of the output one thread block computes: CUTLASS's default tile for tensor-core products
// (include/cutlass/gemm/device/default_gemm_configuration.h, DefaultGemmConfiguration<OpClassTensorOp,
// Sm80 / Sm89>: ThreadblockShape GemmShape<128, 256, 64>).
inline constexpr double gemm_tile_m = 128;
// A flat product (m of one or a few tile rows: a prefill of a short prompt, a decode batch) does not
// overlap its weight reads with its math: each thread block streams its panel of B once and
// multiplies it, so loads and math follow each other instead of hiding behind other blocks'
// (Hong et al. 2023, FlashDecoding++, arXiv 2311.01282 §4: flat GEMMs lose over 50% in cuBLAS and
// CUTLASS, which tile m to 64 or more to hide memory latency). With m / gemm_tile_m rows of tiles
// the reads of one row hide behind the others' math, so the exposed part is the smaller of the two
// times over the rows: all of it for m ≤ 128, under 1% of a training product (m = 4096 tokens: 32
// rows, and its memory time is a tenth of its math). The rows are not rounded up: ⌈m / 128⌉ made
// m = 129 expose half of what m = 128 exposes, and finish sooner.
double flat_gemm_exposed_s(double compute_s, double memory_s, long long m);

struct MeasuredGemm {
  long long m = 0, n = 0, k = 0;
  double time_s = 0;  // one product of the shape
};

struct GemmTimeModel {
  enum class Kind { curve, fraction, measured };
  Kind kind = Kind::curve;
  double peak_flops_per_s = 0;            // dense, for the dtype
  double memory_bandwidth_bytes_per_s = 0;
  double value_bytes = 2;                 // operand size (bf16)
  // The B operand's (a forward product's weight: k×n) stored size when narrower than the operands:
  // a weight-only quantised serving kernel (W4A16, W8A16) reads the packed weight and its scales.
  // 0: value_bytes.
  double weight_value_bytes = 0;
  double peak_efficiency = 0.81;          // compute-bound fraction of peak (gemm_peak_efficiency)
  double mbu = memory_bandwidth_efficiency;  // memory-bound fraction of the bandwidth (plan --mbu)
  double fraction = 0;                    // Kind::fraction
  std::vector<MeasuredGemm> measured;     // Kind::measured
  double measured_over_curve = 1;         // median of measured / curve over `measured`
  std::string source;                     // for the report: "default curve", "--gemm-efficiency 0.7", a path

  // Seconds for one product of shape m×n×k (one member of a batch).
  double time_s(long long m, long long n, long long k) const;
  // Seconds for `members` products of one shape issued as `launches` kernels: a batched product
  // (attention's heads) or a grouped GEMM (a MoE layer's experts: Megatron-Core's GroupedMLP with
  // moe_grouped_gemm, TensorRT-LLM's MoE plugin, vLLM's fused_moe run every expert of a layer in one
  // kernel). On the curve the launch and tail cost (gemm_launch_s) is paid once per launch, not
  // per member; a measured or fixed-fraction time is per member as measured.
  double grouped_time_s(long long m, long long n, long long k, double members, double launches) const;
  // The roofline curve alone, whatever the kind.
  double curve_time_s(long long m, long long n, long long k) const;
};

// Builds Kind::measured from calibrate's timed shapes; computes measured_over_curve.
// Throws Error when the list is empty or a time is not positive.
GemmTimeModel measured_gemm_model(GemmTimeModel base, std::vector<MeasuredGemm> measured, std::string source);

}  // namespace napkin
