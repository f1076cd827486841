#pragma once
// Shared by the framework validation tests (test_validation_frameworks, test_validation_heldout):
// a card's datasheet figures with a framework file's knobs, a published run, and its price.
#include <string>

#include "core/memory.hpp"
#include "core/step_time.hpp"
#include "spec/framework_spec.hpp"
#include "validation_support.hpp"

namespace napkin::test {

// A card's datasheet figures, the network between nodes, and the framework's knobs.
inline StepSetup card(const char* hardware_key, double peak, double hbm, double scale_out, const char* framework) {
  StepSetup s;
  s.flash_attention = true;
  s.activation_bytes = 2;
  const PrecisionRecipe& r = find_recipe("bf16-mixed");
  s.bytes_per_param = bytes_per_param(find_optimizer("adamw"), r);
  s.grad_reduce_bytes = r.grad_bytes;
  s.peak_flops_per_s = s.gemm.peak_flops_per_s = peak;
  s.memory_bandwidth_bytes_per_s = s.gemm.memory_bandwidth_bytes_per_s = hbm;
  s.gemm.peak_efficiency = gemm_peak_efficiency(hardware_key, Dtype::bf16);
  s.net.domain_gpus = 8;
  s.net.scale_up_bytes_per_s = std::string(hardware_key).substr(0, 4) == "a100" ? 300e9 : 450e9;
  s.net.scale_out_bytes_per_s = scale_out;
  s.sm_count = std::string(hardware_key).substr(0, 4) == "a100" ? 108 : 132;  // A100 / H100 whitepapers
  const Framework f = load_framework(framework);
  apply_framework(f, s);
  s.flash_rate = flash_rate_for(f.attention_kernel, std::string(hardware_key).substr(0, 4) == "a100" ? "a100" : "h100");
  return s;
}

struct Run {
  std::string name;
  Model model;
  StepSetup setup;
  Layout layout;
  long long global_batch, seq;
  double measured_tokens_per_s_per_gpu;
};

inline Row priced(const Run& x, const char* source, const char* gpu, const char* framework) {
  StepSetup s = x.setup;
  s.global_batch = x.global_batch;
  s.seq = x.seq;
  const Layout& l = x.layout;
  const StepTime t = step_time(x.model, l, s);
  Row r;
  r.name = x.name, r.source = source, r.unit = "tokens/s per GPU";
  r.layout = "tp " + std::to_string(l.tp) + ", pp " + std::to_string(l.pp) + (l.cp > 1 ? ", cp " + std::to_string(l.cp) : "") +
             (l.ep > 1 ? ", ep " + std::to_string(l.ep) : "") +
             (l.interleave > 1 ? ", v " + std::to_string(l.interleave) : "") + ", dp " + std::to_string(l.dp) + ", b " +
             std::to_string(l.micro_batch) + ", B " + std::to_string(x.global_batch) + " × " + std::to_string(x.seq) + ", ZeRO " +
             std::to_string(l.zero) + ", recompute " + std::string(recompute_name(l.recompute)) + (s.compiled ? ", compiled" : ", eager") +
             (s.tp_comm_overlap && l.tp > 1 ? ", async TP" : "");
  r.measured = x.measured_tokens_per_s_per_gpu;
  r.predicted = t.tokens_per_s / static_cast<double>(l.gpus());
  r.gpu = gpu, r.framework = framework;
  r.expert_width = expert_width_of(x.model);
  r.params = count_params(x.model).total, r.tp = l.tp, r.pp = l.pp, r.cp = l.cp, r.ep = l.ep, r.dp = l.dp, r.zero = l.zero;
  return r;
}

inline Layout layout(long long tp, long long dp, long long b, int zero, Recompute rc) {
  Layout l;
  l.tp = tp, l.dp = dp, l.micro_batch = b, l.zero = zero, l.recompute = rc;
  l.sequence_parallel = tp > 1;  // torchtitan's TP plan shards the norms over the sequence
  return l;
}

// DGX H100 as NVIDIA's NeMo benchmarks run it: 8 × H100 SXM 80GB a node, 8 × 400 Gb/s InfiniBand,
// NeMo's knobs; FP8 is Transformer Engine's per-tensor scaling with attention left in bf16.
inline StepSetup dgx_h100(bool fp8) {
  StepSetup s = card("h100-sxm", 989.5e12, 3.35e12, 50e9, "nemo");
  if (fp8) {
    s.bf16_under_fp8 = s.gemm;  // the routed experts on the BF16 curve (fp8_expert_time_over_bf16)
    const PrecisionRecipe& r = find_recipe("fp8-mixed");
    s.bytes_per_param = bytes_per_param(find_optimizer("adamw"), r);
    s.peak_flops_per_s = s.gemm.peak_flops_per_s = 1979e12;
    s.gemm.peak_efficiency = gemm_peak_efficiency("h100-sxm", Dtype::fp8);
    s.attention_peak_flops_per_s = 989.5e12;  // TE's attention stays bf16 (fp8_dpa off)
    s.fp8_casts = true;
  }
  return s;
}

inline Layout megatron_layout(long long tp, long long pp, long long cp, long long v, long long dp) {
  Layout l;
  l.tp = tp, l.pp = pp, l.cp = cp, l.interleave = v, l.dp = dp, l.micro_batch = 1, l.zero = 1, l.recompute = Recompute::none;
  l.sequence_parallel = tp > 1;
  return l;
}

}  // namespace napkin::test
