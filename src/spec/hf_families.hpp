#pragma once
// One Hugging Face family's config.json keys into a Model (spec/hf_families.cpp): the reader the
// import (spec/hf_config.cpp) calls once it knows the family. Not part of napkin's interface.
#include <string>

#include "core/model.hpp"
#include "spec/hf_reader.hpp"

namespace napkin {

void read_family(HfReader& r, Model& m, const std::string& family, const std::string& model_type);

}  // namespace napkin
