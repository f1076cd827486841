// Memory per GPU under a layout. Expected values come from Korthikanti et al. 2022 (Table 2,
// §4.2.3), Megatron-LM's theoretical_memory_usage.py evaluated by hand for a stated config,
// DeepSpeed's documented estimator outputs, and hand arithmetic in the comments — never from
// napkin's own output.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "core/layout_memory.hpp"
#include "spec/registry.hpp"

using namespace napkin;

namespace {

// GPT-3 175B as Megatron-LM would run it (Brown et al. 2020 Table 2.1; Megatron's defaults:
// tied embeddings, vocabulary padded to 51200, LayerNorm); no biases, because Megatron's
// theoretical_memory_usage.py counts none.
Model gpt3_megatron() {
  Model m;
  m.key = "gpt3";
  m.layers = 96, m.d_model = 12288, m.heads = 96, m.kv_heads = 96, m.head_dim = 128, m.d_ff = 4 * 12288;
  m.mlp = MlpKind::gelu, m.vocab = 51200, m.context = 2048, m.tied_embeddings = true;
  m.positions = Positions::rotary, m.bias = BiasKind::none, m.norm = NormKind::layernorm;
  return m;
}
Model llama3_70b() {  // meta-llama/Meta-Llama-3-70B config.json
  Model m;
  m.key = "llama3-70b";
  m.layers = 80, m.d_model = 8192, m.heads = 64, m.kv_heads = 8, m.head_dim = 128, m.d_ff = 28672;
  m.mlp = MlpKind::swiglu, m.vocab = 128256, m.context = 8192, m.positions = Positions::rotary, m.norm = NormKind::rmsnorm;
  return m;
}

MemorySetup setup(const char* recipe, long long seq, bool flash, bool dropout) {
  MemorySetup s;
  s.recipe = find_recipe(recipe);
  s.seq = seq, s.flash_attention = flash, s.dropout = dropout;
  return s;
}

Layout layout(long long tp, long long pp, long long dp, int zero) {
  Layout l;
  l.tp = tp, l.pp = pp, l.dp = dp, l.zero = zero;
  return l;
}

ActivationConfig korthikanti(long long tp, bool sp, Recompute r) {
  ActivationConfig c;
  c.micro_batch = 1, c.seq = 2048, c.recompute = r, c.flash_attention = false, c.dropout = true, c.value_bytes = 2;
  c.tp = tp, c.sequence_parallel = sp;
  return c;
}

}  // namespace

TEST_CASE("Korthikanti Table 2: one GPT-3 layer at t = 8") {
  // s = 2048, b = 1, h = 12288, a = 96: sbh = 25,165,824, 5as/h = 80.
  const Model m = gpt3_megatron();
  // Tensor parallel: sbh(10 + 24/t + 5as/(ht)) = sbh(10 + 3 + 10) = 23·sbh = 578,813,952.
  CHECK(layer_activations(m, korthikanti(8, false, Recompute::none), false).stored_bytes == doctest::Approx(578813952.0));
  // Tensor + sequence parallel: sbh(34/t + 5as/(ht)) = 14.25·sbh = 358,612,992.
  CHECK(layer_activations(m, korthikanti(8, true, Recompute::none), false).stored_bytes == doctest::Approx(358612992.0));
  // Tensor parallel + selective recompute: sbh(10 + 24/t) = 13·sbh = 327,155,712.
  CHECK(layer_activations(m, korthikanti(8, false, Recompute::selective), false).stored_bytes == doctest::Approx(327155712.0));
  // Tensor + sequence parallel + selective: sbh·34/t = 4.25·sbh = 106,954,752.
  CHECK(layer_activations(m, korthikanti(8, true, Recompute::selective), false).stored_bytes == doctest::Approx(106954752.0));
  // Full recompute: 2·sbh = 50,331,648 (the sequence-parallel shard 2·sbh/t = 6,291,456 with SP).
  CHECK(layer_activations(m, korthikanti(8, false, Recompute::full), false).stored_bytes == doctest::Approx(50331648.0));
  CHECK(layer_activations(m, korthikanti(8, true, Recompute::full), false).stored_bytes == doctest::Approx(6291456.0));
  // t = 1 is the paper's eq. 1: sbh(34 + 5as/h) = 114·sbh.
  CHECK(layer_activations(m, korthikanti(1, false, Recompute::none), false).stored_bytes == doctest::Approx(114 * 25165824.0));
}

TEST_CASE("Megatron-LM theoretical_memory_usage.py, GPT-3 175B on t 8, p 8, d 16, by hand") {
  // The config: the model above, seq 2048, micro-batch 1, --sequence-parallel, --recompute-granularity
  // selective, --use-distributed-optimizer (bf16 params, fp32 grads: 6 + 12/d bytes/param), no
  // interleaving, dropout on (Megatron's 34 counts the masks), no flash attention.
  const Model m = gpt3_megatron();
  Layout l = layout(8, 8, 16, 1);
  l.sequence_parallel = true;
  l.recompute = Recompute::selective;
  const LayoutMemory r = memory_per_gpu(m, l, setup("bf16-mixed-fp32-grads", 2048, false, true));
  CHECK(r.most_loaded_stage == 0);
  // Weights: Megatron's most loaded shard = (12h²·L/p + h·v)/t + (4h·L + 2h)/p
  //   = (21,743,271,936 + 629,145,600)/8 + (4,718,592 + 24,576)/8 = 2,796,552,192 + 592,896 = 2,797,145,088 params
  //   × 6.75 = 18,880,729,344 bytes. napkin puts the final norm (2h = 24,576 params) on the last
  //   stage only instead of 1/p of it everywhere: 3,072 params fewer, 2,797,142,016 × 6.75 = 18,880,708,608.
  CHECK(r.first.params() == doctest::Approx(2797142016.0));
  CHECK(r.model_states_bytes == doctest::Approx(18880708608.0));
  CHECK(r.dense_bytes_per_param.total() == doctest::Approx(6.75));
  // Activations (compute_activation_memory, the SP path): [34·sbh·L + 8·s·b·p + s·b·h·p]/t
  //   = (82,141,249,536 + 131,072 + 201,326,592)/8 = 10,292,838,400.
  // napkin keeps the int64 token ids whole on every tensor-parallel rank (8·s·b·p = 131,072 rather
  // than /8): 10,292,838,400 + 131,072·7/8 = 10,292,953,088.
  CHECK(r.activations_bytes == doctest::Approx(10292953088.0));
  CHECK(r.first.in_flight == 8);
  CHECK(r.first.layers.layers == 12);
  // The last stage holds 1 micro-batch: 12 layers · 106,954,752 + the head inputs 4·sbh/8 = 12,582,912
  // + fp32 logits 4·s·b·v/8 = 52,428,800.
  CHECK(r.last.activations_bytes == doctest::Approx(12 * 106954752.0 + 12582912.0 + 52428800.0));
  // ... and a copy of the tied embedding as its head, plus the final LayerNorm.
  CHECK(r.last.params() == doctest::Approx(2797142016.0 + 24576.0));
}

TEST_CASE("Korthikanti §4.2.3: the first stage holds sbhL/t·34 whatever p; interleaving adds (1 + (p−1)/(pv))") {
  const Model m = gpt3_megatron();
  Layout l = layout(8, 8, 1, 0);
  l.sequence_parallel = true;
  l.recompute = Recompute::selective;
  const MemorySetup s = setup("bf16-mixed", 2048, false, true);
  // 12 layers × 106,954,752 × 8 micro-batches = 96 × 106,954,752 = 10,267,656,192.
  CHECK(memory_per_gpu(m, l, s).first.layers_in_flight_bytes == doctest::Approx(10267656192.0));
  l.interleave = 3;  // 96 layers = 8 stages × 3 chunks of 4
  // × (1 + 7/24): 1,283,457,024 × 31/3 = 13,262,389,248.
  CHECK(memory_per_gpu(m, l, s).first.layers_in_flight_bytes == doctest::Approx(13262389248.0));
}

TEST_CASE("llama3-70b on 1024 GPUs: tp 8, pp 4, dp 32, ZeRO-1, seq 8192, SP, selective, flash") {
  // Per tensor-parallel rank and layer: Q and O 2·8192·8192, K and V 2·8192·1024, over 8 →
  // 18,874,368; MLP 3·8192·28672/8 = 88,080,384; two RMSNorms 16,384: 106,971,136.
  // Stage 0: 20 layers (2,139,422,720) + the embedding 128256/8 · 8192 = 131,334,144 → 2,270,756,864.
  // bf16-mixed AdamW, ZeRO-1 over 32: 2 + 2 + 12/32 = 4.375 B/param → 9,934,561,280 bytes.
  const Model m = llama3_70b();
  Layout l = layout(8, 4, 32, 1);
  l.sequence_parallel = true;
  l.recompute = Recompute::selective;
  const LayoutMemory r = memory_per_gpu(m, l, setup("bf16-mixed", 8192, true, false));
  CHECK(r.first.params() == doctest::Approx(2270756864.0));
  CHECK(r.model_states_bytes == doctest::Approx(9934561280.0));
  // Activations per token per layer, before the split: six h-wide tensors 6·2·8192 = 98,304; K, V
  // 2·2·1024 = 4,096; logsumexp 4·64 = 256; gate, up, down inputs 3·2·28672 = 172,032: 274,688 bytes;
  // /8 under SP = 34,336; × 8192 tokens = 281,280,512 per layer. 20 layers × 4 in flight =
  // 22,502,440,960, + token ids 8·8192 × 4 = 262,144: 22,502,703,104.
  CHECK(r.activations_bytes == doctest::Approx(22502703104.0));
  CHECK(r.total_bytes == doctest::Approx(32437264384.0));
  CHECK(r.most_loaded_stage == 0);
  // Last stage: 2,270,765,056 params (the head instead of the embedding, + the final norm) ×
  // 4.375 = 9,934,597,120; activations 20 × 281,280,512 + head inputs 4·8192·8192/8 = 33,554,432 +
  // logits 4·8192·128256/8 = 525,336,576 → 6,184,501,248; total 16,119,098,368.
  CHECK(r.last.total_bytes == doctest::Approx(16119098368.0));
  // H100 datasheet 80 GB: fits, 47,562,735,616 bytes to spare.
  MemorySetup s = setup("bf16-mixed", 8192, true, false);
  s.memory_bytes = 80e9;
  const LayoutMemory v = memory_per_gpu(m, l, s);
  CHECK(v.fits);
  CHECK(v.headroom_bytes == doctest::Approx(80e9 - 32437264384.0));
}

TEST_CASE("expert parallelism: Mixtral 8x7B on 8 GPUs, ep 8, Megatron's estimator by hand") {
  // mistralai/Mixtral-8x7B-v0.1: 46,702,792,704 params (HF). Per layer: attention 2·4096² + 2·4096·1024 =
  // 41,943,040, two RMSNorms 8,192, router 8·4096 = 32,768 (41,984,000 replicated over the 8 GPUs);
  // experts 8 × 3·4096·14336 = 1,409,286,144, of which one GPU holds 1/8 = 176,160,768.
  // Dense on a GPU: 32 · 41,984,000 + embedding and untied head 2·32000·4096 + final norm 4096 = 1,605,636,096;
  // experts 32 · 176,160,768 = 5,637,144,576.
  Model m = llama3_70b();
  m.key = "mixtral-8x7b";
  m.layers = 32, m.d_model = 4096, m.heads = 32, m.d_ff = 14336, m.vocab = 32000;
  m.moe = MoeSpec{8, 2, 0, 14336, 0};
  Layout l = layout(1, 1, 8, 1);
  l.ep = 8;
  const LayoutMemory r = memory_per_gpu(m, l, setup("bf16-mixed-fp32-grads", 0, true, false));
  CHECK(r.first.dense_params == doctest::Approx(1605636096.0));
  CHECK(r.first.expert_params == doctest::Approx(5637144576.0));
  // compute_weight_and_optimizer_memory with the distributed optimizer: dense × (6 + 12/dp) with dp = 8,
  // experts × (6 + 12/edp) with edp = world/(etp·ep·pp) = 8/8 = 1: 1,605,636,096 · 7.5 + 5,637,144,576 · 18
  // = 12,042,270,720 + 101,468,602,368 = 113,510,873,088.
  CHECK(r.model_states_bytes == doctest::Approx(113510873088.0));
  CHECK(l.expert_zero_ranks() == 1);
}

TEST_CASE("ZeRO-3 gather buffer and offload, against DeepSpeed's estimators") {
  // DeepSpeed docs/code-docs/source/memory.rst, estimate_zero3_model_states_mem_needs_all_cold for
  // 2851M params, 32M largest layer, 1 node × 8 GPUs: per GPU 6.09GB (nothing offloaded), 0.78GB
  // (optimizer offloaded), 0.12GB (params and optimizer); per CPU 63.72GB and 71.69GB, 1.43GB (GiB).
  const double GiB = 1024.0 * 1024 * 1024;
  CHECK(deepspeed_zero3_estimate(2851e6, 32e6, 8, 1, Offload::none).gpu_bytes / GiB == doctest::Approx(6.09).epsilon(0.001));
  CHECK(deepspeed_zero3_estimate(2851e6, 32e6, 8, 1, Offload::none).cpu_bytes / GiB == doctest::Approx(1.43).epsilon(0.003));
  CHECK(deepspeed_zero3_estimate(2851e6, 32e6, 8, 1, Offload::optimizer).gpu_bytes / GiB == doctest::Approx(0.78).epsilon(0.005));
  CHECK(deepspeed_zero3_estimate(2851e6, 32e6, 8, 1, Offload::optimizer).cpu_bytes / GiB == doctest::Approx(63.72).epsilon(0.001));
  CHECK(deepspeed_zero3_estimate(2851e6, 32e6, 8, 1, Offload::parameters).gpu_bytes / GiB == doctest::Approx(0.12).epsilon(0.01));
  CHECK(deepspeed_zero3_estimate(2851e6, 32e6, 8, 1, Offload::parameters).cpu_bytes / GiB == doctest::Approx(71.69).epsilon(0.001));

  // napkin's own path gives DeepSpeed's rule for llama3-70b (P = 70,553,706,496, HF safetensors):
  // its largest layer is the 128256 × 8192 embedding (and head), 1,050,673,152 params →
  // 4 × = 4,202,692,608 bytes (issue 10's "4.2 GB"). On 64 GPUs with the 18-byte recipe:
  // 18·P/64 = 19,843,229,952 + 4,202,692,608 = 24,045,922,560.
  const Model m = llama3_70b();
  const MemorySetup ds = setup("deepspeed", 0, true, false);
  const LayoutMemory z3 = memory_per_gpu(m, layout(1, 1, 64, 3), ds);
  CHECK(z3.first.largest_layer_params == 1050673152.0);
  CHECK(z3.first.gather_buffer_bytes == 4202692608.0);
  CHECK(z3.model_states_bytes == doctest::Approx(24045922560.0));
  CHECK(z3.activations_bytes == 0);  // no sequence given: states only
  // ZeRO-Offload: 4L + 2P/64 = 4,202,692,608 + 2,204,803,328 = 6,407,495,936 on the GPU; the host of
  // an 8-GPU node 16·P/8 = 141,107,412,992 (DeepSpeed: × 1.5 = 211,661,119,488).
  MemorySetup off = ds;
  off.offload = Offload::optimizer;
  const LayoutMemory o = memory_per_gpu(m, layout(1, 1, 64, 3), off);
  CHECK(o.model_states_bytes == doctest::Approx(6407495936.0));
  CHECK(o.host_bytes_per_node == doctest::Approx(141107412992.0));
  CHECK(o.host_bytes_per_node_deepspeed == doctest::Approx(211661119488.0));
  // ZeRO-Infinity (params too): the GPU keeps the buffer; a node's host 18·P/8 = 158,745,839,616.
  off.offload = Offload::parameters;
  const LayoutMemory inf = memory_per_gpu(m, layout(1, 1, 64, 3), off);
  CHECK(inf.model_states_bytes == doctest::Approx(4202692608.0));
  CHECK(inf.host_bytes_per_node == doctest::Approx(158745839616.0));
  // ZeRO-2 with the optimizer offloaded: DeepSpeed's estimate_zero2 gives 2·P on the GPU.
  const LayoutMemory z2 = memory_per_gpu(m, layout(1, 1, 64, 2), [&] {
    MemorySetup x = ds;
    x.offload = Offload::optimizer;
    return x;
  }());
  CHECK(z2.model_states_bytes == doctest::Approx(2 * 70553706496.0));
  CHECK_THROWS_WITH_AS(memory_per_gpu(m, layout(1, 1, 64, 2), off), doctest::Contains("--offload params needs --zero 3"), Error);
}

TEST_CASE("one GPU and plain data parallelism are the tp = pp = cp = ep = 1 case") {
  // Llama 3 8B (8,030,261,248 params, HF safetensors), bf16-mixed AdamW, 16 B/param.
  const SpecRegistry reg = SpecRegistry::builtin_only();
  const Model m = reg.model("llama3-8b");
  const LayoutMemory one = memory_per_gpu(m, layout(1, 1, 1, 0), setup("bf16-mixed", 0, true, false));
  CHECK(one.model_states_bytes == doctest::Approx(16 * 8030261248.0));
  CHECK(one.first.weights_bytes == doctest::Approx(2 * 8030261248.0));
  CHECK(one.first.optimizer_bytes == doctest::Approx(8 * 8030261248.0));
  // ZeRO-2 over 8: 2 + 14/8 = 3.75 B/param.
  CHECK(memory_per_gpu(m, layout(1, 1, 8, 2), setup("bf16-mixed", 0, true, false)).model_states_bytes ==
        doctest::Approx(3.75 * 8030261248.0));
  // Every shipped model: one stage at t = 1 holds exactly count_params' total.
  for (const auto& [key, model] : reg.all_models()) {
    const LayoutMemory r = memory_per_gpu(model, layout(1, 1, 1, 0), setup("bf16-mixed", 0, true, false));
    CHECK_MESSAGE(r.first.params() == doctest::Approx(count_params(model).total).epsilon(1e-12), key);
  }
}

TEST_CASE("O(1) in layers: a spec claiming 10^12 layers answers at once") {
  // Issue 11: time linear in layers hung on huge counts. Llama 3 70B's layer, 10^12 times, at t = 1:
  // Q, O 2·8192² + K, V 2·8192·1024 = 150,994,944; MLP 3·8192·28672 = 704,643,072; two norms 16,384
  // → 855,654,400 a layer; plus the embedding and head 2·128256·8192 and the final norm 8192.
  Model m = llama3_70b();
  m.layers = 1000000000000LL;
  MemorySetup s = setup("bf16-mixed", 0, true, false);
  s.optimizer = find_optimizer("adafactor");  // its state count is O(1) in layers too
  const LayoutMemory r = memory_per_gpu(m, layout(1, 1, 1, 0), s);
  CHECK(r.first.params() == doctest::Approx(855654400.0 * 1e12 + 2 * 128256.0 * 8192 + 8192));
}

TEST_CASE("a parameter count without an architecture: states only") {
  // ZeRO paper Figure 1: Ψ = 7.5B on 64 GPUs, K = 12: P_os+g 16.6 GB = 2Ψ + 14Ψ/64.
  const LayoutMemory r = memory_for_params(7.5e9, layout(1, 1, 64, 2), setup("fp16-mixed", 0, true, false));
  CHECK(r.model_states_bytes == doctest::Approx(16.640625e9));
  CHECK_THROWS_WITH_AS(memory_for_params(7.5e9, layout(8, 1, 8, 0), MemorySetup{}), doctest::Contains("need --model"), Error);
  CHECK_THROWS_WITH_AS(memory_for_params(7.5e9, layout(1, 1, 1, 3), MemorySetup{}), doctest::Contains("equals --zero 0"), Error);
  // Largest trainable model, fp32 AdamW (16 B/param) on an 80 GB H100: 80e9/16 = 5e9; with ZeRO-3 on 8: 40e9.
  MemorySetup s = setup("fp32", 0, true, false);
  s.memory_bytes = 80e9;
  CHECK(memory_for_params(1e9, layout(1, 1, 1, 0), s).max_params == doctest::Approx(5e9));
  CHECK(memory_for_params(1e9, layout(1, 1, 8, 3), s).max_params == doctest::Approx(40e9));
  CHECK(memory_for_params(1e9, layout(1, 1, 8, 3), s).max_params_single_gpu == doctest::Approx(5e9));
}

TEST_CASE("hints: what would make a layout fit") {
  // llama3-70b on 8 GPUs with tp 8 alone: states 70.55B/8 ≈ 8.82B params/GPU × 16 B = 141 GB > 80 GB.
  const Model m = llama3_70b();
  MemorySetup s = setup("bf16-mixed", 8192, true, false);
  s.memory_bytes = 80e9;
  const Layout l = layout(8, 1, 8, 0);  // 64 GPUs
  const LayoutMemory r = memory_per_gpu(m, l, s);
  CHECK_FALSE(r.fits);
  const auto hints = fit_hints(m, l, s);
  REQUIRE_FALSE(hints.empty());
  bool zero3 = false;
  for (const auto& h : hints) {
    CHECK(h.saved_bytes > 0);
    CHECK(h.total_bytes == doctest::Approx(r.total_bytes - h.saved_bytes));
    CHECK(h.fits == (h.headroom_bytes >= 0));  // never "fits, headroom -18 GB"
    if (h.flags == "--zero 3") {
      zero3 = true;
      CHECK(h.fits);  // 16 B/param over 8 ranks: 141 GB / 8 ≈ 17.6 GB of states
      // Its headroom is that layout's own (the allocator's reserve follows its smaller peak).
      Layout z3 = l;
      z3.zero = 3;
      CHECK(h.headroom_bytes == doctest::Approx(memory_per_gpu(m, z3, s).headroom_bytes));
    }
  }
  CHECK(zero3);
  // Ranked: those that fit first, then the cheapest in speed, then the most bytes saved.
  for (std::size_t i = 1; i < hints.size(); ++i) {
    const FitHint &a = hints[i - 1], &b = hints[i];
    CHECK(a.fits >= b.fits);
    if (a.fits == b.fits) CHECK(a.speed_cost <= b.speed_cost);
    if (a.fits == b.fits && a.speed_cost == b.speed_cost) CHECK(a.saved_bytes >= b.saved_bytes);
  }
  // --zero 3 (1.5× DDP's traffic: moderate) fits and comes before --zero 3 --offload params
  // (weights over PCIe every step: large), though the latter saves more bytes.
  CHECK(hints.front().flags == "--zero 3");
  CHECK(hints.front().speed_cost == SpeedCost::moderate);
}

TEST_CASE("pinned: ZeRO-1 with the optimizer offloaded shards the host copy over dp too") {
  // ZeRO-1 partitions the optimizer states (Rajbhandari et al. 2020 §5.1, P_os), and ZeRO-Offload
  // moves each rank's partition to its host (DeepSpeed stage_1_and_2.py: cpu_offload keeps
  // single_partition_of_fp32_groups on the CPU). 8e9 params, bf16-mixed AdamW, 8 GPUs:
  // host per GPU (4 fp32 grads + 4 master + 8 Adam) / 8 = 2 B/param = 16e9 bytes, a node of 8
  // GPUs 128e9 — not 16 B/param = 128e9 per GPU, as if ZeRO-1 kept the full states.
  MemorySetup s = setup("bf16-mixed", 0, true, false);
  s.offload = Offload::optimizer;
  const LayoutMemory r = memory_for_params(8e9, layout(1, 1, 8, 1), s);
  CHECK(r.host_bytes_per_gpu == doctest::Approx(16e9));
  CHECK(r.host_bytes_per_node == doctest::Approx(128e9));
  // On the GPU only the bf16 weights stay: 2 B/param = 16e9.
  CHECK(r.model_states_bytes == doctest::Approx(16e9));
  // The same through the architecture path: Llama 3 70B (70,553,706,496 params) on 8 GPUs.
  const LayoutMemory a = memory_per_gpu(llama3_70b(), layout(1, 1, 8, 1), s);
  CHECK(a.host_bytes_per_gpu == doctest::Approx(2 * 70553706496.0));
  // ZeRO-0 with the optimizer offloaded (DeepSpeed needs ZeRO ≥ 1 for it, napkin keeps the
  // unsharded rule): every GPU's host copy is the whole 16 B/param.
  const LayoutMemory z0 = memory_for_params(8e9, layout(1, 1, 8, 0), s);
  CHECK(z0.host_bytes_per_gpu == doctest::Approx(128e9));
}

TEST_CASE("pinned: K/V projections when tp exceeds the KV heads are replicated, not split further") {
  // Llama 3 70B (h = 8192, 8 KV heads of 128): W_K and W_V are 2·8192·1024 = 16,777,216 params a
  // layer. At tp 16 each rank keeps one whole KV head (a serving engine replicates a head over
  // tp/kv = 2 ranks; training cannot split them so): 16,777,216 / 8 = 2,097,152 a rank, not / 16 = 1,048,576. Q and O: 2·8192·8192 / 16 =
  // 8,388,608; MLP 3·8192·28672 / 16 = 44,040,192; two RMSNorms 2·8192 = 16,384 replicated.
  // Per layer per rank 2,097,152 + 8,388,608 + 44,040,192 + 16,384 = 54,542,336.
  // 80 layers over pp 4: 20 a stage; the first adds the embedding 128256/16 · 8192 = 65,667,072:
  // 20 · 54,542,336 + 65,667,072 = 1,156,513,792.
  Layout served = layout(16, 4, 1, 0);
  served.replicate_kv_heads = true;
  const LayoutMemory r = memory_per_gpu(llama3_70b(), served, setup("bf16-mixed", 0, true, false));
  CHECK(r.first.dense_params == doctest::Approx(1156513792.0));
}
