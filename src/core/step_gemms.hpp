#pragma once
// Every matrix product one training step of a model performs on one GPU: the forward pass
// of each layer and the LM head, and for each product its two backward products. Pure
// shapes and FLOP counts; timing them is src/calibrate/. The derivation is in
// docs/METHODOLOGY.md §5.
#include <string>
#include <vector>

#include "core/model.hpp"

namespace napkin {

// C[m×n] = A[m×k]·B[k×n], `batch` independent products of that shape launched together,
// `count` times per step. For a linear layer Y = X·W: m = tokens, k = in features,
// n = out features. Backward (Narayanan et al. 2021 §3.2, "two GEMMs per GEMM"):
// dgrad dX = dY·Wᵀ is m×k×n and wgrad dW = Xᵀ·dY is k×n×m, each as many FLOPs as forward.
struct Gemm {
  std::string name;  // "attn.q_proj", "attn.q_proj.dgrad", "mlp.up.wgrad", "lm_head"
  long long m = 0;
  long long n = 0;
  long long k = 0;
  long long batch = 1;
  long long count = 1;
  // Fraction of the dense product's work that is useful: 0.5 for the attention products
  // under a causal mask (napkin's FLOP convention, attention_flops_per_token in
  // core/training.hpp), 1 otherwise.
  double useful_fraction = 1.0;
  // Useful FLOPs of all `count` occurrences in one step: 2·m·n·k·batch·count·useful_fraction.
  double flops = 0;
  double dense_flops_per_call() const;  // 2·m·n·k·batch, what one launch of the shape executes
};

struct StepConfig {
  long long micro_batch = 1;  // sequences per GPU per step
  long long seq = 1024;       // tokens per sequence
  long long tp = 1;           // tensor-parallel degree (Megatron column/row split)
  // The routed experts' tensor-parallel degree (0: tp). Below tp, the tp/etp ranks that share a
  // micro-batch's tokens each dispatch their own share of them (sequence-parallel shards) to
  // whole-width experts: each GPU's expert products see tokens·top_k/(tp/etp) assignments.
  long long expert_tp = 0;
};

// The product list of one step on one GPU, in execution order: forward (layers, LM head),
// then backward. Throws Error when micro_batch, seq or tp is not positive, when tp does
// not divide heads, d_ff or d_ff_expert (or kv_heads, unless tp is a multiple of it, when
// Megatron replicates the KV heads), or when a dimension exceeds what BLAS can index.
// MoE experts assume even routing: the micro-batch's tokens·top_k assignments are spread
// as evenly as integers allow (some experts get one token more).
std::vector<Gemm> step_gemms(const Model& m, const StepConfig& c);

// Sum of `flops` over the list.
double total_flops(const std::vector<Gemm>& gemms);

}  // namespace napkin
