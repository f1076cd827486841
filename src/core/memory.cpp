#include "core/memory.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace napkin {
namespace {

template <typename Table>
const auto& find_named(const Table& table, std::string_view name, const char* what, const char* flag) {
  for (const auto& entry : table)
    if (entry.name == name) return entry;
  std::vector<std::string> names;
  std::string all;
  for (const auto& entry : table) {
    names.emplace_back(entry.name);
    all += (all.empty() ? "" : ", ") + std::string(entry.name);
  }
  std::string hint = did_you_mean(name, names);
  if (hint.empty()) hint = "; known: " + all;
  throw Error(std::string(flag) + ": unknown " + what + " '" + std::string(name) + "'" + hint);
}

// Σ rows·cols and Σ (rows + cols) over a set of identical matrices.
struct MatrixSums {
  double elements = 0;
  double factored = 0;
  void add(double rows, double cols, double count = 1) {
    elements += count * rows * cols;
    factored += count * (rows + cols);
  }
};

void add_attention(const Model& m, MatrixSums& s) {
  const double d = static_cast<double>(m.d_model);
  const double h = static_cast<double>(m.heads);
  if (m.mla) {
    // DeepSeek-V2 §2.1: W_DQ, W_UQ, W_DKV (+ W_KR), W_UKV, W_O.
    const MlaSpec& a = *m.mla;
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      s.add(d, static_cast<double>(a.q_lora_rank));
      s.add(static_cast<double>(a.q_lora_rank), h * qk);
    } else {
      s.add(d, h * qk);
    }
    s.add(d, static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim));
    s.add(static_cast<double>(a.kv_lora_rank), h * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim));
    s.add(h * static_cast<double>(a.v_head_dim), d);
    return;
  }
  const double q = h * static_cast<double>(m.head_dim);
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  s.add(d, q);
  s.add(d, kv, 2);
  s.add(q, d);
  if (m.positions == Positions::relative) s.add(d, q);
}

void add_mlp(const Model& m, double hidden, double count, MatrixSums& s) {
  s.add(static_cast<double>(m.d_model), hidden, count * (is_gated(m.mlp) ? 3 : 2));
}

}  // namespace

const Optimizer& find_optimizer(std::string_view name) { return find_named(optimizers, name, "optimizer", "--optimizer"); }
const PrecisionRecipe& find_recipe(std::string_view name) { return find_named(recipes, name, "precision recipe", "--precision"); }

double adafactor_state_values_per_param(const Model& m) {
  MatrixSums s;
  const double d = static_cast<double>(m.d_model);
  s.add(static_cast<double>(m.vocab), d);
  if (m.positions == Positions::learned) s.add(static_cast<double>(m.context), d);
  if (!m.tied_embeddings) s.add(static_cast<double>(m.vocab), d);
  for (long long layer = 0; layer < m.layers; ++layer) {
    add_attention(m, s);
    if (is_moe_layer(m, layer)) {
      const MoeSpec& e = *m.moe;
      add_mlp(m, static_cast<double>(e.d_ff_expert), static_cast<double>(e.experts), s);
      add_mlp(m, static_cast<double>(shared_expert_width(e)), static_cast<double>(e.shared_experts), s);
      s.add(static_cast<double>(e.experts), d);  // router
    } else {
      add_mlp(m, static_cast<double>(m.d_ff), 1, s);
    }
  }
  const double total = count_params(m).total;
  if (!(total > 0)) throw Error("the model has no parameters");
  // Whatever is not in a matrix (biases, norm gains) keeps a full second moment.
  const double vectors = std::max(0.0, total - s.elements);
  return (s.factored + vectors) / total;
}

BytesPerParam bytes_per_param(const Optimizer& o, const PrecisionRecipe& r, std::optional<double> adafactor_values_per_param) {
  BytesPerParam b;
  b.weights = r.weight_bytes;
  b.grads = r.grad_bytes;
  b.master = r.master_bytes;
  b.optimizer_state_values = o.full_states;
  if (o.factored_second_moment) b.optimizer_state_values += adafactor_values_per_param.value_or(2 / adafactor_assumed_matrix_side);
  b.optimizer = b.optimizer_state_values * r.state_bytes + o.fixed_state_bytes;
  return b;
}

void validate(const Sharding& s) {
  if (s.gpus < 1) throw Error("--gpus must be at least 1, found " + std::to_string(s.gpus));
  if (s.zero < 0 || s.zero > 3) throw Error("--zero must be 0, 1, 2 or 3, found " + std::to_string(s.zero));
  if (s.zero > 0 && s.gpus == 1)
    throw Error("--zero " + std::to_string(s.zero) +
                " with --gpus 1 shards nothing and equals --zero 0; give --gpus N > 1 or drop --zero");
}

BytesPerParam per_gpu_bytes_per_param(const BytesPerParam& b, const Sharding& s) {
  validate(s);
  const double n = static_cast<double>(s.gpus);
  BytesPerParam g = b;
  if (s.zero >= 1) g.master /= n, g.optimizer /= n, g.optimizer_state_values /= n;
  if (s.zero >= 2) g.grads /= n;
  if (s.zero >= 3) g.weights /= n;
  return g;
}

double available_bytes(double memory_bytes, double reserve_bytes) {
  if (!(memory_bytes > 0) || !std::isfinite(memory_bytes)) throw Error("the hardware's memory_bytes must be positive");
  if (!(reserve_bytes >= 0) || !std::isfinite(reserve_bytes)) throw Error("--reserve must be a non-negative size");
  if (reserve_bytes >= memory_bytes)
    throw Error("--reserve (" + std::to_string(static_cast<long long>(reserve_bytes)) + " bytes) is not smaller than the GPU's memory (" +
                std::to_string(static_cast<long long>(memory_bytes)) + " bytes)");
  return memory_bytes - reserve_bytes;
}

MemoryPlan plan_memory(const BytesPerParam& bpp, const Sharding& s, double memory_bytes, double reserve_bytes,
                       std::optional<double> params, double activations_bytes) {
  MemoryPlan p;
  p.bytes_per_param = bpp;
  p.per_gpu_bytes_per_param = per_gpu_bytes_per_param(bpp, s);
  p.sharding = s;
  p.memory_bytes = memory_bytes;
  p.reserve_bytes = reserve_bytes;
  p.available_bytes = available_bytes(memory_bytes, reserve_bytes);
  if (!(activations_bytes >= 0) || !std::isfinite(activations_bytes)) throw Error("activation memory must be finite");
  p.activations_bytes = activations_bytes;
  // What is left for model states once activations are placed; held fixed as the model
  // grows, so with a model given this answers "how big could a model with these activations be".
  const double for_states = std::max(0.0, p.available_bytes - activations_bytes);
  p.max_params_single_gpu = for_states / bpp.total();
  p.max_params = for_states / p.per_gpu_bytes_per_param.total();
  if (params) {
    if (!(*params > 0) || !std::isfinite(*params)) throw Error("--params must be a positive number");
    p.params = params;
    const BytesPerParam& g = p.per_gpu_bytes_per_param;
    p.weights_bytes = g.weights * *params;
    p.grads_bytes = g.grads * *params;
    p.master_bytes = g.master * *params;
    p.optimizer_bytes = g.optimizer * *params;
  }
  p.total_bytes = p.weights_bytes + p.grads_bytes + p.master_bytes + p.optimizer_bytes + activations_bytes;
  p.headroom_bytes = p.available_bytes - p.total_bytes;
  p.fits = p.headroom_bytes >= 0;
  return p;
}

}  // namespace napkin
