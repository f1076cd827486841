#pragma once
// Listings and details of hardware and model specs, as text tables and JSON.
#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "core/hardware.hpp"
#include "core/model.hpp"

namespace napkin {

std::string hardware_list_text(const std::map<std::string, Hardware>& all, std::size_t max_width = 0);
std::string hardware_show_text(const Hardware& h, std::size_t max_width = 0);
nlohmann::json hardware_json(const Hardware& h);

std::string models_list_text(const std::map<std::string, Model>& all, std::size_t max_width = 0);
std::string model_show_text(const Model& m, std::size_t max_width = 0);
nlohmann::json model_json(const Model& m);

}  // namespace napkin
