#pragma once
// What napkin plan asks of the memory model (core/layout_memory, docs/METHODOLOGY.md §3.6-3.10):
// is a layout valid, and what does its most loaded GPU hold. One seam, so the search reads a
// few numbers and the memory model stays free to itemise.
#include <optional>
#include <string>
#include <vector>

#include "core/layout.hpp"
#include "core/layout_memory.hpp"
#include "core/model.hpp"

namespace napkin {

struct PlanMemory {
  double model_states_bytes = 0;
  double activations_bytes = 0;
  double total_bytes = 0;
  double available_bytes = 0;  // capacity − reserve
  double reserve_bytes = 0;    // --reserve, or the runtime reserve (NVIDIA default)
  std::vector<RuntimeTerm> reserve_terms;  // the runtime reserve's named terms
  double headroom_bytes = 0;   // available − total
  bool fits = true;
  long long stage = 0;         // the most loaded pipeline stage
  std::string stage_reason;
};

// nullopt when the layout can run the model at this sequence length, else one line naming the flag.
std::optional<std::string> plan_layout_problem(const Model& m, const Layout& l, long long seq);
// The most loaded GPU; `micro_batches` per step per pipeline bounds the 1F1B in-flight count.
PlanMemory plan_memory(const Model& m, const Layout& l, MemorySetup s, long long micro_batches);

}  // namespace napkin
