#pragma once
// Reads a serving-engine spec (engines/*.toml) as strictly as hardware and model specs: a
// wrong type, a missing or unknown key or a value out of range is "file:line:col: key: message".
#include <string>
#include <string_view>

#include "core/engine.hpp"

namespace napkin {

Engine parse_engine(std::string_view text, const std::string& display_path, const std::string& key);

}  // namespace napkin
