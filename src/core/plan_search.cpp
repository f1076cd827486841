#include "core/plan_search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/model.hpp"

namespace napkin {
namespace {

template <typename T>
std::vector<T> either(const std::optional<T>& fixed, std::vector<T> all) {
  if (fixed) return {*fixed};
  return all;
}

// The values of one dimension: the given one, else every divisor of `n`.
std::vector<long long> choices(const std::optional<long long>& fixed, long long n) {
  if (fixed) return {*fixed};
  return divisors(n);
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

bool faster(const Plan& a, const Plan& b) {
  if (a.time.step_time_s != b.time.step_time_s) return a.time.step_time_s < b.time.step_time_s;
  return a.memory.total_bytes < b.memory.total_bytes;  // same speed: the one with more headroom
}

}  // namespace

std::vector<long long> divisors(long long n) {
  std::vector<long long> small, large;
  for (long long i = 1; i * i <= n; ++i) {
    if (n % i != 0) continue;
    small.push_back(i);
    if (i != n / i) large.push_back(n / i);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::optional<std::string> plan_query_problem(const Model& m, const PlanQuery& q) {
  if (q.gpus < 1) return "--gpus must be at least 1";
  // The given degrees must multiply to a divisor of the GPU count.
  long long product = 1;
  std::string names;
  for (const auto& [v, flag] : {std::pair{q.tp, "--tp"}, std::pair{q.cp, "--cp"}, std::pair{q.pp, "--pp"}}) {
    if (!v) continue;
    if (*v < 1) return std::string(flag) + " must be at least 1";
    product *= *v;
    names += (names.empty() ? "" : " × ") + std::string(flag);
    if (q.gpus % product != 0) {
      const bool one = names.find(" × ") == std::string::npos;
      return names + (one ? " " : " = ") + std::to_string(product) + " does not divide --gpus " + std::to_string(q.gpus);
    }
  }
  if (q.ep && *q.ep > 1 && !m.moe)
    return "--ep " + std::to_string(*q.ep) + " needs a mixture-of-experts model; " + m.key + " has no experts";
  return std::nullopt;
}

// Keeps the `keep` fastest plans seen, fastest first, one per split of the GPUs (tp, cp, pp, ep):
// the best micro-batch, interleaving, sequence parallelism, recomputation and ZeRO stage of each,
// so that the list compares real alternatives rather than near-copies of the winner.
void keep_best(std::vector<Plan>& best, Plan&& p, std::size_t keep) {
  const auto same_split = [&p](const Plan& b) {
    const Layout &x = p.layout, &y = b.layout;
    return x.tp == y.tp && x.cp == y.cp && x.pp == y.pp && x.ep == y.ep;
  };
  const auto it = std::find_if(best.begin(), best.end(), same_split);
  if (it != best.end()) {
    if (!faster(p, *it)) return;
    best.erase(it);
  }
  if (best.size() == keep && !faster(p, best.back())) return;
  best.insert(std::upper_bound(best.begin(), best.end(), p, faster), std::move(p));
  if (best.size() > keep) best.pop_back();
}

void rank_by_evidence(std::vector<Plan>& plans) {
  for (std::size_t first = 0; first < plans.size();) {
    std::size_t end = first + 1;
    while (end < plans.size() && bars_overlap(plans[first].mfu_bar, plans[end].mfu_bar)) ++end;
    std::stable_sort(plans.begin() + static_cast<std::ptrdiff_t>(first), plans.begin() + static_cast<std::ptrdiff_t>(end),
                     [](const Plan& a, const Plan& b) { return a.mfu_bar.similarity > b.mfu_bar.similarity; });
    first = end;
  }
}

PlanSearch search_plans(const Model& m, const PlanQuery& q) {
  if (auto problem = plan_query_problem(m, q)) throw Error(*problem);
  const long long domain = q.step.net.domain_gpus;
  const bool moe = m.moe.has_value();
  PlanSearch out;
  out.single_layout = q.tp && q.cp && q.pp && q.micro_batch && (!moe || q.ep) && q.sequence_parallel && q.recompute && q.zero &&
                      (q.interleave || *q.pp == 1);
  // With error bars, at least 9 plans (3× the asked-for ones) are kept, so that ranking ties by
  // evidence can bring a better-validated plan from just outside the top into it, and so that
  // --top 1 (train --mfu predicted) and --top 3 rank the same plans and agree on the best.
  const std::size_t keep = q.gpu_generation.empty() ? std::max<std::size_t>(q.top, 1) : std::max<std::size_t>(3 * q.top, 9);
  std::optional<Plan> closest;
  std::map<std::string, std::pair<long long, std::string>> refused;  // group -> (count, first message)
  // Layer costs depend only on (tp, cp, ep, micro-batch, sequence parallelism).
  std::map<std::tuple<long long, long long, long long, long long, bool>, LayerCost> costs;
  // With flash attention, selective recomputation is what the kernel already does (it recomputes
  // the scores in its backward): the same time and memory as none, so it is not searched.
  const std::vector<Recompute> policies = q.step.flash_attention ? std::vector<Recompute>{Recompute::none, Recompute::full}
                                                                 : std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full};

  for (long long tp : choices(q.tp, q.gpus)) {
    for (long long cp : choices(q.cp, q.gpus / tp)) {
      if (!q.allow_cross_node_tp && tp * cp > domain && !(q.tp && q.cp)) continue;
      for (long long pp : choices(q.pp, q.gpus / (tp * cp))) {
        if (q.gpus % (tp * cp * pp) != 0) continue;
        const long long dp = q.gpus / (tp * cp * pp);
        if (pp > m.layers && !q.pp) continue;
        const long long per_replica = q.step.global_batch % dp == 0 ? q.step.global_batch / dp : 0;
        const std::vector<long long> bs = per_replica ? choices(q.micro_batch, per_replica) : choices(q.micro_batch, 1);
        for (long long b : bs) {
          const long long micro_batches = per_replica && per_replica % b == 0 ? per_replica / b : 0;
          // v with at least one layer per model chunk (p·v ≤ layers); the chunks may be uneven
          // (stage_layers), as Llama 3 405B's 126 layers on 16 stages are. The bubble depends on
          // the longest chunk, ceil(L/(p·v)) layers, so of the v sharing one longest chunk the
          // smallest is the fastest (same bubble, fewest sends) and the largest holds the fewest
          // micro-batches in flight ((p−1)/v + p, the most memory-frugal): both are searched, the
          // ones between are neither. Every v dividing L/p is such a smallest one.
          const long long max_v = pp > 1 ? m.layers / pp : 1;
          std::vector<long long> vs;
          if (q.interleave) vs = {*q.interleave};
          else
            for (long long v = 1; v <= max_v; ++v) {
              const long long chunk = ceil_div(m.layers, pp * v);
              const bool smallest = v == 1 || chunk < ceil_div(m.layers, pp * (v - 1));
              const bool largest = v == max_v || ceil_div(m.layers, pp * (v + 1)) < chunk;
              if (smallest || largest) vs.push_back(v);
            }
          for (long long v : vs) {
            // Searched, not given: skip the combinations Megatron refuses without building a message.
            if (!q.interleave && v > 1 && (micro_batches == 0 || micro_batches % pp != 0)) continue;
            for (long long ep : moe ? choices(q.ep, m.moe->experts) : std::vector<long long>{1}) {
              if (!q.ep && (dp * cp) % ep != 0) continue;
              for (bool sp : either<bool>(q.sequence_parallel, tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})) {
                if (!q.sequence_parallel && sp && (q.step.seq / cp) % tp != 0) continue;
                for (Recompute rc : either<Recompute>(q.recompute, policies)) {
                  for (int zero : either<int>(q.zero, dp * cp == 1 ? std::vector<int>{0} : q.zero_stages)) {
                    Layout l;
                    l.tp = tp, l.cp = cp, l.pp = pp, l.dp = dp, l.ep = ep, l.micro_batch = b, l.interleave = v;
                    l.sequence_parallel = sp, l.recompute = rc, l.zero = zero;
                    ++out.candidates;
                    std::optional<std::string> problem = plan_layout_problem(m, l, q.step.seq);
                    if (!problem) problem = batch_problem(l, q.step.global_batch);
                    if (!problem && cp > 1 && !q.step.flash_attention)
                      problem = "--cp " + std::to_string(cp) + " needs flash attention";
                    if (!problem && !q.allow_cross_node_tp && tp * cp > domain)
                      problem = "--tp × --cp = " + std::to_string(tp * cp) + " exceeds the " + std::to_string(domain) +
                                " GPUs of a scale-up domain (--allow-cross-node-tp to allow it)";
                    if (problem) {
                      // Grouped by the rule: the message with its numbers masked ("--tp # does not divide ...").
                      std::string rule;
                      for (char ch : *problem)
                        if (!(ch >= '0' && ch <= '9')) rule += ch;
                        else if (rule.empty() || rule.back() != '#') rule += '#';
                      auto& [count, example] = refused[rule];
                      if (count++ == 0) example = std::move(*problem);
                      continue;
                    }
                    ++out.valid;
                    // Memory first: a layout that does not fit is priced only if it is the closest yet.
                    PlanMemory mem = plan_memory(m, l, q.memory, micro_batches);
                    if (!mem.fits && closest && mem.total_bytes >= closest->memory.total_bytes) continue;
                    const auto key = std::make_tuple(tp, cp, ep, b, sp);
                    auto it = costs.find(key);
                    if (it == costs.end()) it = costs.emplace(key, layer_cost(m, l, q.step)).first;
                    Plan p;
                    p.layout = l;
                    p.time = step_time(m, l, q.step, it->second);
                    p.memory = std::move(mem);
                    if (p.memory.fits) {
                      ++out.fitting;
                      keep_best(out.plans, std::move(p), keep);
                    } else {
                      closest = std::move(p);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (out.plans.empty()) out.closest = std::move(closest);
  if (!q.gpu_generation.empty()) {
    const double params = count_params(m).total;
    auto bar = [&](Plan& p) { p.mfu_bar = error_bar({q.gpu_generation, q.framework, params, p.layout}, p.time.mfu); };
    for (Plan& p : out.plans) bar(p);
    if (out.closest) bar(*out.closest);
    rank_by_evidence(out.plans);
    if (out.plans.size() > std::max<std::size_t>(q.top, 1)) out.plans.resize(std::max<std::size_t>(q.top, 1));
  }
  for (auto& [group, seen] : refused) {
    if (seen.first <= out.common_problem_count) continue;
    out.common_problem_count = seen.first;
    out.common_problem = seen.second;
  }
  return out;
}

}  // namespace napkin
