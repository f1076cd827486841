#include "core/step_time.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/lora_memory.hpp"
#include "core/step_gemms.hpp"
#include "core/training.hpp"

namespace napkin {
namespace {

constexpr double fp32_bytes = 4;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

bool is_backward(std::string_view name) {
  for (std::string_view suffix : {".dgrad", ".wgrad", ".dq", ".dk", ".dp", ".dv"})
    if (ends_with(name, suffix)) return true;
  return false;
}

double d(long long v) { return static_cast<double>(v); }

// KV heads on one tensor-parallel rank: split while tp divides them, else one replicated.
double kv_heads_local(const Model& m, long long tp) {
  if (m.mla) return d(m.heads / tp);  // MLA materializes K and V per head
  return m.kv_heads % tp == 0 ? d(m.kv_heads / tp) : 1.0;
}

double qk_head_dim(const Model& m) { return m.mla ? d(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim) : d(m.head_dim); }
double v_head_dim(const Model& m) { return m.mla ? d(m.mla->v_head_dim) : d(m.head_dim); }

long long moe_layer_count(const Model& m) { return m.moe ? m.layers - m.moe->dense_layers : 0; }

// The products Transformer Engine's default userbuffers overlap pipelines with a reduce-scatter
// (proj_fprop, fc2_fprop) or runs beside a bulk transfer (qkv_dgrad, qkv_wgrad, fc1_dgrad,
// fc1_wgrad), on the SMs the communication leaves (transformer_engine/pytorch/module/base.py,
// initialize_ub: methods "pipeline" and "bulk", set_sm_margin). napkin's names: the output
// projection and the MLP's down product forward; the q/k/v and gate/up products backward.
bool te_overlap_margin_product(std::string_view name) {
  if (name == "attn.o_proj" || name == "mlp.down") return true;
  for (std::string_view base : {"attn.q_proj", "attn.k_proj", "attn.v_proj", "mlp.gate", "mlp.up"})
    if (name.substr(0, base.size()) == base && name.size() > base.size() && name[base.size()] == '.') return true;
  return false;
}

// Products TE's overlap launches per layer beyond the unsplit layer's (get_default_config:
// num_splits = tp for the four ring-exchange products, qkv_fprop, fc1_fprop, proj_dgrad,
// fc2_dgrad; 4 for the two pipelined ones, proj_fprop and fc2_fprop), each paying the GEMM
// curve's fixed cost per product.
double te_overlap_extra_products(long long tp, double forward_passes) {
  return forward_passes * (2.0 * d(tp - 1) + 2.0 * 3.0) + 2.0 * d(tp - 1);
}

// Tensor-parallel communication left on the critical path. Without overlap, all of it. With it
// (Transformer Engine userbuffers, NeMo's tp_comm_overlap; PyTorch async TP, torchtitan's
// enable_async_tensor_parallel; both need sequence parallelism), each all-gather → product and
// product → reduce-scatter is split into tp chunks that run beside the previous chunk's product
// (Wang et al. 2023, "Overlap communication with dependent computation via decomposition",
// ASPLOS, §4). What cannot hide: the last chunk of each reduce-scatter, 1/tp of it, with no product
// left beside it; and whatever exceeds the time of the products.
double tp_exposed_s(const CommTerm& tp, double products_s, long long tp_size, bool overlap) {
  if (!overlap || tp.calls == 0) return tp.total_s();
  const double tail_s = tp.total_s() / (2.0 * d(tp_size));  // half the traffic is reduce-scatter
  return tail_s + std::max(0.0, tp.total_s() - tail_s - products_s);
}

// FSDP / ZeRO-3 per micro-batch, layer by layer (PyTorch FSDP2 torch/distributed/fsdp/
// _fully_shard/_fsdp_param_group.py: the next layer's all-gather is issued while this one
// computes; DeepSpeed stage3 prefetches by stage3_prefetch_bucket_size). A layer's transfers hide
// while they are shorter than a layer's compute; the first layer's forward gather has nothing
// before it, and the last reduce-scatter of the backward (the first layer's) nothing after it.
// Without prefetch each gather waits on the stream before its layer runs.
double zero3_exposed_s(double gather_s, double reduce_s, double units, double fwd_s, double bwd_s, bool prefetch) {
  if (!prefetch) return units * 2 * gather_s + std::max(0.0, units * reduce_s - bwd_s);
  const double rest = (units - 1) / units;
  return gather_s + reduce_s + std::max(0.0, (units - 1) * gather_s - rest * fwd_s) +
         std::max(0.0, (units - 1) * (gather_s + reduce_s) - rest * bwd_s);
}

// Kernels launched per micro-batch on the slowest stage, each at least kernel_floor_s: forward,
// backward (twice the forward's), and the forward again under full recomputation.
double launch_floor_s(double layers, long long kernels_per_layer, bool recompute_full) {
  return layers * d(kernels_per_layer) * (1 + backward_kernels_over_forward + (recompute_full ? 1 : 0)) * kernel_floor_s;
}

}  // namespace

StepLora step_lora(const Model& m, const LoraSetup& s, const Optimizer& o) {
  StepLora r;
  r.on = true;
  r.rank = d(s.rank);
  const double moe_layers = d(m.moe_layers()), dense_layers = d(m.layers) - moe_layers;
  double per_token = 0;
  for (bool moe_layer : {false, true}) {
    const double n = moe_layer ? moe_layers : dense_layers;
    if (n <= 0) continue;
    for (const Projection& p : lora_projections(m, moe_layer)) {
      if ((p.targets & s.targets.mask) == 0) continue;
      const double share = p.expert ? d(m.moe->experts_per_token) / d(m.moe->experts) : 1.0;  // even routing
      r.adapters.push_back({p.in, p.out, share, n * p.count});
      per_token += n * p.count * share * r.rank * (p.in + p.out);
    }
  }
  r.adapter_flops_per_token = lora_adapter_flops_per_param * per_token;
  const LoraStates st = lora_states(m, s, o, 1, 0);
  r.adapter_params = st.adapter_params;
  r.base_bytes = st.base_bytes;
  r.dequant_bytes_per_pass = dequant_bytes_per_pass(m, s.base);
  const double ab = s.lib.adapter_bytes;
  r.adapter_bytes.weights = ab;
  r.adapter_bytes.grads = ab;
  r.adapter_bytes.optimizer = st.adapter_params > 0 ? st.adapter_optimizer_bytes / st.adapter_params : 0;
  return r;
}

double CommTerm::wire_bytes() const {
  const double n = d(group.size);
  if (group.size <= 1) return 0;
  const double factor = collective == Collective::all_reduce ? 2 * (n - 1) / n : collective == Collective::send_recv ? 1 : (n - 1) / n;
  return calls * bytes * factor;
}

void apply_framework(const Framework& f, StepSetup& s) {
  s.tp_comm_overlap = f.tp_comm_overlap;
  s.tp_overlap_comm_sms = f.tp_overlap_comm_sms;
  s.compiled = f.compiled;
  s.overlap_grad_reduce = f.overlap_grad_reduce;
  s.overlap_param_gather = f.overlap_param_gather;
  s.fused_grad_accumulation = f.fused_grad_accumulation;
  s.zero3_prefetch = f.zero3_prefetch;
  s.zero3_copies = f.zero3_copies;
  s.selective = f.selective;
  s.kernels_per_layer = f.kernels_per_layer;
  s.moe_kernels_per_layer = f.moe_kernels_per_layer;
  s.loss_bytes_per_logit = f.loss_bytes_per_logit;
  s.overlap_p2p_comm = f.overlap_p2p_comm;
  s.ep_dispatcher = f.ep_dispatcher;
  s.ep_comm_overlap = f.ep_comm_overlap;
  s.ep_comm_sms = f.ep_comm_sms;
  s.fp8_lm_head = f.fp8_lm_head;
  s.moe_bias_clamp_eager = f.moe_bias_clamp_eager;
  if (f.grad_reduce_bytes > 0) s.grad_reduce_bytes = f.grad_reduce_bytes;
}

std::optional<std::string> batch_problem(const Layout& l, long long global_batch) {
  const long long per_step = l.dp * l.micro_batch;
  if (global_batch < 1) return "--global-batch must be at least 1, found " + std::to_string(global_batch);
  if (global_batch % per_step != 0)
    return "--global-batch " + std::to_string(global_batch) + " is not divisible by dp × micro-batch = " + std::to_string(l.dp) +
           " × " + std::to_string(l.micro_batch) + " = " + std::to_string(per_step);
  const long long m = global_batch / per_step;
  if (l.interleave > 1 && m % l.pp != 0)
    return "--interleave " + std::to_string(l.interleave) + " needs the " + std::to_string(m) +
           " micro-batches per step to be a multiple of --pp " + std::to_string(l.pp) + " (Megatron's interleaved schedule)";
  return std::nullopt;
}

LayerCost layer_cost(const Model& m, const Layout& l, const StepSetup& s) {
  if (l.cp > 1 && !s.flash_attention)
    throw Error("--cp " + std::to_string(l.cp) + " needs flash attention (ring attention passes K and V blocks between flash kernels); drop --no-flash-attention");
  LayerCost c;
  const long long tp = l.tp;
  const double B = s.activation_bytes, h = d(m.d_model), L = d(m.layers);
  const long long local_seq = s.seq / l.cp;
  c.tokens = d(l.micro_batch) * d(local_seq);
  const double T = c.tokens;
  const double heads_local = d(m.heads / tp);

  // Matrix products of one micro-batch on this GPU (calibrate's list: same shapes).
  const std::vector<Gemm> gemms = step_gemms(m, StepConfig{l.micro_batch, local_seq, tp, l.etp});
  GemmTimeModel gemm = s.gemm;  // under a power cap the curve's compute roof is lower (core/power.hpp)
  gemm.peak_flops_per_s *= s.compute_fraction;
  GemmTimeModel bf16 = s.bf16_under_fp8;
  bf16.peak_flops_per_s *= s.compute_fraction;
  double attn_fwd_gemm = 0, attn_bwd_gemm = 0;
  // Megatron-Core's recompute modules replay these products' forward (core/activations.hpp).
  const bool modules = l.recompute == Recompute::selective && s.selective == SelectiveRecompute::attention_core;
  const RecomputeModules& rm = s.recompute_modules;
  const auto replayed = [&](const std::string& name) {
    return modules && ((rm.mla_up_proj && (name == "attn.q_up" || name == "attn.kv_up")) || (rm.mlp && starts_with(name, "mlp.")) ||
                       (rm.shared_experts && starts_with(name, "moe.shared_expert.")));
  };
  GemmTimeModel narrow_experts = gemm;
  narrow_experts.weight_value_bytes = s.expert_weight_value_bytes;
  narrow_experts.peak_efficiency *= s.expert_compute_efficiency;
  for (const Gemm& g : gemms) {
    const bool backward = is_backward(g.name);
    // LoRA: a frozen matrix needs no weight gradient; its input gradient still flows.
    if (s.lora.on && ends_with(g.name, ".wgrad")) continue;
    long long gm = g.m, gk = g.k;
    double calls = d(g.count) * d(g.batch);
    // A layer's experts run as one grouped GEMM, so the `count` expert products of an entry are
    // count / experts launches, each paying the curve's launch and tail cost once. Other products
    // keep one launch cost per member, batched attention's heads included: that is how the A100
    // Megatron rows (non-flash attention, one batched GEMM over heads) were validated, and sharing
    // it over the heads reads them 3-17% fast (docs/METHODOLOGY.md §6.2).
    const bool expert = starts_with(g.name, "moe.expert.") && m.moe;
    const double launches = expert ? d(g.count) / d(m.moe->experts) : calls;
    // Expert parallelism: each GPU runs experts/ep experts on the tokens of ep ranks, so the
    // token dimension grows ep-fold (k for the weight gradient, m otherwise) and the count shrinks.
    if (l.ep > 1 && starts_with(g.name, "moe.expert.")) {
      if (ends_with(g.name, ".wgrad")) gk *= l.ep;
      else gm *= l.ep;
      calls /= d(l.ep);
    }
    // The dense product's time: a non-flash kernel computes the masked half too.
    const bool fp8_expert = expert && s.fp8_casts && bf16.peak_flops_per_s > 0;
    // The LM head stays in 16 bits under an fp8 recipe unless the framework converts it (fp8_lm_head).
    const bool bf16_head = starts_with(g.name, "lm_head") && s.fp8_casts && !s.fp8_lm_head && bf16.peak_flops_per_s > 0;
    const double t = fp8_expert                 ? fp8_expert_time_over_bf16 * bf16.grouped_time_s(gm, g.n, gk, calls, launches)
                     : bf16_head                ? bf16.grouped_time_s(gm, g.n, gk, calls, launches)
                     : expert && !backward && s.expert_weight_value_bytes > 0 ? narrow_experts.grouped_time_s(gm, g.n, gk, calls, launches)
                                                : gemm.grouped_time_s(gm, g.n, gk, calls, launches);
    if (starts_with(g.name, "attn.scores") || starts_with(g.name, "attn.context")) {
      (backward ? attn_bwd_gemm : attn_fwd_gemm) += t;
    } else if (starts_with(g.name, "lm_head")) {
      (backward ? c.head_bwd_s : c.head_fwd_s) += t;
    } else {
      (backward ? c.gemm_bwd_s : c.gemm_fwd_s) += t;
      if (starts_with(g.name, "attn.")) (backward ? c.attn_gemm_bwd_s : c.attn_gemm_fwd_s) += t;
      if (tp > 1 && te_overlap_margin_product(g.name)) (backward ? c.tp_margin_bwd_s : c.tp_margin_fwd_s) += t;
      // Under expert parallelism each call is ep times the tokens (gm) for 1/ep of the calls: the
      // same FLOPs as without it.
      if (!backward) c.gemm_fwd_flops += g.flops * (calls / (d(g.count) * d(g.batch))) * (d(gm) / d(g.m)) * (d(gk) / d(g.k));
      if (!backward && replayed(g.name)) {
        c.module_recompute_fwd_s += t;
        c.module_recompute_fwd_flops += g.flops * (calls / (d(g.count) * d(g.batch))) * (d(gm) / d(g.m)) * (d(gk) / d(g.k));
      }
      // fp8 products: the activation going in is cast (with a transposed copy for the weight
      // gradient) in the forward, the gradient coming out in the backward (fp8_casts_bytes_per_value).
      if (s.fp8_casts && !backward) {
        // Projections fed the same input (k and v beside q, gate beside up, MLA's kv_down beside
        // q_down) are one fused module in TE: that input is cast once.
        const bool shared_input = ends_with(g.name, ".k_proj") || ends_with(g.name, ".v_proj") || ends_with(g.name, ".gate") || g.name == "attn.kv_down";
        if (!shared_input) c.fp8_cast_fwd_bytes += calls * d(gm) * d(gk) * s.cast_bytes_per_value;
        c.fp8_cast_bwd_bytes += calls * d(gm) * d(g.n) * s.cast_bytes_per_value;
      }
    }
  }
  c.fp8_cast_fwd_bytes /= L;
  c.fp8_cast_bwd_bytes /= L;
  if (s.lora.on) {
    // The adapters' products, timed like any other (the same GEMM curve): forward x·A (rows×r×in)
    // and (x·A)·B (rows×out×r); backward, for B its input gradient dY·Bᵀ and weight gradient
    // (x·A)ᵀ·dY, for A its input gradient and weight gradient xᵀ·d(x·A) (Hu et al. 2021 §4.1).
    const auto R = static_cast<long long>(std::llround(s.lora.rank));
    for (const StepLora::Adapter& a : s.lora.adapters) {
      const long long rows = std::max(1LL, std::llround(a.rows * T));
      const auto in = static_cast<long long>(std::llround(a.in)), out = static_cast<long long>(std::llround(a.out));
      c.adapter_fwd_s += a.calls * (gemm.time_s(rows, R, in) + gemm.time_s(rows, out, R));
      c.adapter_bwd_s += a.calls * (gemm.time_s(rows, R, out) + gemm.time_s(R, out, rows) + gemm.time_s(rows, in, R) +
                                    gemm.time_s(in, R, rows));
      c.gemm_fwd_flops += a.calls * 2 * d(rows) * d(R) * (a.in + a.out);
    }
    c.gemm_fwd_s += c.adapter_fwd_s;
    c.gemm_bwd_s += c.adapter_bwd_s;
    c.adapter_fwd_s /= L;
    c.adapter_bwd_s /= L;
  }
  c.gemm_fwd_s /= L;
  c.gemm_bwd_s /= L;
  c.attn_gemm_fwd_s /= L;
  c.attn_gemm_bwd_s /= L;
  c.gemm_fwd_flops /= L;
  c.module_recompute_fwd_s /= L;
  c.module_recompute_fwd_flops /= L;
  c.tp_margin_fwd_s /= L;
  c.tp_margin_bwd_s /= L;

  const double bw = s.memory_bandwidth_bytes_per_s * s.mbu;
  // Attention core: useful (causal) forward FLOPs of s/cp queries against all s keys; windowed
  // layers (Gemma 2's local ones, Mistral 7B) against at most their window, which a windowed
  // kernel (FlashAttention's window_size) skips: the layers' mean share (causal_attention_share).
  c.attention_fwd_flops = d(l.micro_batch) * heads_local * d(local_seq) * d(s.seq) * (qk_head_dim(m) + v_head_dim(m)) *
                          (s.flash_attention ? causal_attention_share(m, d(s.seq)) : 1.0);
  // DeepSeek sparse attention's indexer scores every earlier token (causal, the half of s²), with
  // index_heads products of index_head_dim a key, on every tensor rank (vLLM's Indexer: "no tensor
  // parallel, just replicated"), in FP8 (DeepGEMM's fp8_mqa_logits): at twice the rate the
  // attention is priced at, so half its FLOPs count here (sparse_index_flops_weight).
  if (m.mla && m.mla->sparse())
    c.attention_fwd_flops += sparse_index_flops_weight * d(l.micro_batch) * d(local_seq) * d(s.seq) * d(m.mla->index_heads * m.mla->index_head_dim);
  // The attention kernels' peak (bf16 under an fp8 recipe), under a power cap at its fraction.
  const double attention_rate = (s.attention_peak_flops_per_s > 0 ? s.attention_peak_flops_per_s : s.peak_flops_per_s) * s.compute_fraction;
  if (s.flash_attention) {
    // At the model's head size (head_dim_rate_factor: a head of 64 runs slower than the curves' 128).
    FlashRate rate = s.flash_rate;
    rate.head_dim = qk_head_dim(m);
    c.attention_fwd_s = flash_attention_s(rate, false, c.attention_fwd_flops, attention_rate, d(s.seq), l.cp);
    c.attention_bwd_s = flash_attention_s(rate, true, c.attention_fwd_flops, attention_rate, d(s.seq), l.cp);
    c.attention_fwd_efficiency = c.attention_fwd_flops / (attention_rate * c.attention_fwd_s);
    c.attention_bwd_efficiency = flash_backward_over_forward * c.attention_fwd_flops / (attention_rate * c.attention_bwd_s);
  } else {
    // Scaled-masked softmax reads and writes a·s scores per token; dropout on the
    // probabilities reads, writes, and stores a 1-byte mask.
    const double scores = heads_local * d(s.seq) * T;
    const double bytes = 2 * B * scores + (s.dropout ? (2 * B + 1) * scores : 0);
    c.attention_core_memory_fwd_s = bytes / bw;
    c.attention_fwd_s = attn_fwd_gemm / L + c.attention_core_memory_fwd_s;
    c.attention_bwd_s = attn_bwd_gemm / L + memory_bound_backward_over_forward * c.attention_core_memory_fwd_s;
  }
  // A hybrid's Gated DeltaNet layers: the chunked delta rule (flash-linear-attention's
  // chunk_gated_delta_rule, which vLLM, SGLang and transformers call), per token and value head on
  // this rank, over the layers' share, at the rate those kernels were measured at.
  if (m.linear_attention) {
    c.linear_attention_fwd_flops = d(m.linear_attention->layers) / L * d(l.micro_batch) * d(local_seq) *
                                   linear_attention_chunked_flops_per_token(*m.linear_attention) / d(tp);
    c.linear_attention_fwd_s = c.linear_attention_fwd_flops / (attention_rate * linear_attention_fwd_efficiency);
    c.linear_attention_bwd_s = linear_attention_backward_over_forward * c.linear_attention_fwd_flops / (attention_rate * linear_attention_bwd_efficiency);
    c.attention_fwd_s += c.linear_attention_fwd_s;
    c.attention_bwd_s += c.linear_attention_bwd_s;
    c.attention_fwd_flops += c.linear_attention_fwd_flops;
  }

  // Elementwise work per layer, forward. h-wide tensors are replicated on every tensor-parallel
  // rank unless sequence parallelism splits them (Korthikanti et al. 2022 §4.2.2).
  const double h_tokens = l.sequence_parallel ? T / d(tp) : T;
  const double mask = s.dropout ? 1 : 0;
  // Two norms (read + write) and two residual adds (read two, write one), each add with its
  // dropout mask.
  double bytes = (2 * 2 * B + 2 * (3 * B + mask)) * h_tokens * h;
  if (m.positions == Positions::rotary || m.mla) {
    const double rope_dim = m.mla ? d(m.mla->qk_rope_head_dim) : d(m.head_dim);
    bytes += 2 * B * T * (heads_local + (m.mla ? 1.0 : kv_heads_local(m, tp))) * rope_dim;
  }
  const double per_f = is_gated(m.mlp) ? 3 : 2;  // GeLU reads and writes f; SwiGLU/GeGLU read 2f, write f
  const long long moe_layers = moe_layer_count(m);
  // The MLP's activated width per token on this rank, averaged over the layers.
  double moe_width = 0;
  if (m.moe) moe_width = d(m.moe->experts_per_token) * d(m.moe->d_ff_expert) + d(m.moe->shared_experts) * d(shared_expert_width(*m.moe));
  const double mlp_width = (d(m.layers - moe_layers) * d(m.d_ff) + d(moe_layers) * moe_width) / L / d(tp);
  bytes += per_f * B * T * mlp_width;
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    bytes += d(moe_layers) / L * (4 * B * d(e.experts_per_token) * h_tokens * h  // permute and unpermute the top-k copies
                                  + 2 * fp32_bytes * T * d(e.experts));         // router softmax
  }
  c.memory_fwd_bytes = bytes;
  c.memory_fwd_s = bytes / bw;
  if (modules) {
    // The elementwise work the replayed modules redo, per layer on average: rotary on the rebuilt
    // q and k (mla_up_proj), the dense MLP's and the experts' activations (mlp, moe_act, shared
    // experts), the separate norms (layernorm: MLA's input norm, MoE layers' pre-MLP norm).
    double redo = 0;
    if (rm.mla_up_proj && m.mla) redo += 2 * B * T * (heads_local + 1.0) * d(m.mla->qk_rope_head_dim);
    if (rm.mlp) redo += per_f * B * T * d(m.layers - moe_layers) * d(m.d_ff) / L / d(tp);
    if (m.moe && rm.moe_act) redo += per_f * B * T * d(moe_layers) * d(m.moe->experts_per_token) * d(m.moe->d_ff_expert) / L / d(tp);
    if (m.moe && rm.shared_experts)
      redo += per_f * B * T * d(moe_layers) * d(m.moe->shared_experts) * d(shared_expert_width(*m.moe)) / L / d(tp);
    if (rm.layernorm) redo += 2 * B * h_tokens * h * ((m.mla ? 1.0 : 0.0) + d(moe_layers) / L);
    c.module_recompute_fwd_s += redo / bw;
  }
  if (!s.compiled) {
    // Eager PyTorch's extra traffic beyond the fused kernels (the constants' derivation is in
    // step_time.hpp): RMSNorm's chain of fp32 ops, a gated MLP's separate activation and product,
    // rotary embeddings' casts; LayerNorm, GeLU and residual adds are single kernels either way.
    const EagerChains chains = eager_chains(m);
    const double norm_extra = chains.rmsnorm ? eager_rmsnorm_extra_fp32_bytes + 2 * B : 0;
    double eager = 2 * norm_extra * h_tokens * h;
    if (chains.gated_mlp) eager += eager_gated_extra_activations * B * T * mlp_width;
    if (chains.rotary) {
      const double rope_dim = m.mla ? d(m.mla->qk_rope_head_dim) : d(m.head_dim);
      eager += eager_rotary_extra_bytes * T * (heads_local + (m.mla ? 1.0 : kv_heads_local(m, tp))) * rope_dim;
    }
    c.eager_fwd_s = eager / bw;
    c.head_eager_s = (1 + memory_bound_backward_over_forward) * norm_extra * h_tokens * h / bw;  // the final norm
  }
  c.memory_bwd_s = memory_bound_backward_over_forward * c.memory_fwd_s;
  if (s.moe_bias_clamp_eager && has_moe_eager_ops(m)) {
    // A rank's experts see its tokens' top-k copies, times etp / tp: with the experts split over
    // tp (etp = tp) the tensor-parallel group's tokens are gathered first, at 1/etp of the width.
    const double etp = d(l.expert_tp());
    MoeEagerShape x;
    x.rows = T * d(m.moe->experts_per_token) * etp / d(tp);
    x.hidden = h;
    x.fc1_half = d(m.moe->d_ff_expert) / etp;
    x.local_experts = d(m.moe->experts) / d(l.ep);
    x.value_bytes = B;
    c.moe_eager = moe_eager_cost(m, x, bw, kernel_floor_s);
    const double share = d(moe_layer_count(m)) / L;
    c.moe_eager_fwd_s = share * c.moe_eager.fwd_s;
    c.moe_eager_bwd_s = share * c.moe_eager.bwd_s;
    if (modules && rm.moe_act) c.moe_eager_replay_s = share * c.moe_eager.replay_s;
  }
  c.memory_fwd_s += c.fp8_cast_fwd_bytes / bw;
  c.memory_bwd_s += c.fp8_cast_bwd_bytes / bw;

  // Final norm (forward, and twice that backward), and the cross entropy over the vocab-parallel
  // logits: the framework's bytes a logit, both directions (Framework::loss_bytes_per_logit).
  const double vocab_local = std::ceil(d(m.vocab) / d(tp));
  const double norm_bytes = 2 * B * h_tokens * h;
  c.head_memory_s = ((1 + memory_bound_backward_over_forward) * norm_bytes + s.loss_bytes_per_logit * T * vocab_local) / bw;
  if (l.mtp_layers > 0) {
    // An MTP layer's input projection (Megatron-Core MultiTokenPredictionLayer.eh_proj, column
    // parallel, 2h → h) forward, input gradient and weight gradient; its block is one more layer
    // (stage_layers) and its loss another pass of the head (mtp_heads below).
    const auto hl = static_cast<long long>(m.d_model / tp), h2 = 2 * m.d_model, rows = static_cast<long long>(T);
    c.mtp_proj_fwd_s = gemm.time_s(rows, hl, h2);
    c.mtp_proj_bwd_s = gemm.time_s(rows, h2, hl) + gemm.time_s(h2, hl, rows);
  }
  return c;
}

StepTime step_time(const Model& m, const Layout& l, const StepSetup& s) { return step_time(m, l, s, layer_cost(m, l, s)); }

EagerChains eager_chains(const Model& m) {
  return {m.norm == NormKind::rmsnorm, is_gated(m.mlp), m.positions == Positions::rotary || m.mla.has_value()};
}

bool uses_measured_curve(const StepTime& t, const Network& net, const MeasuredCurve& curve) {
  for (const CommTerm* c : {&t.tp, &t.moe_tp, &t.cp, &t.ep, &t.pp, &t.dp_grad_bucket, &t.dp_grads, &t.dp_params, &t.expert_grads, &t.expert_params})
    if (c->calls > 0 && c->bytes > 0 && measured_curve(net, c->collective, c->group) == &curve) return true;
  return false;
}

namespace {
// Which stage the step is priced on: chosen by layers and the head (auto), or forced.
enum class SlowestStage { automatic, last, fullest };
StepTime step_time_on(const Model& m, const Layout& l, const StepSetup& s, const LayerCost& c, SlowestStage pick);

// The stages that can be the slowest: the first, the fullest other (`second`) and the last.
struct PipelineStages {
  StageLayers first, second, last;
  // Of stages with as many layers, the one with more MoE layers is slower (their token dispatch;
  // DeepSeek-V3's MoE and dense layers compute alike).
  static bool heavier(const StageLayers& a, const StageLayers& b) {
    return a.layers != b.layers ? a.layers > b.layers : a.moe_layers > b.moe_layers;
  }
  const StageLayers& fullest() const { return heavier(second, first) ? second : first; }
};

PipelineStages pipeline_stages(const Model& m, const Layout& l) {
  PipelineStages p;
  p.first = stage_layers(m, l, 0), p.last = stage_layers(m, l, l.pp - 1);
  p.second = l.pp > 2 ? stage_layers(m, l, 1) : p.first;
  // Where stages differ beyond the first two (leading dense layers) or a layout is given in full,
  // every middle stage is weighed.
  if (l.pipeline_layout || (m.moe && m.moe->dense_layers > 0))
    for (long long i = 2; i + 1 < l.pp; ++i)
      if (const StageLayers si = stage_layers(m, l, i); PipelineStages::heavier(si, p.second)) p.second = si;
  return p;
}

// The LM head and loss, once and once more per MTP layer, with the MTP layers' input projections.
double last_stage_head_s(const Layout& l, const LayerCost& c) {
  const double mtp = d(l.mtp_layers);
  return (1 + mtp) * (c.head_fwd_s + c.head_bwd_s + c.head_memory_s) + mtp * (c.mtp_proj_fwd_s + c.mtp_proj_bwd_s);
}

// By layer counts: the last stage's layers and head against the fullest other's layers.
bool last_slowest_by_layers(const PipelineStages& p, double layer_s, double head_s) {
  return d(p.last.layers) * layer_s + head_s >= d(p.fullest().layers) * layer_s;
}
}  // namespace

// The choice by layer counts misses what differs per MoE layer (the token dispatch, the experts'
// gathers): with MoE layers, the step is priced on the last stage and on the fullest other, and
// the slower is the step.
StepTime step_time(const Model& m, const Layout& l, const StepSetup& s, const LayerCost& c) {
  if (!m.moe || l.pp == 1) return step_time_on(m, l, s, c, SlowestStage::automatic);
  StepTime on_last = step_time_on(m, l, s, c, SlowestStage::last);
  StepTime on_other = step_time_on(m, l, s, c, SlowestStage::fullest);
  return on_other.step_time_s > on_last.step_time_s ? on_other : on_last;
}

namespace {
StepTime step_time_on(const Model& m, const Layout& l, const StepSetup& s, const LayerCost& c, SlowestStage pick) {
  if (auto problem = batch_problem(l, s.global_batch)) throw Error(*problem);
  StepTime r;
  r.layer = c;
  const double mb = d(s.global_batch / (l.dp * l.micro_batch));
  r.micro_batches = s.global_batch / (l.dp * l.micro_batch);
  const double B = s.activation_bytes, h = d(m.d_model), L = d(m.layers);
  const Network& net = s.net;

  // Communication per micro-batch.
  const double recompute_full = l.recompute == Recompute::full ? 1 : 0;
  // torchtitan's op-level selective recomputation saves the output of every op in its save list
  // (torchtitan/distributed/activation_checkpoint.py, _save_list: mm, the SDPA kernels,
  // _c10d_functional.reduce_scatter_tensor) and replays every other op in the backward. The
  // tensor-parallel all-gather (sequence parallelism) or all-reduce (without it) is not in the
  // list, so the backward replays the layer's two of them: with sequence parallelism two all-gathers,
  // about one reduce-scatter + all-gather pair of the same bytes; without it two all-reduces.
  const double tp_replayed = l.recompute == Recompute::selective && s.selective == SelectiveRecompute::every_other_matmul
                                 ? (l.sequence_parallel ? 1 : 2)
                                 : 0;
  // The slowest stage: an uneven split (stage_layers, pipeline_split) gives the first stages one
  // layer more, or the edge stages one layer fewer (the embedding's and the loss's places, then
  // stage 1 is the fullest); the last stage also runs the LM head.
  const PipelineStages stages = pipeline_stages(m, l);
  const StageLayers &first = stages.first, &second = stages.second, &last = stages.last, &fullest = stages.fullest();
  const double layer_s = c.gemm_fwd_s + c.gemm_bwd_s + c.attention_fwd_s + c.attention_bwd_s + c.memory_fwd_s + c.memory_bwd_s;
  // The last stage runs the LM head and loss once, and once more for each MTP layer.
  const double mtp = d(l.mtp_layers), heads = 1 + mtp;
  const double head_s = last_stage_head_s(l, c);
  const bool last_is_slowest = pick == SlowestStage::automatic ? last_slowest_by_layers(stages, layer_s, head_s) : pick == SlowestStage::last;
  const StageLayers& slowest = last_is_slowest ? last : fullest;
  const double layers = d(slowest.layers);
  r.stage_layers = slowest.layers;
  r.head_on_slowest = last_is_slowest;
  const double moe_layers_here = d(slowest.moe_layers);

  if (l.tp > 1) {
    // Megatron: two all-reduces of the layer's b·s·h output forward (attention and MLP), two
    // of the input gradient backward, two more when full recomputation replays the forward.
    // Sequence parallelism swaps each for a reduce-scatter + all-gather of the same bytes.
    r.tp.group = place_group(1, l.tp, net.domain_gpus);
    r.tp.bytes = c.tokens * h * B;
    r.tp.collective = l.sequence_parallel ? Collective::reduce_scatter : Collective::all_reduce;
    r.tp.time_per_call_s = l.sequence_parallel ? collective_time_s(Collective::reduce_scatter, r.tp.bytes, r.tp.group, net) +
                                                     collective_time_s(Collective::all_gather, r.tp.bytes, r.tp.group, net)
                                               : collective_time_s(Collective::all_reduce, r.tp.bytes, r.tp.group, net);
    r.tp.calls = layers * (4 + 2 * recompute_full + tp_replayed);
    if (m.moe && moe_layers_here > 0) {
      // A MoE layer's MLP half has no dense gather and scatter: Megatron-Core's alltoall token
      // dispatcher (transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher) routes each
      // rank's own tokens, sends them over the expert group, then all-gathers the dispatched top-k
      // copies over the tensor-parallel group (dispatch_postprocess:
      // gather_from_sequence_parallel_region) for the tensor-parallel experts, and reduce-scatters
      // the experts' output back (combine_preprocess). k times the dense pair's bytes, and outside
      // Transformer Engine's userbuffers overlap, which wraps the dense layers' linear modules only.
      // Shared experts keep the dense pair beside it.
      // With the experts' own tensor-parallel degree etp below tp (parallel folding), the
      // gather and scatter run over the etp ranks only, on their share of the tokens: none at etp 1.
      const double moe_pairs = moe_layers_here * (2 + recompute_full);
      if (m.moe->shared_experts == 0) r.tp.calls -= moe_pairs;
      const long long etp = l.expert_tp();
      if (etp > 1) {
        r.moe_tp.group = place_group(1, etp, net.domain_gpus);
        r.moe_tp.collective = Collective::all_gather;
        r.moe_tp.bytes = d(m.moe->experts_per_token) * c.tokens * h * B * d(etp) / d(l.tp);
        r.moe_tp.time_per_call_s = collective_time_s(Collective::all_gather, r.moe_tp.bytes, r.moe_tp.group, net) +
                                   collective_time_s(Collective::reduce_scatter, r.moe_tp.bytes, r.moe_tp.group, net);
        r.moe_tp.calls = moe_pairs;
      }
    }
  }
  r.tp_exposed_s = tp_exposed_s(r.tp, layers * ((1 + recompute_full) * c.gemm_fwd_s + c.gemm_bwd_s), l.tp,
                                s.tp_comm_overlap && l.sequence_parallel);
  double cp_fwd_exposed = 0, cp_bwd_exposed = 0;
  if (l.cp > 1) {
    // Ring attention (Megatron/TE context parallelism): cp−1 steps each passing this rank's K
    // and V blocks forward; backward passes K, V and their gradients. Overlapped with the
    // attention kernel of the block in hand.
    r.cp.group = place_group(l.tp, l.cp, net.domain_gpus);
    r.cp.collective = Collective::send_recv;
    r.cp.bytes = c.tokens * kv_heads_local(m, l.tp) * (qk_head_dim(m) + v_head_dim(m)) * B;
    r.cp.time_per_call_s = collective_time_s(Collective::send_recv, r.cp.bytes, r.cp.group, net);
    const double steps = d(l.cp - 1);
    r.cp.calls = layers * steps * (3 + recompute_full);
    cp_fwd_exposed = std::max(0.0, steps * r.cp.time_per_call_s - c.attention_fwd_s);
    cp_bwd_exposed = std::max(0.0, 2 * steps * r.cp.time_per_call_s - c.attention_bwd_s);
    r.cp_exposed_s = layers * ((1 + recompute_full) * cp_fwd_exposed + cp_bwd_exposed);
  }
  double ep_sort_per_call_s = 0;  // alltoall: the re-sort by local expert, on the compute stream
  if (l.ep > 1 && m.moe) {
    // Token dispatch and combine, forward and backward (+ forward again under full recompute):
    // each all-to-all moves the top-k copies of this rank's tokens.
    // The expert group's ranks sit etp apart (tp apart without folding): consecutive ranks fill
    // a node first, so a folded group is packed tighter than one strided by tp.
    r.ep.group = place_group(l.expert_tp(), l.ep, net.domain_gpus);
    r.ep.collective = Collective::all_to_all;
    const double tokens = l.sequence_parallel ? c.tokens / d(l.tp) : c.tokens / d(l.tp / l.expert_tp());
    const double k = d(m.moe->experts_per_token);
    r.ep.bytes = tokens * k * h * B;
    if (s.ep_dispatcher == EpDispatcher::flex) {
      // DeepEP / HybridEP: once a destination rank, or node then NVLink (core/moe_dispatch.hpp).
      r.ep.time_per_call_s = flex_dispatch(tokens, h * B, *m.moe, r.ep.group, net, s.moe_routing).time_s;
    } else {
      // NCCL all-to-all of every top-k copy; with more than one local expert the received chunks
      // are re-sorted by expert after the dispatch and before the combine (token_dispatcher.py,
      // sort_chunks_by_idxs): a read and a write of them on the compute stream.
      const bool sorts = m.moe->experts / l.ep > 1;
      r.ep.time_per_call_s = collective_time_s(Collective::all_to_all, r.ep.bytes, r.ep.group, net);
      ep_sort_per_call_s = sorts ? 2 * r.ep.bytes / (s.memory_bandwidth_bytes_per_s * s.mbu) : 0;
    }
    r.ep.calls = moe_layers_here * (4 + 2 * recompute_full);
  }
  if (l.pp > 1) {
    // Activations forward and gradients backward at each stage boundary, each tensor-parallel
    // rank sending its 1/t slice (Narayanan et al. 2021 §4.1 scatter/gather); interleaving
    // crosses v times as many boundaries.
    r.pp.group = place_group(l.tp * l.cp * l.dp, l.pp, net.domain_gpus);
    r.pp.collective = Collective::send_recv;
    r.pp.bytes = c.tokens * h * B / d(l.tp);
    r.pp.time_per_call_s = collective_time_s(Collective::send_recv, r.pp.bytes, r.pp.group, net);
    r.pp.calls = 2 * d(l.interleave);
  }

  // Parameters on the slowest stage of one tensor-parallel rank; experts split over ep too.
  const ParamCount pc = count_params(m);
  double expert_params = 0;
  if (m.moe) expert_params = d(m.moe->experts) * mlp_params(m, m.moe->d_ff_expert) * d(moe_layer_count(m));
  const double layer_params = pc.total - pc.embedding - pc.lm_head - expert_params;
  // The edge matrices on that stage: all of them on one stage; the LM head on the last; the
  // embedding on the first (none on a middle stage, the fullest under the edge-slot split).
  const double edge = l.pp == 1           ? pc.embedding + pc.lm_head
                      : last_is_slowest   ? std::max(pc.lm_head, pc.embedding)
                      : &fullest == &first ? pc.embedding
                                           : 0.0;
  const double dense_here = (layer_params * layers / L + edge) / d(l.tp);
  const double expert_here = expert_params * layers / L / d(l.expert_tp() * l.ep);
  r.params_per_gpu = dense_here + expert_here;

  const BytesPerParam& bpp = s.lora.on ? s.lora.adapter_bytes : s.bytes_per_param;
  // What the data-parallel collectives move per GPU. LoRA: the adapters' gradients in their own
  // dtype (DDP and FSDP reduce a gradient in its parameter's dtype), and under ZeRO-3 the frozen
  // base gathered at its storage format beside the adapters (FSDP shards both; QLoRA + FSDP keeps
  // the 4-bit values in a bf16 quant_storage of the same bytes). tp = pp = ep = 1 with LoRA.
  const bool lora = s.lora.on;
  const double grad_value_bytes = lora ? s.lora.adapter_bytes.grads : s.grad_reduce_bytes;
  const double trainable_here = lora ? s.lora.adapter_params : dense_here;
  const double dense_gather_bytes = lora ? s.lora.adapter_params * bpp.weights + (l.zero == 3 ? s.lora.base_bytes : 0) : dense_here * bpp.weights;
  const double expert_train_here = lora ? 0 : expert_here;
  const long long zero_ranks = l.dp * l.cp;
  const long long expert_ranks = l.expert_zero_ranks();
  const GroupPlacement dp_group = place_group(l.tp, zero_ranks, net.domain_gpus);
  const GroupPlacement ep_dp_group = place_group(l.expert_tp() * l.ep, expert_ranks, net.domain_gpus);
  auto coll = [&](Collective k, double bytes, const GroupPlacement& g, double calls) {
    CommTerm t;
    t.collective = k, t.bytes = bytes, t.group = g, t.calls = calls;
    t.time_per_call_s = collective_time_s(k, bytes, g, net);
    return t;
  };
  const double fwd_compute = layers * (c.gemm_fwd_s + c.attention_fwd_s + c.memory_fwd_s);
  const double bwd_compute = layers * (c.gemm_bwd_s + c.attention_bwd_s + c.memory_bwd_s);
  // Bytes sent per step in the parts of overlapped collectives that hide behind compute.
  double hidden_wire_bytes = 0;
  // Megatron-Core's EP overlap (overlap_moe_expert_parallel_comm): one micro-batch's forward runs
  // beside another's backward, layer by layer, in three stages (models/common/
  // model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run; the stream schedule of
  // Megatron-LM PR #2730 as Megatron-Bridge's docs/training/moe-optimization.md draws it), each
  // communication hidden only behind the compute of its own stage:
  //   1. the backward's combine gradient    beside the forward's attention block;
  //   2. the forward's dispatch             beside the backward's expert input gradients, then
  //      the backward's dispatch gradient   beside the expert weight gradients (delayed, so they
  //                                         can) and the forward's experts;
  //   3. the forward's combine              beside the backward's attention block.
  // The first forward and the last backward have no partner: without pipelining one micro-batch in
  // m pays in full; under the interleaved schedule the warm-up and cool-down forwards and backwards
  // run alone, (2(p − 1) + (v − 1)·p + 1)/v micro-batches' worth. The alltoall dispatcher's re-sort
  // runs on the compute stream and is never hidden.
  // Megatron-Core refuses the overlap at pp > 1 without interleaving and under full recomputation
  // (transformer_config.py, __post_init__): there it is not priced.
  r.ep_exposed_s = r.ep.total_s();
  const bool ep_overlap_runs = s.ep_comm_overlap && !(l.pp > 1 && l.interleave == 1) && l.recompute != Recompute::full;
  if (ep_overlap_runs && r.ep.total_s() > 0) {
    const double x = r.ep.time_per_call_s;
    const double attn_fwd = c.attn_gemm_fwd_s + c.attention_fwd_s, attn_bwd = c.attn_gemm_bwd_s + c.attention_bwd_s;
    const double mlp_fwd = c.gemm_fwd_s - c.attn_gemm_fwd_s, mlp_bwd = c.gemm_bwd_s - c.attn_gemm_bwd_s;
    const double per_layer = std::max(0.0, x - attn_fwd) + std::max(0.0, x - mlp_bwd / 2) + std::max(0.0, x - (mlp_bwd / 2 + mlp_fwd)) +
                             std::max(0.0, x - attn_bwd);
    const double paired = moe_layers_here * per_layer;
    const double v = d(l.interleave), p = d(l.pp);
    const double alone = std::min(mb, l.pp > 1 ? (2 * (p - 1) + (v - 1) * p + 1) / v : 1.0);
    r.ep_exposed_s = ((mb - alone) * std::min(paired, r.ep.total_s()) + alone * r.ep.total_s()) / mb;
    hidden_wire_bytes += mb * r.ep.wire_bytes() * (1 - r.ep_exposed_s / r.ep.total_s());
    // The flex kernels hold their SMs while hidden: the compute beside them runs on the rest, so a
    // stage with x of communication hidden behind it takes x · held / sm_count longer (the TP
    // overlap's SM margin, tp_overlap_sm_s, for Transformer Engine's userbuffers).
    if (s.ep_dispatcher == EpDispatcher::flex && s.ep_comm_sms > 0 && s.sm_count > s.ep_comm_sms)
      r.ep_overlap_sm_s = (r.ep.total_s() - r.ep_exposed_s) * d(s.ep_comm_sms) / d(s.sm_count);
  }
  r.ep_exposed_s += r.ep.calls * ep_sort_per_call_s;
  if (r.cp.total_s() > 0) hidden_wire_bytes += mb * r.cp.wire_bytes() * (1 - r.cp_exposed_s / r.cp.total_s());
  if (r.tp.total_s() > 0 && r.tp_exposed_s < r.tp.total_s())  // reduce-scatter and all-gather, each hidden in part
    hidden_wire_bytes += mb * 2 * r.tp.wire_bytes() * (1 - r.tp_exposed_s / r.tp.total_s());
  // Pipeline transfers. Without overlap each is waited on where it is issued. With it
  // (Megatron-Core's overlap_p2p_comm, interleaved schedules only: schedules.py,
  // forward_backward_pipelining_with_interleaving posts the isend/irecv of the next chunk's
  // activations and gradients and waits on them only before that chunk runs), each transfer
  // runs beside a model chunk's compute and shows only where it is longer than one chunk's forward.
  r.pp_exposed_s = r.pp.total_s();
  if (s.overlap_p2p_comm && l.interleave > 1 && r.pp.total_s() > 0) {
    const double chunk_fwd_s = fwd_compute / d(l.interleave);
    r.pp_exposed_s = r.pp.calls * std::max(0.0, r.pp.time_per_call_s - chunk_fwd_s);
    hidden_wire_bytes += mb * r.pp.wire_bytes() * (1 - r.pp_exposed_s / r.pp.total_s());
  }
  if (l.zero == 3) {
    // ZeRO-3 / FSDP: every micro-batch gathers each layer's weights for forward and again for
    // backward and reduce-scatters its gradients (Rajbhandari et al. 2020 §7.2.2: 3× the model,
    // 1.5× the all-reduce), one collective per layer (FSDP wraps each transformer block).
    const double units = std::max(1.0, layers);
    r.dp_params = coll(Collective::all_gather, dense_gather_bytes / units, dp_group, 2 * mb * units);
    r.dp_grads = coll(Collective::reduce_scatter, trainable_here * grad_value_bytes / units, dp_group, mb * units);
    r.expert_params = coll(Collective::all_gather, expert_train_here * bpp.weights / units, ep_dp_group, 2 * mb * units);
    r.expert_grads = coll(Collective::reduce_scatter, expert_train_here * grad_value_bytes / units, ep_dp_group, mb * units);
    const double ag = r.dp_params.time_per_call_s + r.expert_params.time_per_call_s;
    const double rs = r.dp_grads.time_per_call_s + r.expert_grads.time_per_call_s;
    r.zero3_exposed_s = zero3_exposed_s(ag, rs, units, fwd_compute, bwd_compute, s.zero3_prefetch);
    r.dp_total_s = r.dp_params.total_s() + r.dp_grads.total_s() + r.expert_params.total_s() + r.expert_grads.total_s();
    // FSDP2 (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py): each of the two gathers a
    // micro-batch is copied out of the gather buffer into the parameters, on the compute stream
    // once the gather is done (foreach_all_gather_copy_out: read and write the weight bytes), and
    // the backward's gradients are copied into the reduce-scatter buffer in the reduce dtype
    // (foreach_reduce: chunk_cat, read the unsharded gradient, in the compute dtype, write the
    // reduce dtype). Memory-bound, on this GPU's unsharded parameters of the stage.
    if (s.zero3_copies && !lora)
      r.zero3_copy_s = (2 * 2 * bpp.weights + bpp.weights + grad_value_bytes) * (dense_here + expert_here) /
                       (s.memory_bandwidth_bytes_per_s * s.mbu);
    const double per_mb = units * (2 * ag + rs);
    if (per_mb > 0)
      hidden_wire_bytes += (r.dp_params.wire_bytes() + r.dp_grads.wire_bytes() + r.expert_params.wire_bytes() + r.expert_grads.wire_bytes()) *
                           std::max(0.0, 1 - r.zero3_exposed_s / per_mb);
  } else {
    // ZeRO 0: one all-reduce of the gradients per step. ZeRO 1-2: reduce-scatter the gradients,
    // all-gather the updated weights (the same bytes on the wire; ZeRO §7.2.1). ZeRO-1 keeps a
    // full gradient buffer, so the micro-batches accumulate into it and it is reduced once
    // (Megatron's distributed optimizer). ZeRO-2 keeps only its shard of the gradients, so every
    // micro-batch's gradients are reduce-scattered as its backward produces them (DeepSpeed's
    // stage 2 reduces at every micro-step of gradient accumulation): m reductions a step, each
    // hidden at most behind its own micro-batch's backward.
    // Megatron buckets the gradients (dp_bucket_min_params); each bucket is one collective,
    // launched when its layers' backward is done, so the last one waits for the backward's end
    // (and the first bucket of the gather must arrive before the first layer's forward). The
    // bucket grows with dp (1M parameters a rank), and so does what a wide replica set exposes.
    const Collective grads = l.zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
    const double grad_calls = l.zero == 2 ? mb : 1;
    const double buckets = std::max(1.0, std::ceil(trainable_here / std::max(dp_bucket_min_params, dp_bucket_params_per_rank * d(zero_ranks))));
    // The buckets queue on one NCCL stream back to back, so the ring's latency is paid about once
    // for the whole reduction (as before bucketing): each bucket takes 1/buckets of the whole.
    auto bucketed = [&](Collective k, double bytes, double calls) {
      CommTerm t = coll(k, bytes / buckets, dp_group, calls * buckets);
      t.time_per_call_s = collective_time_s(k, bytes, dp_group, net) / buckets;
      return t;
    };
    r.dp_grads = bucketed(grads, trainable_here * grad_value_bytes, grad_calls);
    // The routed experts' reduction is priced as one collective that waits for the backward's end.
    // Megatron-Core buckets it like the dense one (distributed_data_parallel.py gives its
    // expert_parallel_buffers the same bucket_size and grad-ready hooks), but priced so, hidden behind
    // the backward, the runs with an expert-data-parallel group across nodes read fast: NeMo
    // Automodel's DeepSeek-V3 on 1024 H100s (expert dp 4) +5% → +24%, where its 256-GPU run (expert
    // dp 1) measures 16% faster a GPU; Megatron-LM's Qwen3 30B on 32 H100s +16% → +24%
    // (docs/validation/README.md). The measured runs say the expert reduction does not hide; why is
    // not known here.
    r.expert_grads = coll(grads, expert_train_here * grad_value_bytes, ep_dp_group, grad_calls);
    if (l.zero > 0) {
      r.dp_params = bucketed(Collective::all_gather, dense_gather_bytes, 1);
      r.expert_params = coll(Collective::all_gather, expert_train_here * bpp.weights, ep_dp_group, 1);
    }
    r.dp_grad_bucket = r.dp_grads;
    r.dp_grad_bucket.calls = 1;
    const double grad_s = r.dp_grads.total_s() + r.expert_grads.total_s();
    const double param_s = r.dp_params.total_s() + r.expert_params.total_s();
    r.dp_total_s = grad_s + param_s;
    // Overlapped: each reduction hides behind the backward of the micro-batch that produced it
    // (the last one's, unless ZeRO-2), except its last bucket; the gather behind the first
    // micro-batch's forward of the next step, except its first bucket.
    const double grad_per_call = grad_s / grad_calls;
    const double last_bucket = r.dp_grads.time_per_call_s + r.expert_grads.time_per_call_s;
    const double grad_exposed =
        s.overlap_grad_reduce ? grad_calls * std::min(grad_per_call, std::max(last_bucket, grad_per_call - bwd_compute)) : grad_s;
    const double first_bucket = r.dp_params.time_per_call_s + r.expert_params.time_per_call_s;
    const double param_exposed = s.overlap_param_gather ? std::min(param_s, std::max(first_bucket, param_s - fwd_compute)) : param_s;
    r.dp_exposed_s = grad_exposed + param_exposed;
    if (grad_s > 0) hidden_wire_bytes += (r.dp_grads.wire_bytes() + r.expert_grads.wire_bytes()) * (1 - grad_exposed / grad_s);
    if (param_s > 0) hidden_wire_bytes += (r.dp_params.wire_bytes() + r.expert_params.wire_bytes()) * (1 - param_exposed / param_s);
  }

  // Per micro-batch on the slowest stage.
  r.matmul_s = layers * (c.gemm_fwd_s + c.gemm_bwd_s) +
               (last_is_slowest ? heads * (c.head_fwd_s + c.head_bwd_s) + mtp * (c.mtp_proj_fwd_s + c.mtp_proj_bwd_s) : 0);
  r.attention_s = layers * (c.attention_fwd_s + c.attention_bwd_s);
  r.memory_bound_s = layers * (c.memory_fwd_s + c.memory_bwd_s) + (last_is_slowest ? heads * c.head_memory_s : 0);
  if (!s.fused_grad_accumulation) {
    r.grad_accumulation_s = (lora ? s.lora.adapter_params : r.params_per_gpu) * (s.activation_bytes + 2 * bpp.grads) /
                            (s.memory_bandwidth_bytes_per_s * s.mbu);
    r.memory_bound_s += r.grad_accumulation_s;
  }
  if (l.recompute == Recompute::full) r.recompute_s = fwd_compute;
  // Selective recomputation replays the attention core (Korthikanti §4.2); flash attention
  // already recomputes its scores inside its backward kernel, so there is nothing to replay.
  // torchtitan's op-level policy saves every other matrix product's output and attention's
  // (torchtitan/distributed/activation_checkpoint.py, _get_custom_policy: the save list and the
  // "mm_count % 2" rule): the backward replays half the products and the elementwise work.
  const bool selective = l.recompute == Recompute::selective;
  // Megatron-Core's module list: core_attn as above, the other modules their forward again.
  if (selective && s.selective == SelectiveRecompute::attention_core)
    r.recompute_s = layers * ((s.recompute_modules.core_attn && !s.flash_attention ? c.attention_fwd_s : 0) + c.module_recompute_fwd_s);
  if (selective && s.selective == SelectiveRecompute::every_other_matmul) r.recompute_s = layers * (c.gemm_fwd_s / 2 + c.memory_fwd_s);
  // MoE layers launch their own count (Framework::moe_kernels_per_layer) when the framework gives one.
  const long long moe_kernels = s.moe_kernels_per_layer > 0 ? s.moe_kernels_per_layer : s.kernels_per_layer;
  r.launch_s = launch_floor_s(layers - moe_layers_here, s.kernels_per_layer, recompute_full > 0) +
               launch_floor_s(moe_layers_here, moe_kernels, recompute_full > 0);
  // Transformer Engine's TP overlap: its pipelined and bulk-overlapped products run on the SMs
  // the communication leaves (StepSetup::tp_overlap_comm_sms of sm_count), so they take
  // sm_count / (sm_count − held) as long; and it splits products into chunks, each a product of
  // its own. Hidden communication's HBM traffic is priced apart (overlap_contention_s).
  // Only with sequence parallelism, as the overlap itself (Megatron's --tp-comm-overlap requires it).
  const bool tp_overlap_priced = l.tp > 1 && s.tp_comm_overlap && l.sequence_parallel && s.tp_overlap_comm_sms > 0 && s.sm_count > 0;
  if (tp_overlap_priced && s.tp_overlap_comm_sms >= s.sm_count)
    throw Error("the framework's tp_overlap_comm_sms (" + std::to_string(s.tp_overlap_comm_sms) + ") holds every one of the GPU's " +
                std::to_string(s.sm_count) + " SMs (sm_count): nothing is left for the products");
  if (tp_overlap_priced) {
    const double held = d(s.tp_overlap_comm_sms) / d(s.sm_count - s.tp_overlap_comm_sms);
    const double per_product_s = s.gemm.kind == GemmTimeModel::Kind::fraction ? 0.0 : gemm_launch_s;  // the curve's fixed cost
    r.tp_overlap_sm_s = layers * ((1 + recompute_full) * c.tp_margin_fwd_s + c.tp_margin_bwd_s) * held +
                        layers * te_overlap_extra_products(l.tp, 1 + recompute_full) * per_product_s;
  }
  // A quantized base is dequantized to bf16 for every product that reads it: the forward, the
  // backward's input gradient, and the forward again under full recomputation (bitsandbytes
  // MatMul4Bit.forward/backward: F.dequantize_4bit each time), memory-bound like the elementwise
  // work (core/lora.hpp dequant_bytes_per_pass, as train --lora counts it).
  if (lora && s.lora.dequant_bytes_per_pass > 0)
    r.dequant_s = (2 + recompute_full) * s.lora.dequant_bytes_per_pass * layers / L /
                  (s.memory_bandwidth_bytes_per_s * s.mbu);
  // Eager elementwise work: forward, backward (twice the forward's bytes) and any forward the
  // backward replays (full recomputation; torchtitan's op-level policy replays the elementwise work).
  const double eager_replays = recompute_full + (selective && s.selective == SelectiveRecompute::every_other_matmul ? 1 : 0);
  r.eager_s = layers * (1 + memory_bound_backward_over_forward + eager_replays) * c.eager_fwd_s + (last_is_slowest ? heads * c.head_eager_s : 0);
  // Megatron-Core's eager expert bias and clamp, on this stage's MoE layers: forward, backward, the
  // clamp again under moe_act recompute, and the whole forward again under full recompute.
  if (c.moe_eager.kernels > 0) {
    const bool replay_act = l.recompute == Recompute::selective && s.selective == SelectiveRecompute::attention_core && s.recompute_modules.moe_act;
    r.moe_eager_s = moe_layers_here * ((1 + recompute_full) * c.moe_eager.fwd_s + c.moe_eager.bwd_s + (replay_act ? c.moe_eager.replay_s : 0));
  }
  r.microbatch_s = r.matmul_s + r.attention_s + r.memory_bound_s + r.recompute_s + r.tp_exposed_s + r.cp_exposed_s +
                   r.ep_exposed_s + r.moe_tp.total_s() + r.pp_exposed_s + r.zero3_exposed_s + r.zero3_copy_s + r.launch_s + r.eager_s + r.moe_eager_s + r.dequant_s + r.tp_overlap_sm_s + r.ep_overlap_sm_s;

  // Per step. 1F1B idles p−1 micro-batch times in the warm-up and cool-down (Narayanan et al.
  // 2021 §2.2.1): (p−1)·(t_f + t_b). The interleaved schedule pipelines model chunks instead of
  // stages, so each of those p−1 slots lasts one chunk's forward and backward (§2.2.2: "the
  // pipeline flush ... takes (p−1)·(t_f + t_b)/v" with chunks of 1/v of the stage) — with an
  // uneven split, the longest chunk's (ceil(L/(p·v)) layers, the first stage's first chunk):
  // its layers' share of the slowest stage's micro-batch time. Even split: 1/v, the bubble
  // (p−1)/(m·v) of the ideal m micro-batches. (The longest chunk never holds more layers than
  // the slowest stage when v ≥ 2: ceil(L/(p·v)) ≤ floor(L/p) once L ≥ p·v.)
  long long longest_chunk = std::max(first.largest_chunk, second.largest_chunk);
  if (l.pipeline_layout)
    for (long long size : l.pipeline_layout->chunk_layers) longest_chunk = std::max(longest_chunk, size);
  r.chunk_share = l.interleave > 1 ? std::min(1.0, d(longest_chunk) / layers) : 1.0;
  r.bubble_s = d(l.pp - 1) * r.chunk_share * r.microbatch_s;
  r.overlap_contention_s =
      overlapped_comm_hbm_passes * hidden_wire_bytes / (s.memory_bandwidth_bytes_per_s * s.mbu);
  // The optimizer reads gradients, master weights and states, writes the states and master
  // weights back and the working weights out; ZeRO ≥ 1 updates 1/(dp·cp) of them per GPU.
  double moved = bpp.grads + 2 * bpp.master + 2 * bpp.optimizer + bpp.weights + (bpp.master == 0 ? bpp.weights : 0);
  const double updated = lora ? s.lora.adapter_params / (l.zero >= 1 ? d(zero_ranks) : 1.0)
                         : l.zero >= 1 ? dense_here / d(zero_ranks) + expert_here / d(expert_ranks) : r.params_per_gpu;
  r.optimizer_s = updated * moved / (s.memory_bandwidth_bytes_per_s * s.mbu);

  r.terms = {
      {"matmul_s", "matrix products", mb * r.matmul_s},
      {"attention_s", "attention", mb * r.attention_s},
      {"memory_bound_s", "memory-bound work", mb * r.memory_bound_s},
      {"recompute_s", "recomputation", mb * r.recompute_s},
      {"launch_s", "kernel launch floor", mb * r.launch_s},
      {"eager_s", "unfused elementwise (eager)", mb * r.eager_s},
      {"moe_eager_s", "MoE eager ops (expert bias, clamp)", mb * r.moe_eager_s},
      {"dequant_s", "dequantisation of the base", mb * r.dequant_s},
      {"tp_comm_s", "tensor-parallel communication (exposed)", mb * r.tp_exposed_s},
      {"cp_comm_s", "context-parallel communication (exposed)", mb * r.cp_exposed_s},
      {"ep_comm_s", "expert all-to-all", mb * r.ep_exposed_s},
      {"moe_tp_comm_s", "MoE tokens' tensor-parallel gather and scatter", mb * r.moe_tp.total_s()},
      {"pp_comm_s", "pipeline send/recv (exposed)", mb * r.pp_exposed_s},
      {"zero3_comm_s", "ZeRO-3 gathers (exposed)", mb * r.zero3_exposed_s},
      {"zero3_copy_s", "ZeRO-3 buffer copies (FSDP2)", mb * r.zero3_copy_s},
      {"tp_overlap_sm_s", "SMs held by tensor-parallel overlap", mb * r.tp_overlap_sm_s},
      {"ep_overlap_sm_s", "SMs held by the hidden expert dispatch", mb * r.ep_overlap_sm_s},
      {"bubble_s", "pipeline bubble", r.bubble_s},
      {"dp_comm_s", "data-parallel communication (exposed)", r.dp_exposed_s},
      {"overlap_s", "HBM traffic of hidden communication", r.overlap_contention_s},
      {"optimizer_s", "optimizer step", r.optimizer_s},
  };
  r.step_time_s = 0;
  for (const StepTerm& t : r.terms) r.step_time_s += t.seconds;

  r.tokens_per_step = d(s.global_batch) * d(s.seq);
  r.tokens_per_s = r.tokens_per_step / r.step_time_s;
  const double attention = attention_flops_per_token(m, d(s.seq), true);
  // LoRA: 4 FLOPs a frozen parameter and 6 an adapter parameter a token (core/lora.hpp), the count
  // train --lora uses, so the two report the same MFU.
  const double adapters = lora ? s.lora.adapter_flops_per_token : 0;
  r.model_flops_per_step = r.tokens_per_step * ((lora ? lora_frozen_flops_per_param : 6) * pc.active + adapters + attention);
  if (l.recompute == Recompute::full)
    r.recompute_flops_per_step = r.tokens_per_step * (2 * (pc.active - pc.embedding - pc.lm_head) + adapters / 3 + attention / 3);
  if (selective && s.selective == SelectiveRecompute::attention_core) {
    if (s.recompute_modules.core_attn && !s.flash_attention) r.recompute_flops_per_step = r.tokens_per_step * attention / 3;
    // The modules' products: per layer on this GPU for c.tokens tokens, 1/tp of each.
    r.recompute_flops_per_step += r.tokens_per_step * c.module_recompute_fwd_flops * L * d(l.tp) / c.tokens;
  }
  if (selective && s.selective == SelectiveRecompute::every_other_matmul)
    r.recompute_flops_per_step = r.tokens_per_step * (pc.active - pc.embedding - pc.lm_head);
  const double cluster = d(l.gpus()) * s.peak_flops_per_s * r.step_time_s;
  r.mfu = r.model_flops_per_step / cluster;
  r.hfu = (r.model_flops_per_step + r.recompute_flops_per_step) / cluster;
  return r;
}

}  // namespace

}  // namespace napkin
