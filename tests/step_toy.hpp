#pragma once
// The toy model and setup the step-time tests add up by hand (test_step_time.cpp derives every
// figure of it; test_step_frameworks.cpp prices the framework terms on it).
#include <doctest/doctest.h>

#include <string_view>

#include "core/step_time.hpp"

namespace napkin::test {

// doctest's Approx adds 1 to the scale of its tolerance, which makes every value under 1e-5 "equal";
// these times are microseconds, so compare relatively.
inline doctest::Approx near(double v) { return doctest::Approx(v).scale(0); }

// 2 layers, h = 64, 4 heads of 16 (no GQA), d_ff 256 GeLU, vocab 128, learned positions over a
// 32-token context, untied, no biases, no norm parameters.
// Parameters: embedding 128·64 + 32·64 = 10,240; LM head 8,192; per layer attention 4·64² =
// 16,384 and MLP 2·64·256 = 32,768; total 10,240 + 8,192 + 2·49,152 = 116,736.
inline Model toy() {
  Model m;
  m.key = "toy";
  m.layers = 2, m.d_model = 64, m.heads = 4, m.kv_heads = 4, m.head_dim = 16, m.d_ff = 256;
  m.mlp = MlpKind::gelu, m.vocab = 128, m.context = 32, m.tied_embeddings = false;
  m.positions = Positions::learned, m.bias = BiasKind::none, m.norm = NormKind::nonparametric;
  return m;
}

// 100 TFLOP/s, 1 TB/s, every product at half the peak; AdamW with bf16-mixed (2 + 2 + 4 + 8
// bytes per parameter); 300 GB/s scale-up, 25 GB/s scale-out, 8 GPUs per domain.
inline StepSetup setup() {
  StepSetup s;
  s.global_batch = 4;
  s.seq = 32;
  s.flash_attention = true;
  s.dropout = false;
  s.activation_bytes = 2;
  s.bytes_per_param = BytesPerParam{2, 2, 4, 8, 2};
  s.grad_reduce_bytes = 2;
  s.peak_flops_per_s = 100e12;
  s.memory_bandwidth_bytes_per_s = 1e12;
  s.gemm.kind = GemmTimeModel::Kind::fraction;
  s.gemm.fraction = 0.5;
  s.gemm.peak_flops_per_s = 100e12;
  s.gemm.memory_bandwidth_bytes_per_s = 1e12;
  s.net.domain_gpus = 8;
  s.net.scale_up_bytes_per_s = 300e9;
  s.net.scale_out_bytes_per_s = 25e9;
  return s;
}

inline double term(const StepTime& t, std::string_view key) {
  for (const StepTerm& x : t.terms)
    if (x.key == key) return x.seconds;
  FAIL("no term " << key);
  return 0;
}

}  // namespace napkin::test
