// plan --etp: the routed experts' own tensor-parallel degree, and Megatron-Core's MoE parallel
// folding (Liu et al. 2025, arXiv:2504.14960): below tp, the expert groups are carved out of
// tp·cp·dp together, so a layout NVIDIA ran (Qwen3-235B-A22B at tp 2, pp 8, ep 32 on 256 H100s,
// Megatron-LM examples/moe_recipes) is priced instead of refused (issue 15: "a layout given in
// full is priced").
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "core/layout.hpp"
#include "core/moe_dispatch.hpp"
#include "core/step_time.hpp"
#include "core/step_gemms.hpp"
#include "spec/registry.hpp"
#include "spec/spec_loader.hpp"
#include "step_toy.hpp"

using namespace napkin;
using napkin::test::run_napkin;

namespace {
const Model& qwen235() {
  static const Model m = SpecRegistry::builtin_only().model("qwen3-235b-a22b");
  return m;
}

Layout layout(long long tp, long long pp, long long dp, long long ep, long long etp) {
  Layout l;
  l.tp = tp, l.pp = pp, l.dp = dp, l.ep = ep, l.etp = etp;
  return l;
}
}  // namespace

TEST_CASE("--etp: which layouts Megatron-Core's folding allows") {
  // 256 GPUs at tp 2, pp 8: dp 16. ep 32 does not divide dp·cp = 16, so without folding it is refused.
  const auto unfolded = layout_problem(qwen235(), layout(2, 8, 16, 32, 0));
  REQUIRE(unfolded);
  CHECK(unfolded->find("--ep 32 does not divide dp·cp = 16") != std::string::npos);
  CHECK(unfolded->find("--etp") != std::string::npos);  // it says what would allow it
  // At etp 1 the expert group folds over tp·cp·dp = 32: ep·etp = 32 divides it.
  CHECK_FALSE(layout_problem(qwen235(), layout(2, 8, 16, 32, 1)));
  // ep 64 · etp 1 = 64 does not divide 32.
  const auto wide = layout_problem(qwen235(), layout(2, 8, 16, 64, 1));
  REQUIRE(wide);
  CHECK(wide->find("--ep 64 × --etp 1 does not divide tp·cp·dp = 32") != std::string::npos);
  // etp must divide tp, and needs experts.
  CHECK(layout_problem(qwen235(), layout(4, 1, 1, 1, 3))->find("--etp 3 does not divide --tp 4") != std::string::npos);
  CHECK(layout_problem(test::toy(), layout(1, 1, 1, 1, 1))->find("needs a mixture-of-experts model") != std::string::npos);
  // The expert-data-parallel group: tp·cp·dp / (etp·ep) = 2·16 / 32 = 1 rank; unfolded, dp·cp/ep.
  CHECK(layout(2, 8, 16, 32, 1).expert_zero_ranks() == 1);
  CHECK(layout(2, 8, 16, 8, 0).expert_zero_ranks() == 2);
  CHECK(layout(2, 8, 16, 8, 2).expert_zero_ranks() == 2);
}

TEST_CASE("--etp 1: each rank's experts are whole and see its own share of the tokens") {
  // Qwen3-235B-A22B, one 4096-token sequence, tp 2. Unfolded (etp = tp = 2): every TP rank sees all
  // 4096 tokens' 8 copies, 32,768 assignments over 128 experts = 256 rows each, experts 1536/2 =
  // 768 wide. Folded (etp 1): each rank dispatches its 2048 tokens, 16,384 assignments = 128 rows,
  // to whole 1536-wide experts. The FLOPs per rank are the same: 256·768 = 128·1536.
  auto expert_up = [](long long etp) {
    for (const Gemm& g : step_gemms(qwen235(), StepConfig{1, 4096, 2, etp}))
      if (g.name == "moe.expert.up") return g;
    FAIL("no moe.expert.up");
    return Gemm{};
  };
  const Gemm unfolded = expert_up(0), folded = expert_up(1);
  CHECK(unfolded.m == 256);
  CHECK(unfolded.n == 768);
  CHECK(folded.m == 128);
  CHECK(folded.n == 1536);
  CHECK(folded.k == 4096);
  CHECK(folded.flops == unfolded.flops);
}

TEST_CASE("--etp 1 on a toy MoE: experts split over ep only, no tensor-parallel gather, a packed all-to-all") {
  // The toy (step_toy.hpp) with 8 experts of 64, top 2: 8 GPUs at tp 2, dp 4, ep 4.
  Model m = test::toy();
  m.moe = MoeSpec{8, 2, 0, 64};
  StepSetup s = test::setup();
  Layout base = layout(2, 1, 4, 4, 0);
  base.sequence_parallel = true;
  Layout fold = base;
  fold.ep = 8, fold.etp = 1;  // ep·etp = 8 = tp·dp
  REQUIRE_FALSE(layout_problem(m, base));
  REQUIRE_FALSE(layout_problem(m, fold));
  const StepTime a = step_time(m, base, s), b = step_time(m, fold, s);
  // Unfolded: the experts' top-2 copies are gathered and scattered over the 2 TP ranks each MoE
  // layer; folded at etp 1: no such collective.
  CHECK(a.moe_tp.calls > 0);
  CHECK(b.moe_tp.calls == 0);
  CHECK(b.moe_tp.total_s() == 0);
  // Expert parameters per GPU: 2 layers · 8 experts · 2·64·64 = 131,072; unfolded over tp·ep = 8,
  // folded over etp·ep = 1·8 = 8: the same 16,384. The dense rest splits over tp alike.
  CHECK(a.params_per_gpu == doctest::Approx(b.params_per_gpu));
  // The all-to-all carries each rank's sequence-parallel share of its micro-batch, 1·32/2 = 16
  // tokens · 2 copies · 64 · 2 B = 4,096 B, in both; unfolded its 4 members sit tp = 2 ranks
  // apart, folded its 8 members are consecutive ranks: both within one 8-GPU domain.
  CHECK(a.ep.bytes == 4096);
  CHECK(b.ep.bytes == 4096);
  CHECK(a.ep.group.size == 4);
  CHECK(b.ep.group.size == 8);
  CHECK_FALSE(b.ep.group.crosses_domains());
}

TEST_CASE("plan --etp on the command line: the Qwen3-235B-A22B recipe layout is priced") {
  const std::string q =
      "plan --model qwen3-235b-a22b --hardware h100-sxm --gpus 256 --tp 2 --pp 8 --interleave 4 --cp 1 --ep 32 --micro-batch 1 "
      "--global-batch 2048 --seq 4096 --recompute selective --sequence-parallel --zero 1 ";
  const auto refused = run_napkin(q);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--etp 1 folds it over the tensor-parallel ranks too") != std::string::npos);
  const auto priced = run_napkin(q + "--etp 1 --json");
  REQUIRE_MESSAGE(priced.exit_code == 0, priced.err);
  const auto p = nlohmann::json::parse(priced.out)["plans"][0];
  CHECK(p["ep"] == 32);
  CHECK(p["etp"] == 1);
  CHECK(run_napkin(q + "--etp 1 --explain").out.find("(ep 32, etp 1)") != std::string::npos);
  // On a dense model --etp is refused up front, as --ep is.
  const auto dense = run_napkin("plan --model llama3-8b --gpus 8 --global-batch 64 --etp 1");
  CHECK(dense.exit_code == 2);
  CHECK(dense.err == "napkin: error: --etp 1 needs a mixture-of-experts model; llama3-8b has no experts\n");
  // Bad values are one-line errors naming the flag.
  for (const char* bad : {"--etp 0", "--etp 3", "--etp x"}) {
    const auto r = run_napkin(q + bad);
    CHECK_MESSAGE(r.exit_code == 2, bad);
    CHECK_MESSAGE(r.err.find("--etp") != std::string::npos, bad);
  }
}

// --ep-dispatcher flex (core/moe_dispatch.hpp): DeepEP / HybridEP send a token once to each rank
// (or node) holding one of its experts; the probabilities and bytes worked out by hand here.
namespace {
// C(n, k) through lgamma: a different route to the product napkin takes.
double choose(double n, double k) { return std::exp(std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1)); }
}  // namespace

TEST_CASE("flex dispatch: a token once a destination rank or node, priced by hand") {
  // One expert a group: the chance a given expert is among a token's k of E is k/E (8, top 2: 1/4).
  CHECK(group_hit_probability(8, 2, 8) == doctest::Approx(0.25));
  CHECK(group_hit_probability(128, 8, 1) == 1);
  // Qwen3-30B-A3B's 128 experts, top 8, 16 a rank at EP 8: 1 − C(112, 8)/C(128, 8).
  CHECK(group_hit_probability(128, 8, 8) == doctest::Approx(1 - choose(112, 8) / choose(128, 8)));
  CHECK(group_hit_probability(128, 8, 2) == doctest::Approx(1 - choose(64, 8) / choose(128, 8)));
  Network net;
  net.domain_gpus = 8, net.scale_up_bytes_per_s = 450e9, net.scale_out_bytes_per_s = 50e9;
  // Mixtral's shape (8 experts, top 2) at EP 8 in one node: one expert a rank, so nothing to
  // deduplicate. Counted as DeepEP's benchmark counts (a rank's own tokens included): 8 ranks × 1/4
  // = 2 copies, at (153 + 158)/2 GB/s of H800's 200: 0.7775 of the link.
  const double volume = 4096.0 * 4096 * 2;  // 4096 tokens of 4096 × 2 B
  const FlexDispatch mix = flex_dispatch(4096, 4096 * 2, MoeSpec{8, 2, 0, 64}, place_group(1, 8, 8), net);
  CHECK(flex_counted_nvlink_fraction == doctest::Approx(0.7775));
  CHECK(mix.scale_up_bytes == doctest::Approx(2 * volume));
  CHECK(mix.counted_node_bytes == 0);
  CHECK(mix.time_s == doctest::Approx(collective_base_latency_s + 3.4e-6 + 2 * volume / (450e9 * 0.7775)));
  // Qwen3-30B-A3B at EP 16 over two 8-GPU nodes, 4096 tokens of 2048 × 2 B: NVLink to the 8 ranks
  // of each node (own included), for both nodes' tokens; across nodes the benchmarks' count, a token
  // once a node hit (own node included), at HybridEP's 2-node rate, (54.47 + 53.35)/2 of 50 GB/s.
  const double v = 4096.0 * 2048 * 2, p_rank = 1 - choose(120, 8) / choose(128, 8), p_node = 1 - choose(64, 8) / choose(128, 8);
  const FlexDispatch q = flex_dispatch(4096, 2048 * 2, MoeSpec{128, 8, 0, 768}, place_group(1, 16, 8), net);
  CHECK(q.scale_up_bytes == doctest::Approx(v * 8 * p_rank * 2));
  CHECK(q.counted_node_bytes == doctest::Approx(v * 2 * p_node));
  CHECK(flex_counted_rdma_fraction(2) == doctest::Approx(53.91 / 50));
  CHECK(flex_counted_rdma_fraction(8) == doctest::Approx(43.905 / 50));
  CHECK(flex_counted_rdma_fraction(4) == doctest::Approx(49.945 / 50));
  const double rdma_s = v * 2 * p_node / (53.91e9);
  CHECK(rdma_s > v * 8 * p_rank * 2 / (450e9 * 0.7775));  // the NIC is the slower stream
  CHECK(q.time_s == doctest::Approx(collective_base_latency_s + 14e-6 + rdma_s));
}

TEST_CASE("EP overlap and the dispatcher on a toy MoE: what each changes") {
  Model m = test::toy();
  m.moe = MoeSpec{8, 2, 0, 64};
  StepSetup s = test::setup();
  s.global_batch = 64;
  Layout l = layout(1, 1, 8, 8, 0);
  REQUIRE_FALSE(layout_problem(m, l));
  const StepTime plain = step_time(m, l, s);
  // One expert a rank: the alltoall dispatcher has no re-sort, and flex moves the same bytes.
  s.ep_dispatcher = EpDispatcher::flex;
  const StepTime flex = step_time(m, l, s);
  // (the NCCL all-to-all's small-message ramp, collective_half_bandwidth_bytes, makes it the slower)
  CHECK(flex.ep.time_per_call_s > 0);
  CHECK(flex.ep.time_per_call_s <= plain.ep.time_per_call_s);
  // The overlap never costs more, leaves one micro-batch's dispatches of the step's m exposed, and
  // hides nothing with a single micro-batch.
  s.ep_dispatcher = EpDispatcher::alltoall, s.ep_comm_overlap = true;
  const StepTime over = step_time(m, l, s);
  const double mb = 64.0 / 8;
  CHECK(over.ep_exposed_s <= plain.ep.total_s());
  CHECK(over.ep_exposed_s >= plain.ep.total_s() / mb - 1e-15);
  CHECK(over.step_time_s <= plain.step_time_s);
  s.global_batch = 8;
  const StepTime single = step_time(m, l, s);
  CHECK(single.ep_exposed_s == doctest::Approx(single.ep.total_s()));
  // The flex kernels' SMs: the hidden part of the dispatch slows the compute beside it by
  // held / sm_count (16 of 132 here); NCCL's all-to-all is not charged this way, nor an exposed one.
  CHECK(over.ep_overlap_sm_s == 0);
  s.global_batch = 64, s.sm_count = 132, s.ep_comm_sms = 16, s.ep_dispatcher = EpDispatcher::flex;
  const StepTime held = step_time(m, l, s);
  CHECK(held.ep_overlap_sm_s > 0);
  CHECK(held.ep_overlap_sm_s == doctest::Approx((held.ep.total_s() - held.ep_exposed_s) * 16 / 132));
  s.ep_comm_overlap = false;
  CHECK(step_time(m, l, s).ep_overlap_sm_s == 0);
  // Megatron-Core refuses the overlap at pp > 1 without interleaving, and under full recompute:
  // priced without it there.
  s.ep_comm_overlap = true;
  Layout pp2 = layout(1, 2, 4, 4, 0);
  REQUIRE_FALSE(layout_problem(m, pp2));
  const StepTime p2 = step_time(m, pp2, s);
  CHECK(p2.ep_exposed_s == doctest::Approx(p2.ep.total_s()));
  Layout full = l;
  full.recompute = Recompute::full;
  const StepTime f = step_time(m, full, s);
  CHECK(f.ep_exposed_s == doctest::Approx(f.ep.total_s()));
}

TEST_CASE("contiguous routing (NeMo Automodel's fake balanced gate): the ranks and nodes a token reaches, by hand") {
  // Token t takes experts t·k … t·k + k − 1 (mod E). DeepSeek-V3 (256 experts, top 8) at EP 64: 4
  // experts a rank, starts 0, 8, 16 … so every token reaches exactly 2 ranks of 64, and 1 node of 8
  // (32 experts a node).
  CHECK(contiguous_hit_probability(256, 8, 64) == doctest::Approx(2.0 / 64));
  CHECK(contiguous_hit_probability(256, 8, 8) == doctest::Approx(1.0 / 8));
  // Qwen3-30B-A3B (128, top 8) at EP 8: 16 experts a rank, starts 0 or 8: one rank.
  CHECK(contiguous_hit_probability(128, 8, 8) == doctest::Approx(1.0 / 8));
  // 12 experts, top 4, 4 buckets of 3: starts 0, 4, 8 reach buckets {0, 1}, {1, 2}, {2, 3}: 2 of 4.
  CHECK(contiguous_hit_probability(12, 4, 4) == doctest::Approx(0.5));
  // 10 experts, top 4, 5 buckets of 2: starts 0, 4, 8, 2, 6; 8 wraps to {8, 9, 0, 1}: 2 buckets each.
  CHECK(contiguous_hit_probability(10, 4, 5) == doctest::Approx(0.4));
  // 12 experts, top 3, buckets of 3 aligned with the starts 0, 3, 6, 9: one bucket a token.
  CHECK(contiguous_hit_probability(12, 3, 4) == doctest::Approx(0.25));
  CHECK(contiguous_hit_probability(8, 8, 4) == 1);
  CHECK(contiguous_hit_probability(8, 2, 1) == 1);
  // The even draw reaches 5.3 of Qwen3's 8 ranks; flex's NVLink traffic falls by that ratio.
  Network net;
  net.domain_gpus = 8, net.scale_up_bytes_per_s = 450e9, net.scale_out_bytes_per_s = 50e9;
  const MoeSpec qwen{128, 8, 0, 768};
  const FlexDispatch even = flex_dispatch(4096, 2048 * 2, qwen, place_group(1, 8, 8), net);
  const FlexDispatch contiguous = flex_dispatch(4096, 2048 * 2, qwen, place_group(1, 8, 8), net, MoeRouting::contiguous);
  CHECK(contiguous.scale_up_bytes == doctest::Approx(4096.0 * 2048 * 2 * 8 / 8));
  CHECK(even.scale_up_bytes / contiguous.scale_up_bytes == doctest::Approx(8 * (1 - choose(112, 8) / choose(128, 8))));
}

TEST_CASE("--ep-dispatcher and --ep-overlap on the command line") {
  const std::string q =
      "plan --model qwen3-30b-a3b --hardware h100-sxm --gpus 16 --tp 1 --pp 1 --cp 1 --ep 16 --micro-batch 1 --global-batch 1024 "
      "--seq 4096 --recompute none --zero 1 --json ";
  const auto step = [&](const std::string& extra) {
    const auto r = run_napkin(q + extra);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out)["plans"][0]["step_time_s"].get<double>();
  };
  const double a2a = step(""), flex = step("--ep-dispatcher flex"), both = step("--ep-dispatcher flex --ep-overlap");
  // Across two nodes the flex dispatcher sends a token once a node, not once an expert.
  CHECK(flex < a2a);
  CHECK(both < flex);
  CHECK(run_napkin(q + "--ep-overlap --no-ep-overlap").exit_code == 2);  // one or the other
  // On a dense model the flags change nothing, and say so.
  const auto dense = run_napkin("plan --model llama3-8b --hardware h100-sxm --gpus 8 --global-batch 64 --seq 2048 --tp 1 --pp 1 --cp 1 --micro-batch 1 "
                                "--recompute none --zero 1 --ep-dispatcher flex");
  CHECK(dense.exit_code == 0);
  CHECK(dense.err.find("--ep-dispatcher: the model has no experts; it changes nothing") != std::string::npos);
  // Contiguous routing sends a token to fewer ranks and nodes: flex gets faster, alltoall (every
  // top-k copy) does not move.
  CHECK(step("--ep-dispatcher flex --moe-routing contiguous") < flex);
  CHECK(step("--moe-routing contiguous") == doctest::Approx(a2a));
  const auto routing = run_napkin(q + "--moe-routing contiguous");
  CHECK(routing.out.find("routing contiguous (flag)") != std::string::npos);
  const auto bad_routing = run_napkin(q + "--moe-routing random");
  CHECK(bad_routing.exit_code == 2);
  CHECK(bad_routing.err.find("napkin: error: --moe-routing must be even or contiguous, found 'random'") == 0);
  const auto bad = run_napkin(q + "--ep-dispatcher flx");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "napkin: error: --ep-dispatcher must be alltoall or flex, found 'flx'; did you mean 'flex'?\n");
}

TEST_CASE("group-limited routing: the ranks and nodes a token reaches, by hand") {
  // Megatron-LM moe_perf's DeepSeek proxy: 32 experts, top 8, 8 groups (one a rank at EP 8), a
  // token's experts from its best 4 groups, each of which holds one of them: a rank is hit when its
  // group is chosen, 4/8.
  CHECK(group_hit_probability(32, 8, 8, 8, 4) == doctest::Approx(0.5));
  // Two groups a bucket (4 buckets): hit unless neither is among the 4 chosen, 1 − C(6,4)/C(8,4).
  CHECK(group_hit_probability(32, 8, 4, 8, 4) == doctest::Approx(1 - 15.0 / 70));
  // DeepSeek-V3 at EP 64: a rank holds 4 of its group's 32; the group chosen (4/8), the group's own
  // pick lands in those 4 with 4/32, else the other 4 draws from the 124 left miss them with
  // C(120,4)/C(124,4).
  CHECK(group_hit_probability(256, 8, 64, 8, 4) == doctest::Approx(0.5 * (1 - (1 - 4.0 / 32) * choose(120, 4) / choose(124, 4))));
  // Not limited when every group may be chosen, or when none is given: the even draw.
  CHECK(group_hit_probability(32, 8, 8, 8, 8) == doctest::Approx(1 - choose(28, 8) / choose(32, 8)));
  CHECK(group_hit_probability(32, 8, 8) == doctest::Approx(1 - choose(28, 8) / choose(32, 8)));
  // DeepSeek-V3's spec carries its node limit (config.json n_group 8, topk_group 4).
  const Model v3 = SpecRegistry::builtin_only().model("deepseek-v3");
  REQUIRE(v3.moe);
  CHECK(v3.moe->routing_groups == 8);
  CHECK(v3.moe->groups_per_token == 4);
  // A spec that gives one without the other, or groups that do not divide the experts, is refused.
  const std::string base = "name = \"t\"\nsource = \"a test\"\nlayers = 2\nd_model = 64\nheads = 4\nd_ff = 256\nmlp = \"gelu\"\n"
                           "vocab = 128\ncontext = 32\ntied_embeddings = true\npositions = \"learned\"\nbias = \"all\"\n"
                           "norm = \"layernorm\"\n[moe]\nexperts = 8\nexperts_per_token = 2\nd_ff_expert = 64\n";
  CHECK_NOTHROW(parse_model(base + "routing_groups = 4\ngroups_per_token = 2\n", "g.toml", "g"));
  CHECK_THROWS_WITH(parse_model(base + "routing_groups = 4\n", "g.toml", "g"), doctest::Contains("give routing_groups and groups_per_token together"));
  CHECK_THROWS_WITH(parse_model(base + "routing_groups = 3\ngroups_per_token = 1\n", "g.toml", "g"), doctest::Contains("must divide experts"));
  CHECK_THROWS_WITH(parse_model(base + "routing_groups = 4\ngroups_per_token = 5\n", "g.toml", "g"), doctest::Contains("exceeds routing_groups"));
}

TEST_CASE("the slowest stage of a MoE pipeline counts its MoE layers' dispatch, not only its layers") {
  // DeepSeek-V3, 61 layers (the first 3 dense) over pp 16 as NeMo 25.04 ran it (tp 2, ep 64):
  // stages 0-12 hold 4 layers, 13-15 hold 3 (61 = 16·3 + 13). Stage 0 is 3 dense + 1 MoE, stages
  // 1-12 are 4 MoE, the last 3 MoE + the LM head. Counting layers alone against the head, the last
  // stage looked slowest (3 layers + a head longer than a layer's products); with four token
  // dispatches against three, a stage of 4 MoE layers is.
  const Model ds = SpecRegistry::builtin_only().model("deepseek-v3");
  Layout l = layout(2, 16, 32, 64, 1);
  l.sequence_parallel = true, l.zero = 1;
  CHECK(stage_layers(ds, l, 0).moe_layers == 1);
  CHECK(stage_layers(ds, l, 5).moe_layers == 4);
  CHECK(stage_layers(ds, l, 15).layers == 3);
  StepSetup s = test::setup();
  s.global_batch = 8192, s.seq = 4096;
  s.peak_flops_per_s = s.gemm.peak_flops_per_s = 989.5e12, s.memory_bandwidth_bytes_per_s = s.gemm.memory_bandwidth_bytes_per_s = 3.35e12;
  s.net.scale_up_bytes_per_s = 450e9, s.net.scale_out_bytes_per_s = 50e9;
  const StepTime t = step_time(ds, l, s);
  CHECK(t.stage_layers == 4);
  CHECK_FALSE(t.head_on_slowest);
  CHECK(test::term(t, "ep_comm_s") > 0);
}
