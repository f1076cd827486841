#include <algorithm>
#include "core/model.hpp"

namespace napkin {
namespace {

double dbl(long long v) { return static_cast<double>(v); }

}  // namespace

double norm_params(const Model& m, long long width) {
  switch (m.norm) {
    case NormKind::layernorm: return 2.0 * dbl(width);  // gain and bias
    case NormKind::rmsnorm: return dbl(width);          // gain only
    case NormKind::nonparametric: return 0;             // OLMo-1
  }
  return 0;
}

double norm_params(const Model& m) { return norm_params(m, m.d_model); }

double attention_params_per_layer(const Model& m) {
  const double d = dbl(m.d_model);
  const double h = dbl(m.heads);
  if (m.mla) {
    // DeepSeek-V2/V3 (arXiv:2405.04434 §2.1): W_DQ, W_UQ (with q norm), W_DKV + W_KR, W_UK and W_UV, W_O.
    const MlaSpec& a = *m.mla;
    const double qk = dbl(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double q = a.q_lora_rank > 0 ? d * dbl(a.q_lora_rank) + dbl(a.q_lora_rank) + dbl(a.q_lora_rank) * h * qk : d * h * qk;
    const double kv = d * dbl(a.kv_lora_rank + a.qk_rope_head_dim) + dbl(a.kv_lora_rank) +
                      dbl(a.kv_lora_rank) * h * dbl(a.qk_nope_head_dim + a.v_head_dim);
    const double out = h * dbl(a.v_head_dim) * d;
    // The indexer (DeepSeek-V3.2-Exp inference/model.py, Indexer): wq_b from the q latent to
    // index_heads × index_head_dim, wk to one index_head_dim key, its LayerNorm (weight and bias),
    // and weights_proj, d_model -> index_heads.
    const double index = a.sparse() ? dbl(a.q_lora_rank) * dbl(a.index_heads * a.index_head_dim) + d * dbl(a.index_head_dim) +
                                          2 * dbl(a.index_head_dim) + d * dbl(a.index_heads)
                                    : 0;
    return q + kv + out + index;
  }
  // Every projection is sized by head_dim, never by d_model / heads (Gemma 7B: 16 × 256 = 4096 ≠ 3072).
  const double q_width = h * dbl(m.head_dim);
  const double kv_width = dbl(m.kv_heads) * dbl(m.head_dim);
  double p = d * q_width + 2 * d * kv_width + q_width * d;
  if (m.attention_output_gate) p += d * q_width;  // the gate's half of q_proj
  if (has_qkv_bias(m.bias)) p += q_width + 2 * kv_width;
  if (has_out_bias(m.bias)) p += d;
  // Transformer-XL relative attention (Dai et al. 2019, eq. in §3.3) projects the sinusoid
  // position encodings with its own W_{k,R} per layer: d_model x heads·head_dim. Chinchilla
  // and Gopher use it; without it Chinchilla 70B counts 64.7B instead of 70B.
  if (m.positions == Positions::relative) p += d * q_width;
  // QK-norm (Dehghani et al. 2023, "Scaling ViT to 22B", §3.1): Qwen3 norms each head's
  // q and k with one head_dim-wide norm; OLMo-2 norms the whole q and k projections.
  if (m.qk_norm == QkNorm::per_head) p += 2 * norm_params(m, m.head_dim);
  if (m.qk_norm == QkNorm::full) p += norm_params(m, m.heads * m.head_dim) + norm_params(m, m.kv_heads * m.head_dim);
  if (m.attention_sinks) p += h;  // one sink logit per head
  return p;
}

double linear_attention_params_per_layer(const Model& m) {
  if (!m.linear_attention) return 0;
  const LinearAttentionSpec& a = *m.linear_attention;
  const double d = dbl(m.d_model), qk = dbl(a.qk_width()), v = dbl(a.v_width()), vh = dbl(a.value_heads);
  return d * (2 * qk + 2 * v)                         // in_proj_qkvz
         + d * 2 * vh                                 // in_proj_ba
         + dbl(a.conv_channels()) * dbl(a.conv_kernel)  // depthwise conv1d, no bias
         + 2 * vh                                     // dt_bias, A_log
         + norm_params(m, a.value_head_dim)           // the gated RMSNorm
         + v * d;                                     // out_proj
}

double linear_attention_chunked_flops_per_token(const LinearAttentionSpec& a) {
  const double dk = dbl(a.key_head_dim), dv = dbl(a.value_head_dim), c = dbl(linear_attention_chunk);
  return dbl(a.value_heads) * (6 * dk * dv + 2 * c * (3 * dk + 2 * dv));
}

double linear_attention_recurrent_flops_per_token(const LinearAttentionSpec& a) {
  return dbl(a.value_heads) * 7 * dbl(a.key_head_dim) * dbl(a.value_head_dim);
}

double mlp_params(const Model& m, long long hidden) {
  const double d = dbl(m.d_model);
  const double f = dbl(hidden);
  const bool bias = has_mlp_bias(m.bias);
  if (is_gated(m.mlp)) return 3 * d * f + (bias ? 2 * f + d : 0);
  return 2 * d * f + (bias ? f + d : 0);
}

long long shared_expert_width(const MoeSpec& e) { return e.d_ff_shared > 0 ? e.d_ff_shared : e.d_ff_expert; }

namespace {
// The parts of one MoE layer's MLP every token passes through: shared experts, their gate,
// the router (and its bias).
double moe_always_active(const Model& m) {
  const MoeSpec& e = *m.moe;
  const double d = dbl(m.d_model);
  double p = dbl(e.shared_experts) * mlp_params(m, shared_expert_width(e));
  p += dbl(e.experts) * d;  // router: d_model -> experts, no bias (Fedus et al. 2021 §2.1)
  if (e.router_bias) p += dbl(e.experts);
  if (e.shared_expert_gate) p += d;
  return p;
}
}  // namespace

double moe_layer_params(const Model& m) {
  if (!m.moe) return 0;
  return dbl(m.moe->experts) * mlp_params(m, m.moe->d_ff_expert) + moe_always_active(m);
}

double moe_layer_active_params(const Model& m) {
  if (!m.moe) return 0;
  return dbl(m.moe->experts_per_token) * mlp_params(m, m.moe->d_ff_expert) + moe_always_active(m);
}

double mean_keys_per_query(double seq, long long window, bool causal) {
  const double w = dbl(window);
  if (!causal) return window > 0 && w < seq ? w : seq;
  if (window <= 0 || seq <= w) return seq / 2;
  return w - w * w / (2 * seq);
}

double causal_attention_share(const Model& m, double seq) {
  // DeepSeek sparse attention: query i attends min(i, k) keys, k²/2 + (L − k)·k of a causal L²/2.
  if (m.mla && m.mla->sparse() && seq > 0) {
    const double k = dbl(m.mla->index_topk);
    return seq <= k ? 1 : (2 * seq * k - k * k) / (seq * seq);
  }
  // Linear-attention layers do no quadratic attention at all (their core is its own term).
  if (m.linear_attention && m.layers > 0) return dbl(m.full_attention_layers()) / dbl(m.layers);
  if (m.sliding_window <= 0 || m.windowed_layers <= 0 || m.layers <= 0 || !(seq > 0)) return 1;
  const double windowed = dbl(std::min(m.windowed_layers, m.layers));
  const double global = dbl(m.layers) - windowed;
  return (global * (seq / 2) + windowed * mean_keys_per_query(seq, m.sliding_window, true)) / (dbl(m.layers) * (seq / 2));
}

bool is_moe_layer(const Model& m, long long layer) { return m.moe && layer >= m.moe->dense_layers; }

ParamCount count_params(const Model& m) {
  // Every layer of a kind is the same, so each sum is (count of layers) × (one layer): no
  // loop over layers, so a spec with 9e18 layers answers as fast as one with 2.
  ParamCount c;
  const double d = dbl(m.d_model);
  const double layers = dbl(m.layers);
  c.embedding = dbl(m.vocab) * d;
  if (m.positions == Positions::learned) c.embedding += dbl(m.context) * d;
  c.lm_head = m.tied_embeddings ? 0 : dbl(m.vocab) * d;
  if (m.lm_head_bias) c.lm_head += dbl(m.vocab);  // GPT-J's head has a bias even where tied weights would not
  c.attention = dbl(m.full_attention_layers()) * attention_params_per_layer(m) +
                dbl(m.linear_attention_layers()) * linear_attention_params_per_layer(m);
  c.norms = (dbl(m.norms_per_layer) * layers + 1) * norm_params(m);  // + the final norm
  const double moe_layers = dbl(m.moe_layers());
  const double dense_layers = layers - moe_layers;
  c.mlp = dense_layers * mlp_params(m, m.d_ff) + moe_layers * moe_layer_params(m);
  c.mlp_active = dense_layers * mlp_params(m, m.d_ff) + moe_layers * moe_layer_active_params(m);
  const double shared = c.embedding + c.lm_head + c.attention + c.norms;
  c.total = shared + c.mlp;
  c.active = shared + c.mlp_active;
  return c;
}

}  // namespace napkin
