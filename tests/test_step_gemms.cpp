// The product list of one training step. Every expected figure is hand arithmetic from the
// architecture numbers in models/*.toml (written out in the comments), or a published count.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/gemm_time.hpp"
#include "core/step_gemms.hpp"
#include "spec/registry.hpp"

using namespace napkin;

namespace {

Model model(const std::string& name) { return SpecRegistry::load({}).model(name); }

const Gemm& find(const std::vector<Gemm>& list, const std::string& name, long long m = -1) {
  auto it = std::find_if(list.begin(), list.end(), [&](const Gemm& g) { return g.name == name && (m < 0 || g.m == m); });
  REQUIRE_MESSAGE(it != list.end(), name);
  return *it;
}

bool has(const std::vector<Gemm>& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(), [&](const Gemm& g) { return g.name == name; });
}

// 6·N + attention with N a published parameter count minus the tables that are only looked
// up (an untied input embedding, learned positions): an independent cross-check of the
// hand-summed product FLOPs, which leave out biases and norms (well under 1%).
double six_n_plus_attention(double published_params, double lookup_params, double attention_per_token, long long tokens) {
  return (6 * (published_params - lookup_params) + attention_per_token) * static_cast<double>(tokens);
}

}  // namespace

TEST_CASE("gpt2: every product of a step, and the FLOP total by hand") {
  const auto list = step_gemms(model("gpt2"), {1, 128, 1});
  // Forward: q, k, v, scores, context, o, up, down (gelu: 2 matrices), lm_head = 9; each has
  // two backward products: 27.
  CHECK(list.size() == 27);
  const Gemm& q = find(list, "attn.q_proj");
  CHECK(q.m == 128); CHECK(q.n == 768); CHECK(q.k == 768); CHECK(q.count == 12);
  CHECK(q.flops == doctest::Approx(2.0 * 128 * 768 * 768 * 12));
  // dgrad dX = dY·Wᵀ: tokens × in × out; wgrad dW = Xᵀ·dY: in × out × tokens.
  const Gemm& qd = find(list, "attn.q_proj.dgrad");
  CHECK(qd.m == 128); CHECK(qd.n == 768); CHECK(qd.k == 768);
  // A non-square product, so a swapped n and k shows: up is 128 x 3072 x 768, its dgrad
  // dX = dY·Wᵀ is 128 x 768 x 3072 (m x k x n), its wgrad dW = Xᵀ·dY 768 x 3072 x 128.
  const Gemm& up_d = find(list, "mlp.up.dgrad");
  CHECK(up_d.m == 128); CHECK(up_d.n == 768); CHECK(up_d.k == 3072);
  const Gemm& up_f = find(list, "mlp.up");
  CHECK(up_f.m == 128); CHECK(up_f.n == 3072); CHECK(up_f.k == 768);
  const Gemm& dq = find(list, "attn.scores.dq");  // dQ = dS·K: 128 x 64 x 128
  CHECK(dq.m == 128); CHECK(dq.n == 64); CHECK(dq.k == 128);
  const Gemm& up_w = find(list, "mlp.up.wgrad");
  CHECK(up_w.m == 768); CHECK(up_w.n == 3072); CHECK(up_w.k == 128);
  const Gemm& down = find(list, "mlp.down");
  CHECK(down.n == 768); CHECK(down.k == 3072);
  // Scores: per (sequence, head) a 128×128 product over head_dim 64, causal: half counted.
  const Gemm& s = find(list, "attn.scores");
  CHECK(s.m == 128); CHECK(s.n == 128); CHECK(s.k == 64); CHECK(s.batch == 12); CHECK(s.useful_fraction == 0.5);
  CHECK(s.flops == doctest::Approx(2.0 * 128 * 128 * 64 * 12 * 12 / 2));
  const Gemm& dk = find(list, "attn.scores.dk");
  CHECK(dk.m == 64); CHECK(dk.n == 128); CHECK(dk.k == 128);
  const Gemm& lm = find(list, "lm_head");  // tied, but still a GEMM
  CHECK(lm.n == 50257); CHECK(lm.k == 768); CHECK(lm.count == 1);
  CHECK(!has(list, "mlp.gate"));

  // GEMM weights: per layer q,k,v,o 4·768² = 2,359,296 + MLP 2·768·3072 = 4,718,592
  // = 7,077,888; ×12 = 84,934,656; LM head 50257·768 = 38,597,376; N = 123,532,032.
  // Attention (causal) per token 3·L·H·T·(64+64) = 3·12·12·128·128 = 7,077,888.
  const double expected = 6.0 * 123532032 * 128 + 7077888.0 * 128;  // = 95,778,570,240
  CHECK(total_flops(list) == doctest::Approx(expected).epsilon(1e-12));
  // Against GPT-2's published 124,439,808 parameters (Hugging Face gpt2), less its learned
  // positions 1024·768 = 786,432 (the tied embedding is the LM head's GEMM).
  CHECK(total_flops(list) == doctest::Approx(six_n_plus_attention(124439808, 786432, 7077888, 128)).epsilon(0.002));
}

TEST_CASE("llama3-8b (GQA, SwiGLU): K/V are narrower, three MLP matrices") {
  const auto list = step_gemms(model("llama3-8b"), {1, 256, 1});
  CHECK(find(list, "attn.k_proj").n == 8 * 128);  // kv_heads 8 × head_dim 128
  CHECK(find(list, "attn.q_proj").n == 4096);
  CHECK(find(list, "attn.scores").batch == 32);   // per query head
  CHECK(find(list, "mlp.gate").n == 14336);
  // Per layer: q 4096² = 16,777,216; k, v 4096·1024 = 4,194,304 each; o 16,777,216;
  // MLP 3·4096·14336 = 176,160,768; = 218,103,808 ×32 = 6,979,321,856; LM head
  // 128256·4096 = 525,336,576; N = 7,504,658,432.
  // Attention per token: 3·32·32·256·(128+128) = 201,326,592.
  const double expected = 6.0 * 7504658432 * 256 + 201326592.0 * 256;  // 11,578,694,959,104
  CHECK(total_flops(list) == doctest::Approx(expected).epsilon(1e-12));
  // Against Llama 3 8B's 8,030,261,248 parameters (Hugging Face safetensors), less its
  // untied input embedding 128256·4096 = 525,336,576.
  CHECK(total_flops(list) == doctest::Approx(six_n_plus_attention(8030261248.0, 525336576, 201326592, 256)).epsilon(0.002));
}

TEST_CASE("mixtral-8x7b: experts at their even-routing token counts, plus the router") {
  const Model mx = model("mixtral-8x7b");
  const auto list = step_gemms(mx, {1, 128, 1});
  // 128 tokens · top-2 = 256 assignments over 8 experts: 32 tokens each, 8·32 layers = 256 launches.
  const Gemm& up = find(list, "moe.expert.up");
  CHECK(up.m == 32); CHECK(up.n == 14336); CHECK(up.k == 4096); CHECK(up.count == 256);
  const Gemm& router = find(list, "moe.router");
  CHECK(router.n == 8); CHECK(router.k == 4096); CHECK(router.count == 32);
  CHECK(!has(list, "mlp.up"));
  // Per layer: attention 41,943,040 (as llama3-8b); 2 active experts 2·3·4096·14336 =
  // 352,321,536; router 4096·8 = 32,768; = 394,297,344 ×32 = 12,617,515,008; LM head
  // 32000·4096 = 131,072,000; N = 12,748,587,008 (+ embedding 131,072,000 + norms 266,240
  // = 12,879,925,248: Mistral's "12.9B active").
  // Attention per token: 3·32·32·128·256 = 100,663,296.
  const double expected = 6.0 * 12748587008 * 128 + 100663296.0 * 128;
  CHECK(total_flops(list) == doctest::Approx(expected).epsilon(1e-12));
  // Against Mistral AI's "12.9B active", less the untied input embedding 32000·4096.
  CHECK(total_flops(list) == doctest::Approx(six_n_plus_attention(12.9e9, 131072000, 100663296, 128)).epsilon(0.01));
}

TEST_CASE("mixtral-8x7b: uneven routing keeps the FLOPs exact and drops idle experts") {
  const auto list = step_gemms(model("mixtral-8x7b"), {1, 3, 1});
  // 3 tokens · 2 = 6 assignments over 8 experts: 6 experts get 1 token, 2 get none.
  const Gemm& up = find(list, "moe.expert.up");
  CHECK(up.m == 1); CHECK(up.count == 6 * 32);
  for (const Gemm& g : list) CHECK(g.m > 0);
  // Attention per token 3·32·32·3·256 = 2,359,296.
  const double expected = 6.0 * 12748587008 * 3 + 2359296.0 * 3;
  CHECK(total_flops(list) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("deepseek-v3 (MLA, shared expert, dense first layers) matches DeepSeek's 36.6B activated") {
  const auto list = step_gemms(model("deepseek-v3"), {1, 256, 1});
  // MLA per layer: q_down 7168·1536 = 11,010,048; q_up 1536·128·192 = 37,748,736;
  // kv_down 7168·576 = 4,128,768; kv_up 512·128·256 = 16,777,216; o 128·128·7168 =
  // 117,440,512; = 187,105,280 ×61 = 11,413,422,080.
  // Dense MLP (3 layers) 3·7168·18432 = 396,361,728 ×3 = 1,189,085,184.
  // MoE (58 layers): router 7168·256 = 1,835,008 + (8 routed + 1 shared)·3·7168·2048 =
  // 396,361,728; = 398,196,736 ×58 = 23,095,410,688. LM head 129280·7168 = 926,679,040.
  // N = 36,624,596,992: DeepSeek's README_WEIGHTS.md "36.6B activated" (incl. the head).
  // Attention per token: 3·61·128·256·(192+128) = 1,918,894,080.
  const double expected = 6.0 * 36624596992 * 256 + 1918894080.0 * 256;
  CHECK(total_flops(list) == doctest::Approx(expected).epsilon(1e-12));
  // 256 tokens · 8 / 256 experts = 8 tokens per expert.
  CHECK(find(list, "moe.expert.down").m == 8);
  CHECK(find(list, "moe.shared_expert.down").m == 256);
  CHECK(find(list, "attn.scores").k == 192);
  CHECK(find(list, "attn.context").n == 128);
}

TEST_CASE("--tp splits columns and rows as Megatron does") {
  const auto list = step_gemms(model("llama3-8b"), {1, 256, 2});
  CHECK(find(list, "attn.q_proj").n == 2048);   // column parallel
  CHECK(find(list, "attn.k_proj").n == 512);
  CHECK(find(list, "attn.o_proj").k == 2048);   // row parallel
  CHECK(find(list, "mlp.up").n == 7168);
  CHECK(find(list, "mlp.down").k == 7168);
  CHECK(find(list, "lm_head").n == 64128);      // vocab parallel
  CHECK(find(list, "attn.scores").batch == 16);
  // Nothing is replicated at tp 2, so each GPU does half of 11,578,694,959,104.
  CHECK(total_flops(list) == doctest::Approx(11578694959104.0 / 2).epsilon(1e-12));

  // tp 16 > 8 KV heads: each rank keeps one KV head (128 wide), 2 query heads.
  const auto wide = step_gemms(model("llama3-8b"), {1, 256, 16});
  CHECK(find(wide, "attn.k_proj").n == 128);
  CHECK(find(wide, "attn.q_proj").n == 256);
  // gpt2's 50257 tokens pad to 50258 at tp 2: 25129 per rank.
  CHECK(find(step_gemms(model("gpt2"), {1, 64, 2}), "lm_head").n == 25129);
}

TEST_CASE("bad configurations are one clear error") {
  const Model g = model("gpt2");
  CHECK_THROWS_WITH_AS(step_gemms(g, {1, 128, 5}), doctest::Contains("does not divide the attention heads (12)"), Error);
  CHECK_THROWS_WITH_AS(step_gemms(g, {0, 128, 1}), doctest::Contains("--micro-batch"), Error);
  CHECK_THROWS_WITH_AS(step_gemms(g, {1, 0, 1}), doctest::Contains("--seq"), Error);
  CHECK_THROWS_WITH_AS(step_gemms(g, {1, 128, 0}), doctest::Contains("--tp"), Error);
  CHECK_THROWS_WITH_AS(step_gemms(g, {1LL << 20, 1LL << 12, 1}), doctest::Contains("2^31-1"), Error);
  // qwen2.5-7b: 28 heads divide by 7 but its 4 KV heads neither divide nor are divided by 7.
  CHECK_THROWS_WITH_AS(step_gemms(model("qwen2.5-7b"), {1, 128, 7}), doctest::Contains("KV heads (4)"), Error);
  Model odd = g;
  odd.d_ff = 3001;  // 12 heads split by 3, 3001 = 3·1000 + 1 does not
  CHECK_THROWS_WITH_AS(step_gemms(odd, {1, 128, 3}), doctest::Contains("d_ff (3001)"), Error);
}

TEST_CASE("grouped GEMMs pay the curve's launch cost once per launch") {
  // 8 experts' 512 × 14336 × 4096 products in one grouped kernel: 8 members' roofline time plus one
  // 8 µs launch, not eight; a fixed-fraction model times members only.
  GemmTimeModel g;
  g.peak_flops_per_s = 989.5e12;
  g.memory_bandwidth_bytes_per_s = 3.35e12;
  g.peak_efficiency = 0.75;
  const double one = g.time_s(512, 14336, 4096);
  CHECK(g.grouped_time_s(512, 14336, 4096, 8, 1) == doctest::Approx(8 * one - 7 * gemm_launch_s));
  CHECK(g.grouped_time_s(512, 14336, 4096, 8, 8) == doctest::Approx(8 * one));
  g.kind = GemmTimeModel::Kind::fraction;
  g.fraction = 0.5;
  CHECK(g.grouped_time_s(512, 14336, 4096, 8, 1) == doctest::Approx(8 * 2.0 * 512 * 14336 * 4096 / (989.5e12 * 0.5)));
}
