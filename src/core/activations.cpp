#include "core/activations.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace napkin {
namespace {

constexpr double mask_bytes = 1;  // dropout masks are stored as bytes (Korthikanti §4.1)
constexpr double fp32_bytes = 4;

struct Layer {
  std::vector<ActivationTerm> terms;
  double s2_bytes = 0;  // the attention-core tensors selective recomputation drops
  double total() const {
    double t = 0;
    for (const auto& x : terms) t += x.bytes;
    return t;
  }
};

// One transformer layer, every tensor the backward pass reads, in Korthikanti's order.
Layer layer_terms(const Model& m, const ActivationConfig& c, bool moe) {
  const double s = c.seq, b = c.micro_batch, B = c.value_bytes;
  const double h = static_cast<double>(m.d_model), a = static_cast<double>(m.heads);
  const double sb = s * b;
  Layer L;
  auto add = [&](std::string name, std::string formula, double bytes) { L.terms.push_back({std::move(name), std::move(formula), bytes}); };

  // Attention block.
  add("attention norm input", "B·s·b·h", B * sb * h);
  add("QKV input (norm output)", "B·s·b·h", B * sb * h);
  double q_width = 0, k_width = 0, v_width = 0, o_width = 0;  // o: the attention output, a heads wide
  if (m.mla) {
    // DeepSeek-V2 §2.1: the compressed latents feed the up-projections; q, k, v are then
    // materialized per head as in standard attention.
    const MlaSpec& x = *m.mla;
    if (x.q_lora_rank > 0) add("q latent (W_UQ input)", "B·s·b·r_q", B * sb * static_cast<double>(x.q_lora_rank));
    add("kv latent (W_UKV input)", "B·s·b·r_kv", B * sb * static_cast<double>(x.kv_lora_rank));
    q_width = k_width = a * static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
    v_width = o_width = a * static_cast<double>(x.v_head_dim);
  } else {
    q_width = a * static_cast<double>(m.head_dim);
    k_width = v_width = static_cast<double>(m.kv_heads * m.head_dim);
    o_width = q_width;
  }
  add("Q", "B·s·b·a·d_head", B * sb * q_width);
  add("K", "B·s·b·kv·d_head", B * sb * k_width);
  add("V", "B·s·b·kv·d_head", B * sb * v_width);
  if (c.flash_attention) {
    // FlashAttention keeps only the per-row logsumexp (fp32) and recomputes the scores;
    // the dropout mask is regenerated from the RNG state (Dao et al. 2022 §3.1, Algorithm 2).
    add("softmax statistics (fp32 logsumexp)", "4·a·s·b", fp32_bytes * a * sb);
  } else {
    const double scores = a * s * s * b;
    add("softmax output", "B·a·s²·b", B * scores);
    L.s2_bytes += B * scores;
    if (c.dropout) {
      add("attention-probability dropout mask", "a·s²·b", mask_bytes * scores);
      add("attention-probability dropout output", "B·a·s²·b", B * scores);
      L.s2_bytes += (mask_bytes + B) * scores;
    }
  }
  add("output projection input", "B·s·b·a·d_v", B * sb * o_width);
  if (c.dropout) add("attention dropout mask", "s·b·h", mask_bytes * sb * h);

  // MLP block.
  add("MLP norm input", "B·s·b·h", B * sb * h);
  add("MLP input (norm output)", "B·s·b·h", B * sb * h);
  // Gated MLP: gate and up outputs, and their product (the down-projection input); the
  // activation of the gate is recomputed inside the fused kernel (Megatron bias_swiglu).
  const bool gated = is_gated(m.mlp);
  const double per_f = gated ? 3 : 2;  // stored f-wide tensors per MLP
  const char* f_formula = gated ? "3·B·s·b·f" : "2·B·s·b·f";
  const char* f_name = gated ? "gate, up and down-projection inputs" : "GeLU input and output";
  if (moe) {
    const MoeSpec& e = *m.moe;
    const double k = static_cast<double>(e.experts_per_token), f = static_cast<double>(e.d_ff_expert);
    add("router probabilities (fp32)", "4·s·b·E", fp32_bytes * sb * static_cast<double>(e.experts));
    add("routed expert inputs (top-k copies)", "k·B·s·b·h", k * B * sb * h);
    add(std::string("routed experts: ") + f_name, std::string("k·") + f_formula, k * per_f * B * sb * f);
    if (e.shared_experts > 0)
      add(std::string("shared experts: ") + f_name, std::string("n_shared·") + f_formula,
          static_cast<double>(e.shared_experts) * per_f * B * sb * static_cast<double>(shared_expert_width(e)));
  } else {
    add(f_name, f_formula, per_f * B * sb * static_cast<double>(m.d_ff));
  }
  if (c.dropout) add("MLP dropout mask", "s·b·h", mask_bytes * sb * h);
  return L;
}

}  // namespace

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

Recompute recompute_from_name(std::string_view name) {
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    if (recompute_name(r) == name) return r;
  throw Error("--recompute: unknown policy '" + std::string(name) + "'" +
              did_you_mean(name, {"none", "selective", "full"}) + " (expected none, selective or full)");
}

ActivationEstimate estimate_activations(const Model& m, const ActivationConfig& c) {
  if (!(c.micro_batch >= 1) || !std::isfinite(c.micro_batch) || c.micro_batch != std::floor(c.micro_batch))
    throw Error("--micro-batch must be a whole number ≥ 1");
  if (!(c.seq >= 1) || !std::isfinite(c.seq) || c.seq != std::floor(c.seq)) throw Error("--seq must be a whole number ≥ 1");
  if (!(c.value_bytes > 0)) throw Error("activation bytes per value must be positive");
  const double s = c.seq, b = c.micro_batch, h = static_cast<double>(m.d_model);
  ActivationEstimate e;

  const long long moe_layers = m.moe ? std::max(0LL, m.layers - m.moe->dense_layers) : 0;
  const long long dense_layers = m.layers - moe_layers;
  const Layer dense = layer_terms(m, c, false);
  const std::optional<Layer> moe = moe_layers > 0 ? std::optional<Layer>(layer_terms(m, c, true)) : std::nullopt;
  const Layer& largest = moe && moe->total() > dense.total() ? *moe : dense;
  e.layer_terms = largest.terms;
  e.layer_full_bytes = largest.total();

  auto stored = [&](const Layer& l) {
    switch (c.recompute) {
      case Recompute::none: return l.total();
      case Recompute::selective: return l.total() - l.s2_bytes;
      case Recompute::full: return c.value_bytes * s * b * h;  // the layer's input only
    }
    return l.total();
  };
  e.layer_stored_bytes = std::max(stored(dense), moe ? stored(*moe) : 0.0);
  e.layers_bytes = static_cast<double>(dense_layers) * stored(dense) + (moe ? static_cast<double>(moe_layers) * stored(*moe) : 0.0);
  // During the backward of one layer its activations exist again in full (Chen et al. 2016 §3).
  if (c.recompute == Recompute::full) e.recompute_working_bytes = largest.total();

  // Korthikanti §4.3: embedding dropout mask s·b·h; final norm and output projection inputs
  // 2·B·s·b·h; cross entropy on fp32 logits 4·s·b·v. With B = 2 that is 4·s·b·h·(1 + v/h) + s·b·h.
  e.embedding_bytes = c.dropout ? mask_bytes * s * b * h : 0;
  e.output_bytes = 2 * c.value_bytes * s * b * h;
  e.logits_bytes = fp32_bytes * s * b * static_cast<double>(m.vocab);
  e.total_bytes = e.layers_bytes + e.recompute_working_bytes + e.embedding_bytes + e.output_bytes + e.logits_bytes;

  e.approximations.push_back("no tensor, sequence or pipeline parallelism: every GPU holds a full micro-batch of every layer");
  if (m.moe)
    e.approximations.push_back("MoE: perfectly balanced routing, no capacity-factor padding or dropped tokens; every token's top-k expert copies kept");
  if (m.mla) e.approximations.push_back("MLA: q, k and v materialized per head after the up-projections; latent norms' inputs not counted");
  if (is_gated(m.mlp)) e.approximations.push_back("gated MLP: the gate's activation is recomputed in the fused kernel (Megatron bias_swiglu)");
  // Eager attention (Megatron's unfused softmax, Hugging Face "eager") applies a sliding window
  // as a mask on the full s×s scores, so the stored softmax output does not shrink; only a
  // windowed kernel (FlashAttention's window_size) saves work, and it stores no s² tensor at all.
  if (m.sliding_window > 0 && m.windowed_layers > 0 && !c.flash_attention && c.seq > static_cast<double>(m.sliding_window))
    e.approximations.push_back("sliding window: eager attention masks the full s×s scores, so windowed layers store as much as global ones");
  if (c.recompute == Recompute::selective && c.flash_attention)
    e.approximations.push_back("selective recomputation adds nothing to flash attention, which already recomputes the scores");
  return e;
}

double max_micro_batch(const Model& m, ActivationConfig c, double free_bytes) {
  if (!(free_bytes > 0)) return 0;
  c.micro_batch = 1;
  const double per_sample = estimate_activations(m, c).total_bytes;  // every term is linear in b
  return std::floor(free_bytes / per_sample);
}

}  // namespace napkin
