#pragma once
// A model as a napkin TOML spec (what `napkin models import` prints): every field the loader
// reads, each with a comment saying how it was derived from the source, so the user can keep
// the file and edit it.
#include <string>
#include <utility>
#include <vector>

#include "core/model.hpp"

namespace napkin {

// `derivations`: napkin key ("d_ff", "moe.experts") -> how its value was obtained.
// `header`: comment lines put first (without the "# ").
std::string model_toml(const Model& m, const std::vector<std::pair<std::string, std::string>>& derivations,
                       const std::vector<std::string>& header);

}  // namespace napkin
