#pragma once
// Two expert features Megatron-Core's grouped experts run as eager PyTorch ops, outside Transformer
// Engine's grouped products and the fused activation (TEGroupedMLP, megatron/core/transformer/moe/
// experts.py; Megatron-Core 0.15 to 0.17 as NeMo 25.11-26.04 ship it, and its default since: the
// fused CuTe path of 2026-05 needs NVTE_CUTEDSL_FUSED_GROUPED_MLP set, _is_fused_impl_supported):
//
// - The experts' output bias. fc2 is built with skip_bias_add, and TEGroupedMLP._apply_bias adds
//   the bias, scaled by each token's router weight, in a Python loop over the rank's local experts:
//   torch.cat([t + b * p for t, b, p in zip(torch.split(out, tokens_per_expert), biases,
//   torch.split(probs, tokens_per_expert))]). Forward, a b·p and an add per expert and one cat;
//   backward, per expert the bias gradient sum(g·p) and the router weight's sum(g·b) (two products
//   and two reductions), and the split's cat of the gradients.
// - An activation clamp (gpt-oss's swiglu_limit: Model::activation_clamp). The fused kernels
//   (weighted_bias_quick_geglu_impl and weighted_bias_swiglu_impl, megatron/core/fusions/
//   fused_bias_geglu.py and fused_bias_swiglu.py) take it as an argument but apply it before the
//   jitted function: x_glu, x_linear = input.chunk(2, -1); torch.cat((x_glu.clamp(max=c),
//   x_linear.clamp(-c, c)), -1). Forward two clamps and a cat of the fc1 output; backward each
//   clamp's where() over a comparison mask (PyTorch's clamp_backward) and the chunk's cat; when
//   moe_act is recomputed, the forward again.
//
// Counted at the activation width (bf16), each kernel at least kernel_floor_s: the per-expert ones
// are small (a local expert's rows), the cats and clamps move the whole tensor. No measured run
// isolates these ops; their bytes follow from the code above.
#include "core/model.hpp"

namespace napkin {

// The ops' cost in one MoE layer for one micro-batch on one GPU.
struct MoeEagerCost {
  double fwd_s = 0, bwd_s = 0;
  double replay_s = 0;  // the clamp's forward again (selective recompute of moe_act)
  double fwd_bytes = 0, bwd_bytes = 0, replay_bytes = 0;
  double kernels = 0;   // forward and backward, without the replay
  double bias_loop_experts = 0;  // the output bias's Python loop length (0: no biased experts)
  bool clamp = false;            // the activation clamp is priced
};

struct MoeEagerShape {
  double rows = 0;           // token copies the rank's experts process (tokens × top-k)
  double hidden = 0;         // fc2's output width (d_model)
  double fc1_half = 0;       // each half of the gated fc1 output on this rank (d_ff_expert / tp)
  double local_experts = 1;  // experts / ep: the Python loop's length
  double value_bytes = 2;    // activations (bf16)
};

// Whether a model has either feature (an MoE with biased experts, or a clamped activation).
bool has_moe_eager_ops(const Model& m);

// bandwidth_bytes_per_s: what memory-bound work reaches (datasheet × mbu); floor_s: the least a
// kernel costs (kernel_floor_s).
MoeEagerCost moe_eager_cost(const Model& m, const MoeEagerShape& shape, double bandwidth_bytes_per_s, double floor_s);

}  // namespace napkin
