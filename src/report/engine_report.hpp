#pragma once
// `napkin engines list|show`: the serving engines' knobs, as text and JSON.
#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "core/engine.hpp"

namespace napkin {

std::string engines_list_text(const std::map<std::string, Engine>& all, std::size_t max_width = 0);
std::string engine_show_text(const Engine& e, std::size_t max_width = 0);
nlohmann::json engine_json(const Engine& e);

}  // namespace napkin
