#include "core/plan_memory.hpp"

#include <algorithm>
#include <cmath>

#include "core/activations.hpp"

namespace napkin {

// Interim: the layout rules and memory of the `mem` branch replace this.
std::optional<std::string> plan_layout_problem(const Model& m, const Layout& l, long long seq) {
  auto n = [](long long v) { return std::to_string(v); };
  if (m.heads % l.tp != 0) return "--tp " + n(l.tp) + " does not divide the " + n(m.heads) + " attention heads";
  if (!m.mla && m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0) return "--tp " + n(l.tp) + " does not divide the KV heads";
  if ((!m.moe || m.moe->dense_layers > 0) && m.d_ff % l.tp != 0) return "--tp " + n(l.tp) + " does not divide d_ff";
  if (m.moe && m.moe->d_ff_expert % l.tp != 0) return "--tp " + n(l.tp) + " does not divide d_ff_expert";
  if (l.pp > m.layers) return "--pp " + n(l.pp) + " exceeds the layers";
  if (l.interleave > 1 && (l.pp == 1 || m.layers % (l.pp * l.interleave) != 0)) return "--interleave " + n(l.interleave) + " does not split the layers";
  if (l.ep > 1 && (!m.moe || m.moe->experts % l.ep != 0 || (l.dp * l.cp) % l.ep != 0)) return "--ep " + n(l.ep) + " is not possible";
  if (l.zero > 0 && l.dp * l.cp == 1) return "--zero needs dp·cp > 1";
  if (l.cp > 1 && seq % (2 * l.cp) != 0) return "--cp " + n(l.cp) + " does not split --seq";
  if (l.sequence_parallel && (seq / l.cp) % l.tp != 0) return "--sequence-parallel does not split --seq";
  return std::nullopt;
}

PlanMemory plan_memory(const Model& m, const Layout& l, const PlanMemorySetup& s, long long micro_batches) {
  PlanMemory r;
  const ParamCount pc = count_params(m);
  const double layers = std::ceil(static_cast<double>(m.layers) / static_cast<double>(l.pp));
  const double params = (pc.total - pc.embedding - pc.lm_head) * layers / static_cast<double>(m.layers) / static_cast<double>(l.tp) +
                        std::max(pc.embedding, pc.lm_head) / static_cast<double>(l.tp);
  const BytesPerParam bpp = per_gpu_bytes_per_param(bytes_per_param(s.optimizer, s.recipe),
                                                    Sharding{static_cast<int>(std::max(1LL, l.dp * l.cp)), l.zero});
  r.model_states_bytes = params * bpp.total();
  ActivationConfig c;
  c.micro_batch = static_cast<double>(l.micro_batch);
  c.seq = static_cast<double>(s.seq / l.cp);
  c.recompute = l.recompute;
  c.flash_attention = s.flash_attention;
  c.dropout = s.dropout;
  c.value_bytes = s.recipe.activation_bytes;
  const ActivationEstimate e = estimate_activations(m, c);
  const double in_flight = std::min(static_cast<double>(l.pp), static_cast<double>(micro_batches));
  r.activations_bytes = (e.layers_bytes * layers / static_cast<double>(m.layers) * in_flight +
                         e.recompute_working_bytes + e.output_bytes + e.logits_bytes) /
                        static_cast<double>(l.tp);
  r.total_bytes = r.model_states_bytes + r.activations_bytes;
  r.available_bytes = s.memory_bytes - s.reserve_bytes;
  r.headroom_bytes = r.available_bytes - r.total_bytes;
  r.fits = r.headroom_bytes >= 0;
  r.stage_reason = "first stage";
  return r;
}

}  // namespace napkin
