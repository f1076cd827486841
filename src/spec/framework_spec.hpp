#pragma once
// Framework files (frameworks/*.toml): the built-in ones compiled in like the hardware and model
// specs, or a user's file given by path. Strict like every spec: a wrong type, an unknown key or
// value is a "file:line:col: key: message" Error; an unknown name gets close-name suggestions.
#include <string>
#include <string_view>
#include <vector>

#include "core/framework.hpp"

namespace napkin {

// The framework napkin assumes when --framework is not given.
inline constexpr std::string_view default_framework = "megatron";

Framework parse_framework(std::string_view text, const std::string& display_path, const std::string& key);

// A built-in name ("torchtitan") or a path to a .toml file.
Framework load_framework(std::string_view name_or_path);

// Every built-in framework, by name.
std::vector<Framework> builtin_frameworks();

}  // namespace napkin
