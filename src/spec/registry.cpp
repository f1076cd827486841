#include "spec/registry.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <variant>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "spec/builtin_specs.hpp"
#include "spec/hf_config.hpp"
#include "spec/spec_loader.hpp"

namespace napkin {
namespace fs = std::filesystem;
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the spec file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string stem_of(const std::string& path) { return fs::path(path).stem().string(); }

template <typename T>
std::vector<std::string> keys_of(const std::map<std::string, T>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

std::vector<std::string> toml_files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".toml") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".toml") || looks_like_hf_config(s);
}

void SpecRegistry::add_text(std::string_view text, const std::string& display_path, const std::string& key) {
  Spec spec = parse_spec(text, display_path, key);
  if (auto* h = std::get_if<Hardware>(&spec)) hardware_[key] = std::move(*h);
  else models_[key] = std::get<Model>(std::move(spec));
}

void SpecRegistry::add_file(const std::string& path) { add_text(read_file(path), path, stem_of(path)); }

SpecRegistry SpecRegistry::load(const std::vector<std::string>& user_paths) {
  SpecRegistry r;
  for (const EmbeddedSpec& f : builtin_spec_files())
    r.add_text(f.text, std::string("builtin:") + f.path, stem_of(f.path));
  for (const std::string& p : user_paths) {
    std::error_code ec;
    const fs::path path(p);
    if (fs::is_directory(path, ec)) {
      for (const auto& f : toml_files_in(path)) r.add_file(f);
      for (const char* sub : {"hardware", "models"})
        if (fs::is_directory(path / sub, ec))
          for (const auto& f : toml_files_in(path / sub)) r.add_file(f);
    } else if (fs::is_regular_file(path, ec)) {
      r.add_file(p);
    } else {
      throw Error(p + ": no such spec file or folder");
    }
  }
  return r;
}

Hardware SpecRegistry::hardware(std::string_view name) const {
  if (looks_like_path(name)) {
    const std::string path(name);
    return parse_hardware(read_file(path), path, stem_of(path));
  }
  if (auto it = hardware_.find(std::string(name)); it != hardware_.end()) return it->second;
  throw Error("unknown hardware '" + std::string(name) + "'" + did_you_mean(name, keys_of(hardware_)) +
              " ('napkin hardware list' shows all)");
}

Model SpecRegistry::model(std::string_view name) const {
  if (looks_like_path(name)) {
    const std::string path(name);
    if (auto hf = hf_model(path)) return hf->model;
    return parse_model(read_file(path), path, stem_of(path));
  }
  if (auto it = models_.find(std::string(name)); it != models_.end()) return it->second;
  throw Error("unknown model '" + std::string(name) + "'" + did_you_mean(name, keys_of(models_)) +
              " ('napkin models list' shows all)");
}

std::optional<HfImport> SpecRegistry::hf_model(std::string_view path) const {
  auto config = hf_config_file(std::string(path));
  if (!config) return std::nullopt;
  return import_hf_config(read_file(*config), *config, hf_model_key(*config));
}

const Hardware* SpecRegistry::hardware_for_device(std::string_view device_name) const {
  for (const auto& [key, h] : hardware_)
    for (const auto& n : h.device_names)
      if (n == device_name) return &h;
  return nullptr;
}

}  // namespace napkin
