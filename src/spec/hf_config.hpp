#pragma once
// Hugging Face config.json -> Model. The keys each family uses are those of its
// transformers configuration class (transformers/models/<family>/configuration_<family>.py);
// a key that changes the parameter count is required unless that class documents a default,
// and every default taken is recorded so `napkin models import` can say so.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model.hpp"

namespace napkin {

struct HfImport {
  Model model;
  std::string model_type;  // as config.json names it ("llama", "RefinedWeb")
  std::string family;      // the family napkin read it as ("llama", "falcon")
  // napkin key -> how its value was derived from config.json, in the order of the spec.
  std::vector<std::pair<std::string, std::string>> derivations;
  std::vector<std::string> notes;  // what the count leaves out or assumes
};

// `display_path` names the file in errors ("dir/config.json: num_hidden_layers: missing; ...");
// `key` is the model's name in napkin (the folder holding config.json).
HfImport import_hf_config(std::string_view json_text, const std::string& display_path, const std::string& key);

// True for a path napkin reads as a Hugging Face config: one ending in .json.
bool looks_like_hf_config(std::string_view path);

// The config.json to read for `path`: the path itself when it ends in .json, `path`/config.json
// when it is a folder holding one; nullopt for anything else (a TOML spec). A folder without
// config.json is an Error naming it.
std::optional<std::string> hf_config_file(const std::string& path);

// The model's name in napkin: the folder holding config.json ("models/qwen3-8b/config.json"
// -> "qwen3-8b"), else the file's stem.
std::string hf_model_key(const std::string& config_path);

// The model_type values napkin maps, for errors and docs.
const std::vector<std::string>& hf_model_types();

}  // namespace napkin
