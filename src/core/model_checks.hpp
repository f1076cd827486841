#pragma once
// The structural checks every Model passes however it arrives: a napkin TOML spec
// (spec/spec_loader.cpp) or a Hugging Face config.json (spec/hf_config.cpp). Each front door
// turns a problem into an error naming its file and the field; the rules live here once, so the
// two cannot drift (issue 16, class 3: config.json accepted top-k 9 of 8 experts and 100
// windowed layers of 2, which the TOML loader refused).
#include <optional>
#include <string>

#include "core/model.hpp"

namespace napkin {

struct ModelProblem {
  std::string field;    // napkin's key, as a TOML spec spells it: "kv_heads", "moe.experts_per_token"
  std::string message;  // "exceeds experts (8)"
};

// The first contradiction in `m`, or nothing. Pure: reads only the Model.
std::optional<ModelProblem> model_problem(const Model& m);

}  // namespace napkin
