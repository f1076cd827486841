#pragma once
// Every spec napkin knows: the built-in ones, then the user's (NAPKIN_SPEC_PATH, then
// --spec, in order), a later one with the same name replacing an earlier one. Two --spec files
// that define the same name (of one kind) are an Error naming both: which one was meant is not
// the registry's to guess, and the last silently won.
//
// Parsing is lazy: load() only indexes files by name (the built-in texts are compiled in, a
// user folder is listed), and a spec is parsed the first time it is asked for, so an estimate
// that names one model and one card parses two files, not forty. The listing calls parse every
// file, so `hardware list` and `models list` report any malformed one. Not thread-safe: the
// parsed specs are cached inside a const registry.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/engine.hpp"
#include "core/hardware.hpp"
#include "core/model.hpp"
#include "spec/hf_config.hpp"

namespace napkin {

class SpecRegistry {
 public:
  // The compiled-in specs plus `user_paths` (files or folders, in order). A folder's
  // *.toml files are indexed, and its hardware/ and models/ subfolders if it has them. A path
  // that is missing, unreadable or a symlink loop is an Error naming it. `user_paths` from index
  // `first_flag_path` on came from --spec (those before, NAPKIN_SPEC_PATH, may be replaced).
  static SpecRegistry load(const std::vector<std::string>& user_paths, std::size_t first_flag_path = 0);
  static SpecRegistry builtin_only() { return load({}); }

  // A name ("h100-sxm") or a path to a .toml file. Unknown names throw Error with the
  // closest known names; a malformed spec throws its file:line:col error.
  Hardware hardware(std::string_view name_or_path) const;
  Model model(std::string_view name_or_path) const;
  // A Hugging Face config.json (or a folder holding one) read as a model, with how each
  // field was derived; nullopt when the path is not one (a TOML spec).
  std::optional<HfImport> hf_model(std::string_view path) const;

  // The first hardware spec that lists `device_name` (as the driver reports it), if any.
  // Parses every spec.
  const Hardware* hardware_for_device(std::string_view device_name) const;

  // Every spec, parsed (a malformed one throws).
  const std::map<std::string, Hardware>& all_hardware() const;
  const std::map<std::string, Model>& all_models() const;

  // Serving engines (engines/*.toml, and a user folder's engines/ subfolder): a name ("vllm")
  // or a path to a .toml file. Unknown names throw Error with the closest known names.
  Engine engine(std::string_view name_or_path) const;
  std::map<std::string, Engine> all_engines() const;

 private:
  enum class Kind { hardware, model, unknown };
  // One file that may define the spec `key`. Built-in ones carry their text and a kind
  // known from their folder; a user file carries its path, and its content says its kind.
  struct Source {
    std::string path;            // what is opened
    const char* text = nullptr;  // built-in text, or nullptr to read `path`
    Kind kind = Kind::unknown;
    mutable std::optional<std::variant<Hardware, Model>> parsed;
    std::string display_path;    // `path` as valid UTF-8, for messages and JSON
    bool from_flag = false;      // given by --spec (a file, or in a folder)
  };

  void add_user_file(const std::string& path, bool from_flag);
  std::size_t user_file_count() const { return user_files_; }
  const std::variant<Hardware, Model>& parse(const std::string& key, const Source& s) const;
  template <typename T>
  const T* find(const std::string& key) const;
  std::vector<std::string> names_of(Kind kind) const;
  void parse_all() const;

  std::map<std::string, std::vector<Source>> sources_;  // by name, in load order
  // Engines live apart: their files are told by folder, never by content. By name, the latest wins.
  struct EngineSource {
    std::string path;
    const char* text = nullptr;
    std::string display_path;
  };
  std::map<std::string, EngineSource> engine_sources_;
  mutable bool all_parsed_ = false;
  std::size_t user_files_ = 0;  // .toml files added from --spec
  mutable std::map<std::string, Hardware> hardware_;
  mutable std::map<std::string, Model> models_;
};

// True when the argument names a file rather than a spec: it ends in .toml or has a '/'.
bool looks_like_path(std::string_view name_or_path);

// For an unknown-name error: ": it is a model (--model), not hardware" when a built-in spec
// of another kind than `folder` ("models", "hardware", "engines" or "frameworks") has that name,
// as when --model and --hardware are swapped; empty otherwise.
std::string other_kind_hint(std::string_view name, std::string_view folder);

}  // namespace napkin
