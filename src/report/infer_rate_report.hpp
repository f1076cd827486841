#pragma once
// `napkin infer --rate`: the open-loop steady states (core/infer_serving open_loop_state) as the
// text table, the --explain steps and the JSON points. Kept apart from infer_report.cpp, which
// calls them.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/infer_report.hpp"

namespace napkin {

// What one step under load is made of, as --explain says it: the decode and the prompt tokens
// that join it, in one pass (Engine::prefill_mixed_with_decode) or in prefill passes of their own.
std::string load_step_terms(const InferSetup& s, const SteadyState& p);

std::string rate_table(const InferReport& r, std::size_t max_width);
void rate_explain(const InferReport& r, std::vector<std::string>& out);
nlohmann::json rate_points_json(const InferReport& r);

}  // namespace napkin
