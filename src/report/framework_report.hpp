#pragma once
// Listings and details of framework files (frameworks/*.toml), as text and JSON.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "core/framework.hpp"

namespace napkin {

std::string frameworks_list_text(const std::vector<Framework>& all, std::size_t max_width = 0);
std::string framework_show_text(const Framework& f);
nlohmann::json framework_json(const Framework& f);

}  // namespace napkin
