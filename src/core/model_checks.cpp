#include "core/model_checks.hpp"

#include <cstdio>

namespace napkin {
namespace {

std::string n(long long v) { return std::to_string(v); }

std::optional<ModelProblem> attention_problem(const Model& m) {
  if (m.kv_heads < 1 || m.heads % m.kv_heads != 0)
    return ModelProblem{"kv_heads", "must divide heads (" + n(m.heads) + "), found " + n(m.kv_heads)};
  if (m.mla) {
    // Multi-head latent attention (DeepSeek-V2 §2.1) caches one latent per token, shared by every
    // head: there are no KV-head groups to count (transformers' DeepseekV2Attention ignores
    // num_key_value_heads).
    if (m.kv_heads != m.heads)
      return ModelProblem{"kv_heads", "contradicts [mla]: latent attention has no KV-head groups (found " + n(m.kv_heads) +
                                          " of " + n(m.heads) + " heads); leave kv_heads out"};
    if (m.qk_norm != QkNorm::none) return ModelProblem{"qk_norm", "is not defined for MLA attention ([mla])"};
    // The sparse attention's indexer: all three of its sizes or none, and it reads the q latent.
    const MlaSpec& a = *m.mla;
    const int given = (a.index_heads > 0) + (a.index_head_dim > 0) + (a.index_topk > 0);
    if (given != 0 && given != 3)
      return ModelProblem{a.index_topk > 0 ? (a.index_heads > 0 ? "mla.index_head_dim" : "mla.index_heads") : "mla.index_topk",
                          "DeepSeek sparse attention needs index_heads, index_head_dim and index_topk together"};
    if (given == 3 && a.q_lora_rank <= 0)
      return ModelProblem{"mla.q_lora_rank", "must be above 0 with the sparse attention's indexer (it reads the q latent)"};
  }
  if (m.linear_attention) {
    const LinearAttentionSpec& a = *m.linear_attention;
    if (a.layers > m.layers) return ModelProblem{"linear_attention.layers", "exceeds layers (" + n(m.layers) + ")"};
    if (a.value_heads % a.key_heads != 0)
      return ModelProblem{"linear_attention.value_heads", "must be a multiple of key_heads (" + n(a.key_heads) + "): each q/k head serves value_heads/key_heads value heads"};
    if (m.mla) return ModelProblem{"linear_attention", "cannot be combined with [mla] (no such model is modelled)"};
    if (m.sliding_window > 0) return ModelProblem{"sliding_window", "cannot be combined with [linear_attention] (no such model is modelled)"};
  }
  return std::nullopt;
}

std::optional<ModelProblem> positions_problem(const Model& m) {
  if (m.rotary_fraction == 1.0) return std::nullopt;
  if (!(m.rotary_fraction > 0 && m.rotary_fraction <= 1)) return ModelProblem{"rotary_fraction", "must lie in (0, 1]"};
  if (m.positions != Positions::rotary) return ModelProblem{"rotary_fraction", "needs positions = \"rotary\""};
  // RoPE rotates dimensions in pairs (Su et al. 2021, RoFormer §3.2.2); GPT-NeoX rotates
  // int(head_dim · rotary_pct) of them (transformers' GPTNeoXRotaryEmbedding): fewer than two is
  // no rotary at all, and 1e-320 is a typo, not a model.
  if (m.rotary_fraction * static_cast<double>(m.head_dim) < 2) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3g of head_dim %lld rotates fewer than 2 dimensions (one pair)", m.rotary_fraction, m.head_dim);
    return ModelProblem{"rotary_fraction", buf};
  }
  return std::nullopt;
}

std::optional<ModelProblem> length_problem(const Model& m) {
  if (m.seq_len > m.context)
    return ModelProblem{"seq_len", "exceeds context (" + n(m.context) + "): the positions support no longer sequence"};
  if (m.windowed_layers > m.layers) return ModelProblem{"sliding_window_layers", "exceeds layers (" + n(m.layers) + ")"};
  if (m.windowed_layers < 0) return ModelProblem{"sliding_window_layers", "must not be negative"};
  if (m.windowed_layers > 0 && m.sliding_window <= 0) return ModelProblem{"sliding_window_layers", "given without sliding_window"};
  if (m.sliding_window > 0 && m.windowed_layers == 0) return ModelProblem{"sliding_window", "applies to no layer (sliding_window_layers is 0)"};
  return std::nullopt;
}

std::optional<ModelProblem> moe_problem(const Model& m) {
  if (!m.moe) return std::nullopt;
  const MoeSpec& e = *m.moe;
  if (e.experts < 1) return ModelProblem{"moe.experts", "must be at least 1"};
  if (e.experts_per_token < 1) return ModelProblem{"moe.experts_per_token", "must be at least 1"};
  if (e.experts_per_token > e.experts) return ModelProblem{"moe.experts_per_token", "exceeds experts (" + n(e.experts) + ")"};
  if (e.dense_layers < 0 || e.dense_layers >= m.layers)
    return ModelProblem{"moe.dense_layers", "must be fewer than layers (" + n(m.layers) + ")"};
  if (e.shared_expert_gate && e.shared_experts == 0) return ModelProblem{"moe.shared_expert_gate", "needs shared_experts ≥ 1"};
  return std::nullopt;
}

}  // namespace

std::optional<ModelProblem> model_problem(const Model& m) {
  for (auto check : {attention_problem, positions_problem, length_problem, moe_problem})
    if (auto p = check(m)) return p;
  return std::nullopt;
}

}  // namespace napkin
