#pragma once
// Training compute accounting: C = 6·P·D (Kaplan et al. 2020 §2.1; Hoffmann et al. 2022),
// the attention term (PaLM, Chowdhery et al. 2022, appendix B), time at an assumed MFU,
// and solving for whichever of params, tokens, GPUs, days or MFU the user left out.
#include <optional>
#include <string>
#include <string_view>

#include "core/model.hpp"

namespace napkin {

enum class FlopsModel {
  six_pd,              // 6·P·D: the headline everybody quotes
  six_pd_attn,         // + 12·L·H·Q·T per token (PaLM; attention over the whole sequence)
  six_pd_attn_causal,  // + 6·L·H·Q·T per token (a causal mask halves the useful score work)
};

enum class Unknown { days, tokens, params, gpus, mfu };

// The per-token attention FLOPs of forward + backward for a sequence of `seq_len`, for
// the score product Q·Kᵀ and the weighted sum with V: 2 FLOPs per multiply-add, times 3
// for forward + backward, i.e. 6·L·H·T·(d_qk + d_v) = 12·L·H·Q·T when d_qk = d_v = Q.
// Sliding-window layers attend to at most their window (mean_keys_per_query, core/model.hpp); a
// hybrid's linear-attention layers add their delta rule's chunked FLOPs instead of attending.
double attention_flops_per_token(const Model& m, double seq_len, bool causal);

// The range napkin answers in, for each quantity of a run. The same bounds hold whether the user
// types the value in or napkin solves for it: a typed-in value outside is refused naming its flag
// (check_input), a solved one naming the inputs it came from, so neither prints "2e-309 days" or
// sizes a 0.09-parameter model. Outside these no real run exists: fewer than one parameter or
// token, more than 1e9 accelerators (the largest clusters are ~1e5), days under 0.1 ms or over
// 2.7 million years, a price above $1e6 per GPU-hour.
struct RunRange {
  double lo = 0, hi = 0;
  bool lo_inclusive = true;  // false: lo itself is refused ("(0, 1e6]")
  std::string_view unit;     // what the number counts, for the message: "parameters", "days"
};
inline constexpr RunRange params_range{1, 1e18, true, "parameters"};
inline constexpr RunRange tokens_range{1, 1e30, true, "tokens"};
inline constexpr RunRange gpus_range{1, 1e9, true, "accelerators"};
inline constexpr RunRange days_range{1e-9, 1e9, true, "days"};
// A budget C gives P = sqrt(C/120) (compute_optimal): params_range's 1 to 1e18 is 120 to 1.2e38 FLOPs.
inline constexpr RunRange budget_range{120, 1.2e38, true, "FLOPs"};
inline constexpr RunRange price_range{0, 1e6, false, "USD per GPU-hour"};
inline constexpr RunRange pue_range{1, 10, true, "(1.0 = the accelerators alone)"};
inline constexpr RunRange grid_range{0, 1e5, true, "g CO2 per kWh"};

// `v` when it lies in `r`; else Error "FLAG V is outside ...: give between LO and HI UNIT".
double check_input(double v, const RunRange& r, std::string_view flag);

// The smallest MFU napkin answers with, given or solved: below it the answers (GPUs, days) leave
// what can be printed, and no real run is near it (an H100 at 1e-9 MFU does 1 MFLOP/s).
constexpr double min_mfu = 1e-9;

struct TrainingQuery {
  std::optional<double> params;  // parameters that each token passes through (MoE: active)
  std::optional<double> tokens;
  std::optional<double> gpus;
  std::optional<double> days;
  double peak_flops_per_s = 0;   // per accelerator, for the dtype (sparse already applied)
  std::optional<double> mfu = 0.5;  // leave it out, with all four above given, to solve for it
  double attention_flops_per_token = 0;  // 0 unless the flops model counts attention
  // LoRA (core/lora_flops.hpp): a frozen weight costs 4 FLOPs per token (forward and input
  // gradient, no weight gradient), the adapters their own 6·A; 6 and 0 for full training.
  double flops_per_param = 6;
  double adapter_flops_per_token = 0;
  // Time per token per GPU outside the model FLOPs (a quantized base's dequantisation): added to
  // the time, never to the FLOPs, so MFU keeps its meaning.
  double overhead_s_per_token = 0;
  std::string device = "GPU";  // what one part is called in messages: Hardware::device_word ("chip" on a TPU)
};

struct TrainingRun {
  Unknown solved_for = Unknown::days;
  double params = 0;
  double tokens = 0;
  double gpus = 0;            // whole accelerators; when solved for, the exact figure rounded up
  double gpus_exact = 0;      // when solved for: before rounding (C / (peak · MFU · time))
  double mfu = 0;
  double peak_flops_per_s = 0;
  double attention_flops_per_token = 0;
  double flops_per_param = 6;
  double adapter_flops_per_token = 0;
  double overhead_s_per_token = 0;
  double flops_per_token = 0;     // 6·P + attention term (LoRA: 4·P + 6·A + attention)
  double overhead_s = 0;          // overhead_s_per_token · tokens / gpus, inside time_s
  double total_flops = 0;
  double cluster_flops_per_s = 0;  // gpus · peak · mfu
  double time_s = 0;              // on `gpus` accelerators
  double requested_time_s = 0;    // when GPUs were solved for: the time asked for (≥ time_s)

  double days() const { return time_s / 86400.0; }
  double gpu_hours() const { return gpus * time_s / 3600.0; }
};

// Exactly one of params, tokens, gpus, days and mfu must be missing; throws Error otherwise,
// when an input is not positive and finite, or when a result lies outside what makes sense
// to print (fewer than one parameter or token, more than 1e9 accelerators, an MFU above 1,
// a time or count that overflows), naming the input to check.
// Solving for GPUs rounds the exact figure up to whole accelerators and recomputes the time
// (and so the GPU-hours) on that many: the run finishes a little before the time asked for.
TrainingRun solve_training(const TrainingQuery& q);

// Whole accelerators for an exact count: rounded up, with 1e-12 relative slack so that
// 1024.0000000001 from floating-point noise stays 1024.
double whole_gpus(double exact);

struct RunCosts {
  std::optional<double> cost_usd;    // gpu_hours · price
  std::optional<double> energy_mwh;  // gpu_hours · TDP · PUE
  std::optional<double> co2_tonnes;  // energy · grid intensity
};

struct CostInputs {
  std::optional<double> price_usd_per_gpu_hour;
  std::optional<double> tdp_watts;  // the GPU's draw for the energy: its TDP, or its power limit when capped
  bool at_power_limit = false;      // tdp_watts is a power limit below the TDP (--power-limit)
  double pue = 1.0;
  std::optional<double> grid_g_per_kwh;
};

RunCosts run_costs(const TrainingRun& run, const CostInputs& in);

// Chinchilla (Hoffmann et al. 2022, Table 3 / §3.4): about 20 tokens per parameter.
inline constexpr double chinchilla_tokens_per_param = 20.0;

struct ComputeOptimal {
  double params;
  double tokens;
};
// With C = 6·P·D and D = 20·P: P = sqrt(C / 120), D = 20·P.
ComputeOptimal compute_optimal(double budget_flops);

}  // namespace napkin
