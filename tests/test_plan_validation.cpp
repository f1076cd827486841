// napkin plan's step-time model against training runs others measured and published: every row's
// layout and measured figure with its source, one set of constants for all (docs/validation/README.md).
// Set NAPKIN_VALIDATION_TABLE=1 to print the Markdown table the docs carry.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/plan_search.hpp"
#include "core/step_time.hpp"
#include "spec/framework_spec.hpp"
#include "spec/registry.hpp"
#include "validation_support.hpp"

using namespace napkin;
using napkin::test::Row;

namespace {

// GPT as Megatron-LM builds it (Narayanan et al. 2021 §5; Korthikanti et al. 2022 §6): GeLU MLP of 4h,
// multi-head attention, learned positions, tied embeddings, biases and LayerNorm, vocabulary 51,200,
// sequence 2048.
Model gpt(long long layers, long long h, long long heads, long long vocab = 51200) {
  Model m;
  m.key = "gpt-" + std::to_string(layers) + "x" + std::to_string(h);
  m.layers = layers, m.d_model = h, m.heads = heads, m.kv_heads = heads, m.head_dim = h / heads, m.d_ff = 4 * h;
  m.mlp = MlpKind::gelu, m.vocab = vocab, m.context = 2048, m.tied_embeddings = true;
  m.positions = Positions::learned, m.bias = BiasKind::all, m.norm = NormKind::layernorm;
  return m;
}

// Selene / DGX A100 80GB (Narayanan §5): 312 TFLOP/s fp16, 2.039 TB/s, NVLink 3 + NVSwitch
// 300 GB/s per direction in 8-GPU nodes, eight 200 Gb/s HDR HCAs per node (25 GB/s per GPU); the
// NCCL latencies the a100-sxm-80gb spec carries (NVLink 3.4 µs, network 14 µs a ring step).
StepSetup selene(long long global_batch, bool fp16 = true) {
  StepSetup s;
  s.global_batch = global_batch;
  s.seq = 2048;
  s.flash_attention = false;  // 2021-2022 Megatron: unfused Q·Kᵀ, fused scale-mask-softmax
  s.dropout = true;           // Megatron GPT default: attention and hidden dropout 0.1
  s.activation_bytes = 2;
  const PrecisionRecipe& r = find_recipe(fp16 ? "fp16-mixed" : "bf16-mixed-fp32-grads");
  s.bytes_per_param = bytes_per_param(find_optimizer("adam"), r);
  s.grad_reduce_bytes = r.grad_bytes;
  s.peak_flops_per_s = 312e12;
  s.memory_bandwidth_bytes_per_s = 2.039e12;
  s.gemm.peak_flops_per_s = 312e12;
  s.gemm.memory_bandwidth_bytes_per_s = 2.039e12;
  s.gemm.peak_efficiency = gemm_peak_efficiency("a100-sxm-80gb", Dtype::bf16);
  s.net.domain_gpus = 8;
  s.net.scale_up_bytes_per_s = 300e9;
  s.net.scale_out_bytes_per_s = 25e9;
  s.net.scale_up_latency_s = 3.4e-6;
  s.net.scale_out_latency_s = 14e-6;
  apply_framework(load_framework("megatron"), s);
  // Megatron-LM of 2021-22 waited on each pipeline transfer where it was issued
  // (megatron/p2p_communication.py, _communicate: batch_isend_irecv, then wait on every request);
  // overlap_p2p_comm came with Megatron-Core.
  s.overlap_p2p_comm = false;
  return s;
}

// Narayanan et al. 2021 eq. (3): hardware FLOPs of one iteration with full recomputation,
// 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)). Also the count BLOOM's logger uses.
double narayanan_flops(const Model& m, double B, double s) {
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.d_model), V = static_cast<double>(m.vocab);
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}


// Megatron-LM 2021 (Narayanan Table 1 and 2): fp16 with an fp16 gradient buffer accumulated
// outside the products, every layer recomputed, no overlap of the data-parallel all-reduce except
// with PyTorch DDP (--DDP-impl torch), which overlaps it with the last micro-batch's backward.
Row narayanan(std::string name, std::string source, const Model& m, long long tp, long long pp, long long gpus, long long B, long long b,
              long long v, bool torch_ddp, double tflops) {
  Layout l;
  l.tp = tp, l.pp = pp, l.dp = gpus / (tp * pp), l.micro_batch = b, l.interleave = v, l.recompute = Recompute::full;
  StepSetup s = selene(B);
  s.overlap_grad_reduce = torch_ddp;
  s.overlap_param_gather = false;
  s.fused_grad_accumulation = false;
  const StepTime t = step_time(m, l, s);
  Row r;
  r.name = std::move(name), r.source = std::move(source);
  r.layout = "t " + std::to_string(tp) + ", p " + std::to_string(pp) + ", d " + std::to_string(l.dp) + ", b " + std::to_string(b) +
             ", B " + std::to_string(B) + (v > 1 ? ", v " + std::to_string(v) : "") + ", full recompute";
  r.unit = "TFLOP/s per GPU (eq. 3)";
  r.measured = tflops;
  r.predicted = narayanan_flops(m, static_cast<double>(B), 2048) / t.step_time_s / static_cast<double>(gpus) / 1e12;
  r.params = count_params(m).total, r.tp = tp, r.pp = pp, r.dp = l.dp;
  return r;
}

// Korthikanti et al. 2022 Table 5: iteration time with d = 1, sequence parallelism + selective
// recomputation, or full recomputation without sequence parallelism. Megatron by then fused the
// gradient accumulation into the weight-gradient product.
Row korthikanti(std::string name, const Model& m, long long pp, long long B, long long b, long long v, bool full,
                double seconds) {
  Layout l;
  l.tp = 8, l.pp = pp, l.dp = 1, l.micro_batch = b, l.interleave = v;
  l.sequence_parallel = !full;
  l.recompute = full ? Recompute::full : Recompute::selective;
  StepSetup s = selene(B);
  const StepTime t = step_time(m, l, s);
  Row r;
  r.name = std::move(name);
  r.source = "Korthikanti et al. 2022, Tables 3 and 5";
  r.layout = "t 8, p " + std::to_string(pp) + ", d 1, b " + std::to_string(b) + ", B " + std::to_string(B) + (v > 1 ? ", v " + std::to_string(v) : "") +
             (full ? ", full recompute" : ", SP + selective");
  r.unit = "seconds per iteration";
  r.measured = seconds;
  r.predicted = t.step_time_s;
  r.params = count_params(m).total, r.tp = 8, r.pp = pp;
  return r;
}

std::vector<Row> rows() {
  std::vector<Row> out;
  // Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
  // Megatron-LM", SC21, Table 1; micro-batch, virtual stages and DDP per row from NVIDIA/Megatron-LM
  // examples/sc21/run_table_1.sh (commit de7dc40f88). TFLOP/s per GPU count the recomputation (eq. 3).
  const std::string t1 = "Narayanan et al. 2021, Table 1; examples/sc21/run_table_1.sh";
  out.push_back(narayanan("GPT 1.7B", t1, gpt(24, 2304, 24), 1, 1, 32, 512, 16, 1, true, 137));
  out.push_back(narayanan("GPT 3.6B", t1, gpt(30, 3072, 32), 2, 1, 64, 512, 16, 1, true, 138));
  out.push_back(narayanan("GPT 7.5B", t1, gpt(36, 4096, 32), 4, 1, 128, 512, 16, 1, true, 142));
  out.push_back(narayanan("GPT 18.4B", t1, gpt(40, 6144, 48), 8, 1, 256, 1024, 8, 1, true, 135));
  out.push_back(narayanan("GPT 39.1B", t1, gpt(48, 8192, 64), 8, 2, 512, 1536, 4, 1, false, 138));
  out.push_back(narayanan("GPT 76.1B", t1, gpt(60, 10240, 80), 8, 4, 1024, 1792, 2, 3, false, 140));
  out.push_back(narayanan("GPT 145.6B", t1, gpt(80, 12288, 96), 8, 8, 1536, 2304, 2, 2, false, 148));
  out.push_back(narayanan("GPT 310.1B", t1, gpt(96, 16384, 128), 8, 16, 1920, 2160, 1, 2, false, 155));
  out.push_back(narayanan("GPT 529.6B", t1, gpt(105, 20480, 128), 8, 35, 2520, 2520, 1, 3, false, 163));
  out.push_back(narayanan("GPT 1008B", t1, gpt(128, 25600, 160), 8, 64, 3072, 3072, 1, 1, false, 163));
  // Narayanan 2021 Table 2, "PTD parallelism" rows: model-parallel size 96 (t 8 × p 12) and 280
  // (t 8 × p 35), micro-batch 1; the schedule is not stated, napkin assumes plain 1F1B.
  const std::string t2 = "Narayanan et al. 2021, Table 2 (PTD rows; p inferred as size / 8)";
  out.push_back(narayanan("GPT-3 175B on 384", t2, gpt(96, 12288, 96), 8, 12, 384, 1536, 1, 1, false, 153));
  out.push_back(narayanan("GPT-3 175B on 768", t2, gpt(96, 12288, 96), 8, 12, 768, 1536, 1, 1, false, 149));
  out.push_back(narayanan("GPT-3 175B on 1536", t2, gpt(96, 12288, 96), 8, 12, 1536, 1536, 1, 1, false, 141));
  out.push_back(narayanan("GPT 530B on 560", t2, gpt(105, 20480, 128), 8, 35, 560, 2240, 1, 1, false, 171));
  out.push_back(narayanan("GPT 530B on 1120", t2, gpt(105, 20480, 128), 8, 35, 1120, 2240, 1, 1, false, 167));
  out.push_back(narayanan("GPT 530B on 2240", t2, gpt(105, 20480, 128), 8, 35, 2240, 2240, 1, 1, false, 159));
  // Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
  // Table 3 (layouts) and Table 5 (iteration times), Selene, data-parallel size 1.
  out.push_back(korthikanti("GPT 22B, SP + selective", gpt(48, 6144, 64), 1, 4, 4, 1, false, 1.10));
  out.push_back(korthikanti("GPT 22B, full recompute", gpt(48, 6144, 64), 1, 4, 4, 1, true, 1.42));
  out.push_back(korthikanti("GPT-3 175B, SP + selective", gpt(96, 12288, 96), 8, 64, 1, 3, false, 13.75));
  out.push_back(korthikanti("GPT-3 175B, full recompute", gpt(96, 12288, 96), 8, 64, 1, 3, true, 18.13));
  out.push_back(korthikanti("MT-NLG 530B, SP + selective", gpt(105, 20480, 128), 35, 280, 1, 3, false, 37.83));
  out.push_back(korthikanti("MT-NLG 530B, full recompute", gpt(105, 20480, 128), 35, 280, 1, 3, true, 49.05));
  out.push_back(korthikanti("GPT 1T, SP + selective", gpt(128, 25600, 160), 64, 512, 1, 1, false, 71.49));
  out.push_back(korthikanti("GPT 1T, full recompute", gpt(128, 25600, 160), 64, 512, 1, 1, true, 94.42));
  {
    // BLOOM-176B (BigScience tr11-176B-ml): bigscience-workshop/bigscience train/tr11-176B-ml/README.md
    // and the .slurm file: 70 layers, h 14336, 112 heads, vocab 250,880 (padded), ALiBi, tied
    // embeddings; 384 A100 80GB (48 nodes); TP 4, PP 12, DP 8, micro-batch 2, global batch 2048,
    // bf16 with fp32 gradients (DeepSpeed BF16_Optimizer, its own ZeRO-1), full checkpointing, no
    // dropout. Jean Zay: 4 Omni-Path 100 Gb/s links per 8-GPU node = 50 Gb/s per GPU (BLOOM paper,
    // arXiv:2211.05100 §3.4). Logged 149.77 TFLOP/s per GPU at 104.70 s/iteration, counted with
    // Narayanan's eq. (3) (README "Throughput": "hardware TFLOPs ... the 4*2 co-efficient").
    Model m = gpt(70, 14336, 112, 250880);
    m.key = "bloom-176b";
    m.positions = Positions::alibi;
    Layout l;
    l.tp = 4, l.pp = 12, l.dp = 8, l.micro_batch = 2, l.recompute = Recompute::full, l.zero = 1;
    StepSetup s = selene(2048, false);
    s.dropout = false;
    s.net.scale_out_bytes_per_s = 50e9 / 8;
    s.overlap_grad_reduce = s.overlap_param_gather = false;  // DeepSpeed's pipeline engine reduces after the step
    s.fused_grad_accumulation = false;
    const StepTime t = step_time(m, l, s);
    Row r;
    r.name = "BLOOM 176B";
    r.source = "bigscience tr11-176B-ml README and slurm; BLOOM paper §3.4 (Omni-Path)";
    r.layout = "t 4, p 12, d 8, b 2, B 2048, ZeRO-1, full recompute, 50 Gb/s per GPU";
    r.unit = "TFLOP/s per GPU (eq. 3)";
    r.measured = 149.77;
    r.predicted = narayanan_flops(m, 2048, 2048) / t.step_time_s / 384 / 1e12;
    r.params = count_params(m).total, r.tp = 4, r.pp = 12, r.dp = 8, r.zero = 1;
    out.push_back(r);
  }
  return out;
}

// Megatron-LM README "Performance Benchmarking" (NVIDIA/Megatron-LM commit f2e5db402c, July 2024,
// Megatron-Core r0.8.0): GPT models on H100 SXM, vocabulary 131,072, sequence 4096, t, p and d = 48
// given; micro-batch, interleaving, recomputation and sequence parallelism are not, so napkin's own
// best choice for them (plan search with t, p and cp = 1 fixed) is compared. MFU there is
// model FLOPs (Megatron's num_floating_point_operations: K-eq7 for these models) / 989.5 TFLOP/s.
struct MegatronCoreRow {
  const char* name;
  long long heads, h, layers, tp, pp, batch;
  double mfu;
};
constexpr MegatronCoreRow megatron_core[] = {
    {"GPT 1.7B", 16, 2048, 24, 1, 1, 192, 0.413},    {"GPT 7.1B", 32, 4096, 30, 2, 1, 192, 0.471},
    {"GPT 16B", 48, 6144, 32, 4, 1, 192, 0.494},     {"GPT 32B", 56, 7168, 48, 8, 1, 192, 0.464},
    {"GPT 70B", 64, 8192, 84, 8, 2, 384, 0.424},     {"GPT 119B", 80, 10240, 92, 8, 4, 768, 0.425},
    {"GPT 177B", 96, 12288, 96, 8, 6, 1152, 0.437},  {"GPT 314B", 128, 16384, 96, 8, 8, 1536, 0.479},
    {"GPT 462B", 144, 18432, 112, 8, 16, 3072, 0.465},
};

// H100 SXM 80GB as the h100-sxm spec has it: 989.5 TFLOP/s bf16 dense, 3.35 TB/s, NVLink 4
// 450 GB/s per direction in 8-GPU nodes, one 400 Gb/s NIC (50 GB/s) per GPU; t, p and cp = 1
// fixed, the rest searched.
PlanQuery h100_query(long long gpus, long long tp, long long pp, long long batch, long long seq, const char* recipe) {
  PlanQuery q;
  q.gpus = gpus;
  q.tp = tp, q.pp = pp, q.cp = 1;
  q.top = 1;
  const PrecisionRecipe& r = find_recipe(recipe);
  q.step.global_batch = batch;
  q.step.seq = seq;
  q.step.bytes_per_param = bytes_per_param(find_optimizer("adam"), r);
  q.step.grad_reduce_bytes = r.grad_bytes;
  q.step.peak_flops_per_s = q.step.gemm.peak_flops_per_s = 989.5e12;
  q.step.memory_bandwidth_bytes_per_s = q.step.gemm.memory_bandwidth_bytes_per_s = 3.35e12;
  q.step.gemm.peak_efficiency = gemm_peak_efficiency("h100-sxm", Dtype::bf16);
  q.step.net.domain_gpus = 8;
  q.step.sm_count = 132;                    // h100-sxm's sm_count
  q.step.net.scale_up_bytes_per_s = 450e9;  // h100-sxm's [interconnect]
  q.step.net.scale_out_bytes_per_s = 50e9;
  q.step.net.scale_out_latency_s = 14e-6;
  q.memory.recipe = r;
  q.memory.seq = seq;
  q.memory.memory_bytes = 80e9;
  // What `napkin plan` leaves free on an NVIDIA GPU (its runtime reserve: CUDA context, NCCL,
  // workspaces, the allocator's share), so the plan compared is the one the CLI would pick.
  q.memory.runtime_reserve = true;
  const Framework megatron = load_framework("megatron");
  apply_framework(megatron, q.step);
  q.step.flash_rate = flash_rate_for(megatron.attention_kernel, "h100");  // cuDNN fused attention
  q.step.grad_reduce_bytes = r.grad_bytes;
  q.zero_stages = megatron.zero_stages;  // Megatron-Core: plain DDP or its distributed optimizer
  return q;
}

Row megatron_core_row(const MegatronCoreRow& x) {
  Model m = gpt(x.layers, x.h, x.heads, 131072);
  m.tied_embeddings = false;
  m.context = 4096;
  PlanQuery q = h100_query(x.tp * x.pp * 48, x.tp, x.pp, x.batch, 4096, "bf16-mixed-fp32-grads");  // Megatron's bf16 default
  // The README's runs overlap tensor-parallel communication too ("We perform fine-grained
  // overlapping of data-parallel (--overlap-grad-reduce --overlap-param-gather), tensor-parallel
  // (--tp-comm-overlap) and pipeline-parallel communication"), which Megatron leaves off by default.
  q.step.tp_comm_overlap = true;
  const PlanSearch found = search_plans(m, q);
  REQUIRE(!found.plans.empty());
  const StepTime& t = found.plans.front().time;
  const double l = static_cast<double>(x.layers), h = static_cast<double>(x.h), s = 4096, B = static_cast<double>(x.batch);
  const double flops = 72 * B * l * s * h * h * (1 + s / (6 * h) + 131072 / (12 * h * l));  // Korthikanti eq. (7)
  Row row;
  row.name = std::string(x.name) + " (H100)";
  row.source = "Megatron-LM README, H100 table (f2e5db402c)";
  const Layout& lay = found.plans.front().layout;
  row.layout = "t " + std::to_string(x.tp) + ", p " + std::to_string(x.pp) + ", d 48, B " + std::to_string(x.batch) + "; napkin picked b " +
               std::to_string(lay.micro_batch) + ", v " + std::to_string(lay.interleave) + ", recompute " +
               std::string(recompute_name(lay.recompute)) + ", ZeRO " + std::to_string(lay.zero);
  row.unit = "MFU";
  row.measured = x.mfu;
  row.predicted = flops / (static_cast<double>(q.gpus) * 989.5e12 * t.step_time_s);
  row.gpu = "h100", row.params = count_params(m).total, row.tp = x.tp, row.pp = x.pp, row.dp = 48, row.zero = lay.zero;
  return row;
}

// Nemotron-4 15B pre-training (Parmar et al. 2024, arXiv:2402.16819v2, §2 and Table 2): 384 DGX
// H100 nodes, "8-way tensor parallelism and data parallelism ... a distributed optimizer", sequence
// 4096, the batch ramped with the data-parallel size: dp 96 / 192 / 288 (768 / 1,536 / 2,304 GPUs),
// batch 384 / 768 / 1,152 sequences, 0.57 / 0.58 / 0.64 s an iteration (MFU 34.3 / 33.3 / 30.5%).
// The report names neither the micro-batch nor tensor-parallel overlap; NVIDIA's recorded
// pre-training config of its sibling, Nemotron-4 340B (NeMo-Framework-Launcher @ 7c842fcd,
// launcher_scripts/conf/training/nemotron/nemotron_340b.yaml: "actual GPU/GBS numbers used in
// pretraining"), runs sequence parallel, ub_tp_comm_overlap False and bf16 gradient reduction, so
// Megatron without TP overlap and the bf16-mixed recipe; napkin's search picks the micro-batch,
// recomputation and ZeRO stage, as for the Megatron-Core rows. Model: models/nemotron4-15b.toml.
Row nemotron4_15b_row(long long dp, long long batch, double seconds) {
  const Model m = SpecRegistry::builtin_only().model("nemotron4-15b");
  const PlanQuery q = h100_query(dp * 8, 8, 1, batch, 4096, "bf16-mixed");
  const PlanSearch found = search_plans(m, q);
  REQUIRE(!found.plans.empty());
  const Plan& p = found.plans.front();
  Row row;
  row.name = "Nemotron-4 15B on " + std::to_string(dp * 8) + " H100";
  row.source = "Parmar et al. 2024 (Nemotron-4 15B), Table 2";
  row.layout = "t 8, p 1, d " + std::to_string(dp) + ", B " + std::to_string(batch) + " × 4096; napkin picked b " +
               std::to_string(p.layout.micro_batch) + ", recompute " + std::string(recompute_name(p.layout.recompute)) + ", ZeRO " +
               std::to_string(p.layout.zero);
  // Throughput from the table's iteration time: B · 4096 tokens over the step, per GPU.
  const double tokens_per_gpu = static_cast<double>(batch) * 4096 / static_cast<double>(dp * 8);
  row.unit = "tokens/s per GPU";
  row.measured = tokens_per_gpu / seconds;
  row.predicted = tokens_per_gpu / p.time.step_time_s;
  row.gpu = "h100", row.params = count_params(m).total, row.tp = 8, row.pp = 1, row.dp = dp, row.zero = p.layout.zero;
  return row;
}

// Llama 3 405B pre-training (Dubey et al. 2024, "The Llama 3 Herd of Models", arXiv 2407.21783v3):
// Table 4, 8,192 H100s at t 8, p 16, d 64 and 16,384 at d 128, cp 1, sequences of 8,192 tokens,
// 16M tokens a step (2,048 sequences), BF16 MFU 43% and 41%. §3.3.2 says how it ran, and the row
// runs it so: "we could pre-train Llama 3 on sequences of 8K tokens without activation
// checkpointing" (recompute none); FSDP "shards optimizer states and gradients, but for model
// shards we do not reshard after forward", and "we use FP32 gradient accumulation during backward
// computation over multiple micro-batches and also reduce-scatter gradients in FP32": the
// micro-batches accumulate into a full fp32 buffer reduced once a step and the weights stay
// gathered through it, which is napkin's ZeRO 1 (Megatron's distributed optimizer) with the
// fp32-grads recipe. The pipeline is interleaved, its number of virtual stages not
// published, so napkin picks it and the micro-batch as for the Megatron-Core rows. Meta fitted the
// run in 80 GB by taking one layer off the first and the last stages and freeing each stage's
// input and output early (§3.3.2); napkin now splits the layers so (7, 8, …, 8, 7: the embedding and
// the loss take a layer's place, core/layout.hpp pipeline_split) but does not free the stage's input
// and output early, and still asks more than 80 GB for it (102 GB), so the plan is chosen on time
// alone and napkin's memory for it is printed with the row (docs/validation/README.md reports the miss). Model:
// meta-llama/Llama-3.1-405B config.json; the framework's kernels are Megatron-Core's.
Row llama3_405b_row(long long gpus, double mfu) {
  Model m;
  m.key = "llama3.1-405b";
  m.layers = 126, m.d_model = 16384, m.heads = 128, m.kv_heads = 8, m.head_dim = 128, m.d_ff = 53248;
  m.mlp = MlpKind::swiglu, m.vocab = 128256, m.context = 8192, m.tied_embeddings = false;
  m.positions = Positions::rotary, m.norm = NormKind::rmsnorm, m.bias = BiasKind::none;
  PlanQuery q = h100_query(gpus, 8, 16, 2048, 8192, "bf16-mixed-fp32-grads");
  q.step.net.scale_up_latency_s = 3.4e-6;
  q.recompute = Recompute::none;
  q.zero = 1;
  const double capacity_bytes = q.memory.memory_bytes;
  q.memory.memory_bytes = 0;  // chosen on time alone (see above)
  const PlanSearch found = search_plans(m, q);
  REQUIRE(!found.plans.empty());
  const Plan& p = found.plans.front();
  MemorySetup at_80gb = q.memory;
  at_80gb.memory_bytes = capacity_bytes;
  const PlanMemory mem = plan_memory(m, p.layout, at_80gb, 2048 / (p.layout.dp * p.layout.micro_batch));
  // The miss this row documents (docs/validation/README.md): napkin's memory for a layout Meta ran
  // in 80 GB. When the memory model learns Meta's first-stage savings this fails: update the page.
  CHECK(mem.total_bytes > capacity_bytes);
  Row row;
  row.name = "Llama 3 405B on " + std::to_string(gpus) + " H100";
  row.source = "Dubey et al. 2024 (Llama 3), Table 4 and §3.3.2";
  row.layout = "t 8, p 16, d " + std::to_string(gpus / 128) + ", B 2048 × 8192, recompute none, ZeRO 1, fp32 reduce; napkin picked b " +
               std::to_string(p.layout.micro_batch) + ", v " + std::to_string(p.layout.interleave) + " (napkin's memory for it " +
               std::to_string(std::lround(mem.total_bytes / 1e9)) + " GB, " + std::to_string(std::lround(mem.available_bytes / 1e9)) +
               " GB free of 80 GB after the runtime reserve)";
  row.unit = "MFU";
  row.measured = mfu;
  row.predicted = p.time.mfu;
  row.gpu = "h100", row.params = count_params(m).total, row.tp = 8, row.pp = 16, row.dp = gpus / 128, row.zero = p.layout.zero;
  return row;
}

}  // namespace

TEST_CASE("H100, layouts partly published (Megatron-Core): large models within 20%; small ones are napkin's known gap") {
  std::vector<Row> all;
  for (const MegatronCoreRow& x : megatron_core) all.push_back(megatron_core_row(x));
  for (const Row& r : all) {
    INFO(r.name << ": predicted MFU " << r.predicted << " vs measured " << r.measured);
    // h ≥ 7168: within 20%. Below, napkin overpredicts (docs/METHODOLOGY.md §6.9): the assertion
    // records the direction, so a fix shows up here.
    if (r.name.find("1.7B") != std::string::npos || r.name.find("7.1B") != std::string::npos || r.name.find("16B") != std::string::npos)
      CHECK(r.error() > 0);
    else
      CHECK(std::fabs(r.error()) <= 0.20);
  }
  test::print_rows(all);
  test::check_recorded(all);
}

TEST_CASE("Nemotron-4 15B, tp 8 as data parallelism grows 96 → 288: napkin reads it fast and flat") {
  const std::vector<Row> all = {nemotron4_15b_row(96, 384, 0.57), nemotron4_15b_row(192, 768, 0.58), nemotron4_15b_row(288, 1152, 0.64)};
  for (const Row& r : all) {
    INFO(r.name << ": predicted " << r.predicted << " vs measured " << r.measured << " tokens/s per GPU (" << r.layout << ")");
    // napkin's fastest layout beats the run (docs/validation: the micro-batch is not published, and
    // the measured step grows with dp while napkin's stays within 3%): the direction is recorded.
    CHECK(r.error() > 0);
    CHECK(r.error() <= 0.40);
  }
  CHECK(all[2].predicted > 0.97 * all[0].predicted);
  test::print_rows(all);
  test::check_recorded(all);
}

TEST_CASE("Llama 3 405B (Meta, interleaved, as §3.3.2 ran it): within 15%; napkin's memory model over 80 GB for it") {
  const std::vector<Row> all = {llama3_405b_row(8192, 0.43), llama3_405b_row(16384, 0.41)};
  for (const Row& r : all) {
    INFO(r.name << ": predicted MFU " << r.predicted << " vs measured " << r.measured << " (" << r.layout << ")");
    // Priced without recomputation, as Meta ran it, the rows read +3.6% and -3.8%; with the full
    // recomputation napkin's memory model would ask for (v 4), 21% and 26% below.
    CHECK(std::fabs(r.error()) <= 0.15);
    CHECK(r.layout.find("v 1 ") == std::string::npos);  // an interleaved schedule, as Meta ran
  }
  test::print_rows(all);
  test::check_recorded(all);
}

TEST_CASE("published runs: every row within 20%, the mean within 10%, one set of constants") {
  const std::vector<Row> all = rows();
  REQUIRE(all.size() == 25);
  double sum_abs = 0, sum = 0;
  for (const Row& r : all) {
    INFO(r.name << ": predicted " << r.predicted << " vs measured " << r.measured << " " << r.unit);
    CHECK(std::fabs(r.error()) <= 0.20);
    sum_abs += std::fabs(r.error());
    sum += r.error();
  }
  const double n = static_cast<double>(all.size());
  CHECK(sum_abs / n <= 0.10);
  CHECK(std::fabs(sum / n) <= 0.10);
  test::print_rows(all);
  test::check_recorded(all);
  if (test::table_wanted("1")) {
    std::printf("\nmean |error| %.1f%%, mean error %+.1f%%, worst %+.1f%%\n", 100 * sum_abs / n, 100 * sum / n, [&] {
      double worst = 0;
      for (const Row& r : all)
        if (std::fabs(r.error()) > std::fabs(worst)) worst = r.error();
      return 100 * worst;
    }());
  }
}

TEST_CASE("the rows depend on what they should: the 1.7B row's 32-way all-reduce on the network") {
  // 32-way data parallelism over 4 nodes: halving the network slows the step.
  Model m = gpt(24, 2304, 24);
  Layout l;
  l.dp = 32, l.micro_batch = 16, l.recompute = Recompute::full;
  StepSetup s = selene(512);
  s.overlap_grad_reduce = false;
  const double slow_net = [&] {
    StepSetup x = s;
    x.net.scale_out_bytes_per_s /= 2;
    return step_time(m, l, x).step_time_s;
  }();
  CHECK(slow_net > step_time(m, l, s).step_time_s);
}
