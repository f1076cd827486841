#include "core/plan_memory.hpp"

namespace napkin {

std::optional<std::string> plan_layout_problem(const Model& m, const Layout& l, long long seq) { return layout_problem(m, l, seq); }

PlanMemory plan_memory(const Model& m, const Layout& l, MemorySetup s, long long micro_batches) {
  s.micro_batches = micro_batches;
  const LayoutMemory lm = memory_per_gpu(m, l, s);
  PlanMemory r;
  r.model_states_bytes = lm.model_states_bytes;
  r.activations_bytes = lm.activations_bytes;
  r.total_bytes = lm.total_bytes;
  r.available_bytes = lm.available_bytes;
  r.reserve_bytes = lm.reserve_bytes;
  for (const RuntimeTerm& t : lm.most_loaded().runtime.terms)
    if (t.bytes > 0) r.reserve_terms.push_back(t);
  r.headroom_bytes = lm.headroom_bytes;
  r.fits = lm.fits;
  r.stage = lm.most_loaded_stage;
  r.stage_reason = std::string(lm.most_loaded_reason);
  return r;
}

}  // namespace napkin
