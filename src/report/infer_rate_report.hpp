#pragma once
// `napkin infer --rate`: the open-loop steady states (core/infer_serving open_loop_state) as the
// text table, the --explain steps and the JSON points. Kept apart from infer_report.cpp, which
// calls them.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/infer_report.hpp"

namespace napkin {

std::string rate_table(const InferReport& r, std::size_t max_width);
void rate_explain(const InferReport& r, std::vector<std::string>& out);
nlohmann::json rate_points_json(const InferReport& r);

}  // namespace napkin
