// plan's search prunes: whole groups of layouts refused by one rule are counted, not built, and
// of the interleavings that share a longest chunk only the smallest and the largest are priced.
// These tests hold the pruning to two references written here, independently of the search:
//   * an exhaustive search, every layout of every dimension (every v, every recomputation), each
//     checked and priced one by one: the search must find a plan exactly as fast, and fit as
//     often (nothing fits in one exactly when nothing fits in the other);
//   * the layout-by-layout loop the search replaced, which counts what it enumerates, refuses
//     and fits: the counts and the most common refusal must be the same.
// No timings are asserted: how long the search takes is measured in docs/METHODOLOGY.md §6.8.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/plan_search.hpp"

using namespace napkin;

namespace {

// A small GPT-like model (layers and heads chosen so that many tp, pp and v are valid and some are
// not): 12·h² parameters a layer, learned positions, tied embeddings.
Model small_model(long long layers, long long heads, long long kv_heads, bool moe) {
  Model m;
  m.key = "small";
  m.layers = layers, m.d_model = 64 * heads, m.heads = heads, m.kv_heads = kv_heads, m.head_dim = 64, m.d_ff = 4 * 64 * heads;
  m.mlp = MlpKind::gelu, m.vocab = 32000, m.context = 4096, m.tied_embeddings = true;
  m.positions = Positions::learned, m.norm = NormKind::layernorm;
  if (moe) m.moe = MoeSpec{8, 2, 0, 2 * 64 * heads, 1};
  return m;
}

PlanQuery query(long long gpus, long long batch, long long seq, double memory_bytes) {
  PlanQuery q;
  q.gpus = gpus;
  q.top = 3;
  const PrecisionRecipe& r = find_recipe("bf16-mixed");
  q.step.global_batch = batch;
  q.step.seq = seq;
  q.step.bytes_per_param = bytes_per_param(find_optimizer("adamw"), r);
  q.step.grad_reduce_bytes = r.grad_bytes;
  q.step.peak_flops_per_s = q.step.gemm.peak_flops_per_s = 989.5e12;  // an H100's bf16 dense peak
  q.step.memory_bandwidth_bytes_per_s = q.step.gemm.memory_bandwidth_bytes_per_s = 3.35e12;
  q.step.gemm.peak_efficiency = gemm_peak_efficiency("h100-sxm", Dtype::bf16);
  q.step.net.domain_gpus = 4;
  q.step.net.scale_up_bytes_per_s = 450e9;
  q.step.net.scale_out_bytes_per_s = 50e9;
  q.memory.recipe = r;
  q.memory.seq = seq;
  q.memory.memory_bytes = memory_bytes;
  return q;
}

template <typename T>
std::vector<T> one_or(const std::optional<T>& fixed, std::vector<T> all) {
  return fixed ? std::vector<T>{*fixed} : all;
}

std::vector<long long> up_to(long long n) {
  std::vector<long long> out;
  for (long long i = 1; i <= n; ++i) out.push_back(i);
  return out;
}

std::vector<long long> dividing(long long n) {
  std::vector<long long> out;
  for (long long i = 1; i <= n; ++i)
    if (n % i == 0) out.push_back(i);
  return out;
}

// The first rule a layout breaks, as the search states its rules (layout_problem, the batch
// split, flash attention for cp, the scale-up domain), or nullopt.
std::optional<std::string> problem_of(const Model& m, const PlanQuery& q, const Layout& l) {
  if (auto p = layout_problem(m, l, q.step.seq)) return p;
  if (auto p = batch_problem(l, q.step.global_batch)) return p;
  if (l.cp > 1 && !q.step.flash_attention) return "--cp " + std::to_string(l.cp) + " needs flash attention";
  if (!q.allow_cross_node_tp && l.tp * l.cp > q.step.net.domain_gpus) return "--tp × --cp = " + std::to_string(l.tp * l.cp) + " exceeds";
  return std::nullopt;
}

struct Exhaustive {
  std::optional<Plan> best;  // fastest fitting, the one with more headroom of equal speed
  long long fitting = 0;
};

// Every layout: every degree dividing the GPUs, every micro-batch, every v up to the layers,
// every recomputation (selective too), every ZeRO stage; a dimension the query fixes, fixed.
Exhaustive exhaustive(const Model& m, const PlanQuery& q) {
  Exhaustive out;
  const std::vector<Recompute> policies = {Recompute::none, Recompute::selective, Recompute::full};
  for (long long tp : one_or(q.tp, dividing(q.gpus)))
    for (long long cp : one_or(q.cp, dividing(q.gpus)))
      for (long long pp : one_or(q.pp, dividing(q.gpus))) {
        if (q.gpus % (tp * cp * pp) != 0) continue;
        const long long dp = q.gpus / (tp * cp * pp);
        for (long long b : one_or(q.micro_batch, dividing(q.step.global_batch)))  // b must divide B/d, so B
          for (long long v : one_or(q.interleave, up_to(m.layers)))
            for (long long ep : one_or(q.ep, m.moe ? dividing(m.moe->experts) : std::vector<long long>{1}))
              for (bool sp : q.sequence_parallel ? std::vector<bool>{*q.sequence_parallel} : std::vector<bool>{false, true})
                for (Recompute rc : one_or(q.recompute, policies))
                  for (int zero : one_or(q.zero, {0, 1, 2, 3})) {
                    Layout l;
                    l.tp = tp, l.cp = cp, l.pp = pp, l.dp = dp, l.ep = ep, l.micro_batch = b, l.interleave = v;
                    l.sequence_parallel = sp, l.recompute = rc, l.zero = zero;
                    if (problem_of(m, q, l)) continue;
                    const long long micro_batches = q.step.global_batch / (dp * b);
                    Plan p;
                    p.layout = l;
                    p.memory = plan_memory(m, l, q.memory, micro_batches);
                    if (!p.memory.fits) continue;
                    ++out.fitting;
                    p.time = step_time(m, l, q.step);
                    const bool faster = !out.best || p.time.step_time_s < out.best->time.step_time_s ||
                                        (p.time.step_time_s == out.best->time.step_time_s && p.memory.total_bytes < out.best->memory.total_bytes);
                    if (faster) out.best = p;
                  }
      }
  return out;
}

struct Counts {
  long long candidates = 0, valid = 0, fitting = 0;
  std::map<std::string, long long> refused;  // rule (the message, its numbers masked) -> count
};

// The search's space, enumerated and checked one layout at a time (as plan did before it counted
// refused groups whole): v is every one whose longest chunk ceil(L/(p·v)) differs from its
// neighbour's on one side; the dimensions are filtered as the search's documentation says.
Counts one_by_one(const Model& m, const PlanQuery& q) {
  Counts out;
  const std::vector<Recompute> policies = q.step.flash_attention ? std::vector<Recompute>{Recompute::none, Recompute::full}
                                                                 : std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full};
  const auto ceil_div = [](long long a, long long b) { return (a + b - 1) / b; };
  for (long long tp : one_or(q.tp, dividing(q.gpus)))
    for (long long cp : one_or(q.cp, dividing(q.gpus / tp))) {
      if (!q.allow_cross_node_tp && tp * cp > q.step.net.domain_gpus && !(q.tp && q.cp)) continue;
      for (long long pp : one_or(q.pp, dividing(q.gpus / (tp * cp)))) {
        if (q.gpus % (tp * cp * pp) != 0 || (pp > m.layers && !q.pp)) continue;
        const long long dp = q.gpus / (tp * cp * pp);
        const long long per_replica = q.step.global_batch % dp == 0 ? q.step.global_batch / dp : 0;
        for (long long b : one_or(q.micro_batch, dividing(per_replica ? per_replica : 1))) {
          const long long micro_batches = per_replica && per_replica % b == 0 ? per_replica / b : 0;
          const long long max_v = pp > 1 ? m.layers / pp : 1;
          std::vector<long long> vs;
          for (long long v = 1; v <= max_v; ++v) {
            const long long chunk = ceil_div(m.layers, pp * v);
            if (v == 1 || v == max_v || chunk < ceil_div(m.layers, pp * (v - 1)) || ceil_div(m.layers, pp * (v + 1)) < chunk) vs.push_back(v);
          }
          for (long long v : one_or(q.interleave, vs)) {
            if (!q.interleave && v > 1 && (micro_batches == 0 || micro_batches % pp != 0)) continue;
            for (long long ep : one_or(q.ep, m.moe ? dividing(m.moe->experts) : std::vector<long long>{1})) {
              if (!q.ep && (dp * cp) % ep != 0) continue;
              for (bool sp : q.sequence_parallel ? std::vector<bool>{*q.sequence_parallel}
                                                 : (tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})) {
                if (!q.sequence_parallel && sp && (q.step.seq / cp) % tp != 0) continue;
                for (Recompute rc : one_or(q.recompute, policies))
                  for (int zero : one_or(q.zero, {0, 1, 2, 3})) {
                    if (!q.zero && zero > 0 && dp * cp == 1) continue;
                    Layout l;
                    l.tp = tp, l.cp = cp, l.pp = pp, l.dp = dp, l.ep = ep, l.micro_batch = b, l.interleave = v;
                    l.sequence_parallel = sp, l.recompute = rc, l.zero = zero;
                    ++out.candidates;
                    if (auto p = problem_of(m, q, l)) {
                      std::string rule;  // grouped as plan reports them: numbers masked
                      for (char ch : *p) rule += (ch >= '0' && ch <= '9') ? (rule.empty() || rule.back() != '#' ? "#" : "") : std::string(1, ch);
                      ++out.refused[rule];
                      continue;
                    }
                    ++out.valid;
                    if (plan_memory(m, l, q.memory, micro_batches).fits) ++out.fitting;
                  }
              }
            }
          }
        }
      }
    }
  return out;
}

void check_against_references(const Model& m, const PlanQuery& q) {
  const PlanSearch found = search_plans(m, q);
  const Exhaustive all = exhaustive(m, q);
  // The same best plan: as fast, and of equal speed as frugal (its layout may differ only where
  // two layouts tie exactly on both).
  REQUIRE(found.plans.empty() == !all.best.has_value());
  if (all.best) {
    const Plan& best = found.plans.front();
    CAPTURE(best.layout.tp);
    CAPTURE(best.layout.pp);
    CAPTURE(best.layout.interleave);
    CAPTURE(best.layout.micro_batch);
    CAPTURE(all.best->layout.tp);
    CAPTURE(all.best->layout.pp);
    CAPTURE(all.best->layout.interleave);
    CAPTURE(all.best->layout.micro_batch);
    CHECK(best.time.step_time_s == all.best->time.step_time_s);
    CHECK(best.memory.total_bytes == all.best->memory.total_bytes);
    CHECK(found.fitting <= all.fitting);
  }
  const Counts counts = one_by_one(m, q);
  CHECK(found.candidates == counts.candidates);
  CHECK(found.valid == counts.valid);
  CHECK(found.fitting == counts.fitting);
  long long most = 0;
  for (const auto& [message, n] : counts.refused) most = std::max(most, n);
  CHECK(found.common_problem_count == most);
}

}  // namespace

TEST_CASE("the pruned search finds the exhaustive search's best plan and counts what it skips") {
  // 12 layers and 8 heads (2 KV heads): tp 3 and 6 break the heads, pp up to 12, v up to 6.
  const Model dense = small_model(12, 8, 2, false);
  const Model moe = small_model(10, 4, 4, true);  // 8 experts, one leading dense layer
  for (long long gpus : {1LL, 6LL, 12LL, 24LL})
    for (double memory_bytes : {0.3e9, 1.5e9, 80e9}) {  // little fits, some fits, everything fits
      CAPTURE(gpus);
      CAPTURE(memory_bytes);
      PlanQuery q = query(gpus, 24, 1024, memory_bytes);
      check_against_references(dense, q);
      check_against_references(moe, q);
      q.allow_cross_node_tp = true;  // tp · cp beyond the 4-GPU domain: every split
      check_against_references(dense, q);
      q.step.flash_attention = q.memory.flash_attention = false;  // selective recomputation searched; cp refused
      check_against_references(dense, q);
    }
}

TEST_CASE("the pruned search with dimensions given: the same plans and counts") {
  const Model dense = small_model(12, 8, 2, false);
  PlanQuery q = query(24, 48, 1024, 1.5e9);
  q.allow_cross_node_tp = true;
  q.pp = 4;
  check_against_references(dense, q);
  q.pp.reset();
  q.interleave = 2;  // refused where pp is 1 or the micro-batches do not split over pp
  check_against_references(dense, q);
  q.interleave.reset();
  q.zero = 1;
  q.sequence_parallel = true;  // refused where tp does not split the tokens
  check_against_references(dense, q);
  q.tp = 3;  // breaks the 8 heads: every layout refused for it
  const PlanSearch refused = search_plans(dense, q);
  CHECK(refused.valid == 0);
  CHECK(refused.common_problem_count == refused.candidates);
  CHECK(refused.common_problem.value_or("").find("--tp 3 does not divide the 8 attention heads") == 0);
}

TEST_CASE("stage_layers and the interleavings stay cheap: a 65,536-layer model on 7.2M GPUs is searched") {
  // Not a timing: the size at which the old search took 35 s. The search must finish (the test
  // runner's own time-out catches a regression to O(layers) per layout) and count every layout.
  Model deep = small_model(65536, 8, 2, false);
  PlanQuery q = query(7207200, 1024, 1024, 80e9);
  q.allow_cross_node_tp = true;
  const PlanSearch found = search_plans(deep, q);
  CHECK(found.candidates > found.valid);
  CHECK(found.common_problem.has_value());
}
