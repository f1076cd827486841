#pragma once
// Every spec napkin knows: the built-in ones, then the user's (NAPKIN_SPEC_PATH, then
// --spec, in order), a later one with the same name replacing an earlier one.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hardware.hpp"
#include "core/model.hpp"
#include "spec/hf_config.hpp"

namespace napkin {

class SpecRegistry {
 public:
  // The compiled-in specs plus `user_paths` (files or folders, in order). A folder's
  // *.toml files are read, and its hardware/ and models/ subfolders if it has them.
  static SpecRegistry load(const std::vector<std::string>& user_paths);
  static SpecRegistry builtin_only() { return load({}); }

  // A name ("h100-sxm") or a path to a .toml file. Unknown names throw Error with the
  // closest known names.
  Hardware hardware(std::string_view name_or_path) const;
  Model model(std::string_view name_or_path) const;
  // A Hugging Face config.json (or a folder holding one) read as a model, with how each
  // field was derived; nullopt when the path is not one (a TOML spec).
  std::optional<HfImport> hf_model(std::string_view path) const;

  // The first hardware spec that lists `device_name` (as the driver reports it), if any.
  const Hardware* hardware_for_device(std::string_view device_name) const;

  const std::map<std::string, Hardware>& all_hardware() const { return hardware_; }
  const std::map<std::string, Model>& all_models() const { return models_; }

 private:
  void add_file(const std::string& path);
  void add_text(std::string_view text, const std::string& display_path, const std::string& key);

  std::map<std::string, Hardware> hardware_;
  std::map<std::string, Model> models_;
};

// True when the argument names a file rather than a spec: it ends in .toml or has a '/'.
bool looks_like_path(std::string_view name_or_path);

}  // namespace napkin
