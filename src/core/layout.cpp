#include "core/layout.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace napkin {
namespace {

std::string n(long long v) { return std::to_string(v); }

// Layers [begin, begin + count) intersected with the leading dense layers [0, dense).
long long dense_in(long long begin, long long count, long long dense) {
  return std::max(0LL, std::min(begin + count, dense) - begin);
}

}  // namespace

std::optional<std::string> layout_problem(const Model& m, const Layout& l) {
  const char* names[] = {"--tp", "--cp", "--pp", "--dp", "--ep", "--micro-batch", "--interleave"};
  const long long values[] = {l.tp, l.cp, l.pp, l.dp, l.ep, l.micro_batch, l.interleave};
  for (int i = 0; i < 7; ++i)
    if (values[i] < 1) return std::string(names[i]) + " must be at least 1, found " + n(values[i]);
  // Built only on the failure paths: the search calls this for every candidate layout.
  auto who = [&m] { return m.key.empty() ? std::string("the model") : m.key; };

  // Megatron splits attention by heads (column-parallel QKV, row-parallel output).
  if (m.heads % l.tp != 0) return "--tp " + n(l.tp) + " does not divide the " + n(m.heads) + " attention heads of " + who();
  if (!m.mla && m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0)
    return "--tp " + n(l.tp) + " neither divides the " + n(m.kv_heads) + " KV heads of " + who() +
           " nor is a multiple of them (KV heads are split, or replicated one per rank)";
  const bool dense_mlp = !m.moe || m.moe->dense_layers > 0;
  if (dense_mlp && m.d_ff % l.tp != 0) return "--tp " + n(l.tp) + " does not divide d_ff = " + n(m.d_ff) + " of " + who();
  if (m.moe && m.moe->d_ff_expert % l.tp != 0)
    return "--tp " + n(l.tp) + " does not divide d_ff_expert = " + n(m.moe->d_ff_expert) + " of " + who();

  if (l.pp > m.layers) return "--pp " + n(l.pp) + " is more pipeline stages than the " + n(m.layers) + " layers of " + who();
  if (l.interleave > 1) {
    if (l.pp == 1) return "--interleave " + n(l.interleave) + " needs --pp > 1 (virtual stages interleave a pipeline)";
    if (m.layers % (l.pp * l.interleave) != 0)
      return "--interleave " + n(l.interleave) + " with --pp " + n(l.pp) + ": the " + n(m.layers) + " layers of " + who() +
             " do not split into " + n(l.pp * l.interleave) + " equal model chunks";
  }

  if (l.ep > 1) {
    if (!m.moe) return "--ep " + n(l.ep) + " needs a mixture-of-experts model; " + who() + " has no experts";
    if (m.moe->experts % l.ep != 0)
      return "--ep " + n(l.ep) + " does not divide the " + n(m.moe->experts) + " experts of " + who();
    if (l.zero_ranks() % l.ep != 0)
      return "--ep " + n(l.ep) + " does not divide dp·cp = " + n(l.zero_ranks()) +
             " (expert parallelism is carved out of the data- and context-parallel ranks)";
  }

  if (l.zero < 0 || l.zero > 3) return "--zero must be 0, 1, 2 or 3, found " + n(l.zero);
  if (l.zero > 0 && l.zero_ranks() == 1)
    return "--zero " + n(l.zero) + " with one data-parallel replica (dp·cp = 1) shards nothing and equals --zero 0; "
           "give more GPUs than tp·pp or drop --zero";
  return std::nullopt;
}

std::optional<std::string> layout_problem(const Model& m, const Layout& l, long long seq) {
  if (auto p = layout_problem(m, l)) return p;
  if (seq < 1) return "--seq must be at least 1, found " + n(seq);
  if (l.cp > 1 && seq % (2 * l.cp) != 0)
    return "--cp " + n(l.cp) + " needs a sequence divisible by 2·cp = " + n(2 * l.cp) + " (load-balanced causal split); --seq is " +
           n(seq);
  if (seq % l.cp != 0) return "--cp " + n(l.cp) + " does not divide --seq " + n(seq);
  if (l.sequence_parallel && (seq / l.cp) % l.tp != 0)
    return "--sequence-parallel: the " + n(seq / l.cp) + " tokens per context-parallel rank do not split over --tp " + n(l.tp);
  return std::nullopt;
}

void validate_layout(const Model& m, const Layout& l, std::optional<long long> seq) {
  const auto problem = seq ? layout_problem(m, l, *seq) : layout_problem(m, l);
  if (problem) throw Error(*problem);
}

StageLayers stage_layers(const Model& m, const Layout& l, long long stage) {
  StageLayers s;
  const long long dense = m.moe ? std::min(m.moe->dense_layers, m.layers) : m.layers;
  if (l.interleave > 1 && m.layers % (l.pp * l.interleave) == 0) {
    const long long chunk = m.layers / (l.pp * l.interleave);
    long long dense_here = 0;
    for (long long j = 0; j < l.interleave; ++j) dense_here += dense_in((j * l.pp + stage) * chunk, chunk, dense);
    s.layers = chunk * l.interleave;
    s.moe_layers = s.layers - dense_here;
    return s;
  }
  const long long q = m.layers / l.pp, r = m.layers % l.pp;
  const long long begin = stage * q + std::min(stage, r);
  s.layers = q + (stage < r ? 1 : 0);
  s.moe_layers = s.layers - dense_in(begin, s.layers, dense);
  return s;
}

double in_flight_micro_batches(const Layout& l, long long stage, long long micro_batches) {
  const double p = static_cast<double>(l.pp), i = static_cast<double>(stage);
  if (l.interleave > 1) {
    const double v = static_cast<double>(l.interleave);
    return (2 * (p - i - 1) + (v - 1) * p + 1) / v;
  }
  const double held = p - i;
  return micro_batches > 0 ? std::min(held, static_cast<double>(micro_batches)) : held;
}

}  // namespace napkin
