// Training compute and time, against hand arithmetic and published training budgets.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/step_gemms.hpp"
#include "core/training.hpp"
#include "spec/registry.hpp"

using namespace napkin;

namespace {
TrainingQuery h100(double mfu = 0.5) {
  TrainingQuery q;
  q.peak_flops_per_s = 989.5e12;  // H100 SXM dense bf16 (NVIDIA H100 datasheet: 1,979 sparse / 2)
  q.mfu = mfu;
  return q;
}
}  // namespace

TEST_CASE("70B on 15T tokens on 1024 H100s at MFU 0.5") {
  TrainingQuery q = h100();
  q.params = 70e9, q.tokens = 15e12, q.gpus = 1024;
  const TrainingRun r = solve_training(q);
  // C = 6 · 70e9 · 15e12 = 6.3e24 FLOP; cluster = 1024 · 989.5e12 · 0.5 = 5.06624e17 FLOP/s;
  // t = 1.24353e7 s = 143.927 days; GPU-hours = 1024 · t / 3600 = 3,537,140.
  CHECK(r.total_flops == doctest::Approx(6.3e24));
  CHECK(r.flops_per_token == doctest::Approx(4.2e11));
  CHECK(r.cluster_flops_per_s == doctest::Approx(5.06624e17));
  CHECK(r.days() == doctest::Approx(143.9266).epsilon(1e-5));
  CHECK(r.gpu_hours() == doctest::Approx(3537140).epsilon(1e-5));
}

TEST_CASE("solving for each unknown inverts the same arithmetic") {
  SUBCASE("tokens from days") {
    TrainingQuery q = h100();
    q.params = 70e9, q.gpus = 1024, q.days = 90;
    // D = 1024 · 989.5e12 · 0.5 · 90 · 86400 / (6 · 70e9) = 9.37978e12
    const TrainingRun r = solve_training(q);
    CHECK(r.solved_for == Unknown::tokens);
    CHECK(r.tokens == doctest::Approx(9.379781e12).epsilon(1e-6));
  }
  SUBCASE("GPUs from days") {
    TrainingQuery q = h100();
    q.params = 70e9, q.tokens = 15e12, q.days = 90;
    // N = 6.3e24 / (989.5e12 · 0.5 · 90 · 86400) = 1637.56 -> 1638 whole GPUs, which finish
    // in 6.3e24 / (1638 · 989.5e12 · 0.5) = 7,773,934 s = 89.976 days; GPU-hours
    // 1638 · 7,773,934 / 3600 = 3,537,140 (the same work, so the same as 1637.56 GPUs × 90 days).
    const TrainingRun r = solve_training(q);
    CHECK(r.gpus_exact == doctest::Approx(1637.5648).epsilon(1e-6));
    CHECK(r.gpus == 1638);
    CHECK(r.requested_time_s == 90.0 * 86400);
    CHECK(r.days() == doctest::Approx(89.976088).epsilon(1e-6));
    CHECK(r.cluster_flops_per_s == doctest::Approx(1638 * 989.5e12 * 0.5));
    CHECK(r.gpu_hours() == doctest::Approx(3537140).epsilon(1e-5));
  }
  SUBCASE("MFU from params, tokens, GPUs and days") {
    TrainingQuery q = h100();
    q.mfu.reset();
    q.params = 70e9, q.tokens = 15e12, q.gpus = 1024, q.days = 200;
    // MFU = 6.3e24 / (1024 · 989.5e12 · 200 · 86400) = 6.3e24 / 1.75090e25 = 0.3598165
    const TrainingRun r = solve_training(q);
    CHECK(r.solved_for == Unknown::mfu);
    CHECK(r.mfu == doctest::Approx(0.3598165).epsilon(1e-6));
    CHECK(r.days() == doctest::Approx(200));
  }
  SUBCASE("params from days, with the attention term subtracted") {
    TrainingQuery q = h100(0.4);
    q.tokens = 1e12, q.gpus = 1024, q.days = 30;
    q.attention_flops_per_token = 1e11;
    // C / D = 1024 · 989.5e12 · 0.4 · 30 · 86400 / 1e12 = 1.0505355e12 FLOP per token;
    // P = (1.0505355e12 - 1e11) / 6 = 158.42259e9 (adding it instead would give 191.76e9).
    CHECK(solve_training(q).params == doctest::Approx(158.4225877e9).epsilon(1e-9));
  }
  SUBCASE("params from days") {
    TrainingQuery q = h100(0.4);
    q.tokens = 1e12, q.gpus = 1024, q.days = 30;
    // P = 1024 · 989.5e12 · 0.4 · 30 · 86400 / (6 · 1e12) = 175.089e9
    CHECK(solve_training(q).params == doctest::Approx(175.0892544e9));
  }
}

TEST_CASE("published training budgets") {
  const SpecRegistry specs = SpecRegistry::builtin_only();
  // Brown et al. 2020 (arXiv:2005.14165) Table D.1: GPT-3 175B, 300B tokens, 3.14e23 FLOPs.
  TrainingQuery q = h100();
  q.params = count_params(specs.model("gpt3-175b")).total, q.tokens = 300e9, q.gpus = 1;
  CHECK(solve_training(q).total_flops == doctest::Approx(3.14e23).epsilon(0.005));
  // Dubey et al. 2024 (arXiv:2407.21783) §1 and §3: Llama 3 405B on 15.6T tokens, 3.8e25 FLOPs.
  q.params = count_params(specs.model("llama3.1-405b")).total, q.tokens = 15.6e12;
  CHECK(solve_training(q).total_flops == doctest::Approx(3.8e25).epsilon(0.01));
}

TEST_CASE("MoE uses active parameters") {
  // Mixtral: 12.88B active of 46.7B; 6 · 12.88e9 per token, not 6 · 46.7e9.
  const ParamCount c = count_params(SpecRegistry::builtin_only().model("mixtral-8x7b"));
  TrainingQuery q = h100();
  q.params = c.active, q.tokens = 1e12, q.gpus = 8;
  CHECK(solve_training(q).flops_per_token == doctest::Approx(6 * 12.88e9).epsilon(0.002));
}

TEST_CASE("attention term: 12·L·H·Q·T per token (PaLM appendix B), causal half") {
  const Model m = SpecRegistry::builtin_only().model("llama3-70b");
  // 12 · 80 layers · 64 heads · 128 head dim · 8192 = 64,424,509,440
  CHECK(attention_flops_per_token(m, 8192, false) == 64424509440.0);
  CHECK(attention_flops_per_token(m, 8192, true) == 32212254720.0);
  // DeepSeek-V3's MLA: d_qk = 128 + 64, d_v = 128: 6 · 61 · 128 · 4096 · (192 + 128) = 6.1404e13
  const Model ds = SpecRegistry::builtin_only().model("deepseek-v3");
  CHECK(attention_flops_per_token(ds, 4096, false) == 6.0 * 61 * 128 * 4096 * 320);
}

TEST_CASE("sliding-window layers attend to at most the window") {
  const SpecRegistry specs = SpecRegistry::builtin_only();
  // Gemma 2 27B at 8192: 23 global layers attend to 8192 (4096 causal), 23 windowed ones to
  // 4096 (causal 4096 - 4096²/16384 = 3072). 6 · 32 heads · (128 + 128) = 49,152 FLOPs per key:
  // non-causal 49,152 · (23·8192 + 23·4096) = 13,891,534,848; causal 49,152 · 23 · (4096 + 3072) = 8,103,395,328.
  const Model g = specs.model("gemma2-27b");
  CHECK(attention_flops_per_token(g, 8192, false) == 13891534848.0);
  CHECK(attention_flops_per_token(g, 8192, true) == 8103395328.0);
  // Mistral 7B: all 32 layers windowed at 4096; at 4096 tokens the window changes nothing:
  // 6 · 32 · 32 · 4096 · 256 = 6,442,450,944 non-causal.
  const Model mi = specs.model("mistral-7b");
  CHECK(attention_flops_per_token(mi, 4096, false) == 6442450944.0);
  // at 32768 tokens only 4096 are attended: the same figure.
  CHECK(attention_flops_per_token(mi, 32768, false) == 6442450944.0);
}

TEST_CASE("Chinchilla: D = 20·P and the compute-optimal split") {
  // Hoffmann et al. 2022: Chinchilla, 70B params on 1.4T tokens = 20 tokens per parameter;
  // C = 6 · 70e9 · 1.4e12 = 5.88e23 -> P = sqrt(5.88e23 / 120) = 7.0e10.
  const ComputeOptimal opt = compute_optimal(5.88e23);
  CHECK(opt.params == doctest::Approx(70e9));
  CHECK(opt.tokens == doctest::Approx(1.4e12));
  CHECK_THROWS_AS(compute_optimal(0), Error);
  CHECK_THROWS_AS(compute_optimal(INFINITY), Error);
}

TEST_CASE("cost, energy and CO2") {
  TrainingQuery q = h100();
  q.params = 70e9, q.tokens = 15e12, q.gpus = 1024;
  const TrainingRun r = solve_training(q);
  CostInputs in;
  in.price_usd_per_gpu_hour = 2.0;
  in.tdp_watts = 700;
  in.pue = 1.2;
  in.grid_g_per_kwh = 400;
  const RunCosts c = run_costs(r, in);
  // 3,537,140 GPU-h · $2 = $7,074,280; energy 3,537,140 · 700 W · 1.2 / 1e6 = 2,971.2 MWh;
  // CO2 2,971,198 kWh · 400 g/kWh = 1,188.5 t.
  CHECK(*c.cost_usd == doctest::Approx(7074280).epsilon(1e-5));
  CHECK(*c.energy_mwh == doctest::Approx(2971.198).epsilon(1e-5));
  CHECK(*c.co2_tonnes == doctest::Approx(1188.479).epsilon(1e-5));
  in.tdp_watts.reset();
  CHECK_FALSE(run_costs(r, in).energy_mwh.has_value());
}

TEST_CASE("whole accelerators: always up, never to the nearest") {
  CHECK(whole_gpus(1024.2) == 1025);          // rounding would give 1024
  CHECK(whole_gpus(1637.5648) == 1638);
  CHECK(whole_gpus(1024.0000000001) == 1024);  // floating-point noise, not a 1025th GPU
  CHECK(whole_gpus(0.3) == 1);
}

TEST_CASE("published runs: the MFU they imply") {
  const SpecRegistry specs = SpecRegistry::builtin_only();
  // Llama 3.1 405B (Dubey et al. 2024, arXiv:2407.21783): 15.6T tokens on 16,384 H100s; the
  // model card gives 30.84M H100 GPU-hours for it, i.e. 30.84e6 / 16384 / 24 = 78.43 days.
  // MFU = 6 · 405,853,388,800 · 15.6e12 / (30.84e6 · 3600 · 989.5e12) = 0.345790. The paper
  // reports 38-43% while training (§3.3.4, Table 4) and >90% effective training time
  // (§3.3.4): 0.3458 / 0.9 = 0.384, inside its range.
  TrainingQuery q = h100();
  q.mfu.reset();
  q.params = count_params(specs.model("llama3.1-405b")).total, q.tokens = 15.6e12, q.gpus = 16384;
  q.days = 30.84e6 / 16384 / 24;
  CHECK(solve_training(q).mfu == doctest::Approx(0.345790).epsilon(1e-5));
  // Gopher 280B (Rae et al. 2021, arXiv:2112.11446 §4 and Table A27): 300B tokens on 4096
  // TPU v3 chips for 920 hours. MFU = 6 · 280e9 · 300e9 / (4096 · 123e12 · 920 · 3600) = 0.302047.
  // PaLM (Chowdhery et al. 2022, Table 3) gives Gopher 32.5% from its steady-state step rate;
  // the 920 hours include restarts, so the wall-clock figure is lower.
  q.peak_flops_per_s = specs.hardware("tpu-v3").dense_peak(Dtype::bf16).value();
  q.params = 280e9, q.tokens = 300e9, q.gpus = 4096, q.days = 920.0 / 24;
  CHECK(solve_training(q).mfu == doctest::Approx(0.302047).epsilon(1e-5));
  // H800: the H100 SXM's compute (NVIDIA H800 page: BF16 1,979 TFLOPS with sparsity).
  CHECK(specs.hardware("h800").dense_peak(Dtype::bf16).value() == 1979e12 / 2);
}

TEST_CASE("answers nobody can use are errors that name the input") {
  TrainingQuery q = h100();
  // An input outside the range napkin answers in is refused by its flag before any solving
  // (issue 16: 1e-300 parameters printed 2e-309 days).
  q.params = 70e9, q.tokens = 15e12, q.days = 1e-300;
  CHECK_THROWS_WITH_AS(solve_training(q), doctest::Contains("--days 1e-300 is outside what napkin answers for"), Error);
  q.days = 1e300;
  CHECK_THROWS_WITH_AS(solve_training(q), doctest::Contains("--days 1e+300 is outside"), Error);
  q.days.reset(), q.params = 1e-300, q.gpus = 8;
  CHECK_THROWS_WITH_AS(solve_training(q), doctest::Contains("--params 1e-300 is outside"), Error);
  q.params = 70e9, q.gpus.reset();
  // In range, solved out of range: 1e-9 days (86.4 µs) needs 6 · 70e9 · 15e12 / (494.75e12 · 8.64e-5)
  // = 1.47e14 GPUs.
  q.days = 1e-9;
  CHECK_THROWS_WITH_AS(solve_training(q), doctest::Contains("solving for GPUs gives"), Error);
  q.params.reset(), q.gpus = 8;  // 8 · 494.75e12 · 8.64e-5 / (6 · 15e12) = 0.0038 parameters
  CHECK_THROWS_WITH_AS(solve_training(q), doctest::Contains("solving for parameters gives"), Error);
  q.params = 70e9, q.tokens.reset();  // 8 · 494.75e12 · 8.64e-5 / (6 · 70e9) = 0.00081 tokens
  CHECK_THROWS_WITH_AS(solve_training(q), doctest::Contains("solving for tokens gives"), Error);
  q.tokens = 15e12, q.mfu.reset(), q.days = 1;  // MFU 3,000%: more than the peak
  CHECK_THROWS_WITH_AS(solve_training(q), doctest::Contains("solving for MFU gives"), Error);
  q.mfu = 0.5, q.days.reset(), q.gpus = 8;
  const TrainingRun r = solve_training(q);
  CostInputs in;
  in.tdp_watts = 700, in.grid_g_per_kwh = 1e308;
  CHECK_THROWS_WITH_AS(run_costs(r, in), doctest::Contains("--grid-intensity"), Error);
  in.grid_g_per_kwh.reset(), in.price_usd_per_gpu_hour = 1e308;
  CHECK_THROWS_WITH_AS(run_costs(r, in), doctest::Contains("--price"), Error);
  in.price_usd_per_gpu_hour = 0;  // "would overflow" before issue 16: now the range, by its flag
  CHECK_THROWS_WITH_AS(run_costs(r, in), doctest::Contains("--price 0 is outside what napkin answers for: give above 0"), Error);
}

TEST_CASE("bad queries are errors, never inf or nan") {
  TrainingQuery q = h100();
  q.params = 70e9, q.tokens = 15e12;
  CHECK_THROWS_AS(solve_training(q), Error);  // two unknowns
  q.gpus = 8, q.days = 1;
  CHECK_THROWS_AS(solve_training(q), Error);  // no unknown: MFU given too
  q.days.reset();
  q.gpus = 0;
  CHECK_THROWS_AS(solve_training(q), Error);
  q.gpus = 8, q.mfu = 0;
  CHECK_THROWS_AS(solve_training(q), Error);
  q.mfu = 0.5, q.params = 1e300, q.tokens = 1e300;
  CHECK_THROWS_AS(solve_training(q), Error);  // 6·P·D overflows
}

TEST_CASE("a step's attention products under a sliding window match the attention term") {
  // Mistral 7B at 8192 tokens: every layer windowed at 4096, so the causal mean is
  // 4096 - 4096²/(2·8192) = 3072 keys per query. Forward + backward of the score and context
  // products: 6 · 32 heads · 3072 keys · (128 + 128) · 32 layers = 4,831,838,208 FLOP per token,
  // 8192 tokens per sequence: 39,582,418,599,936 FLOP per step of one sequence.
  const Model m = SpecRegistry::builtin_only().model("mistral-7b");
  StepConfig c;
  c.seq = 8192;
  double attention = 0;
  for (const Gemm& g : step_gemms(m, c))
    if (g.name.rfind("attn.scores", 0) == 0 || g.name.rfind("attn.context", 0) == 0) attention += g.flops;
  CHECK(attention == doctest::Approx(39582418599936.0));
  CHECK(attention_flops_per_token(m, 8192, true) * 8192 == doctest::Approx(39582418599936.0));
}
