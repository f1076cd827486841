#pragma once
// Strict reads from a parsed config.json for spec/hf_config.cpp: every read names its key
// and what napkin needs it for, and records how each napkin field was derived.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "spec/hf_config.hpp"

namespace napkin {

// The whole document; a syntax error is Error("file:line:col: message").
nlohmann::json parse_hf_json(std::string_view text, const std::string& display_path);

// Text from the file, cut to `max_chars` (ending "...") before an error message quotes it.
std::string cut(std::string s, std::size_t max_chars = 40);
std::string join_names(const std::vector<std::string>& names);

// A value napkin cannot take, thrown before import_hf_config places it. what() reads
// "file: text_config.hidden_size: message (llama)"; import_hf_config, which holds the text, finds
// the key (find_json_key in spec/json_guard.hpp) and rethrows it as "file:line:col: ...", the
// form of the syntax and duplicate-key errors. A key the file lacks ("missing") keeps this form.
class HfKeyError : public Error {
 public:
  // `said` is how the message names the key, when not its dotted path ("d_model (from hidden_size)").
  HfKeyError(const std::string& display_path, std::vector<std::string> key_path, std::string detail, std::string said = "")
      : Error(display_path + ": " + (said.empty() ? dotted(key_path) : said) + ": " + detail),
        key_path_(std::move(key_path)),
        detail_(std::move(detail)),
        said_(said.empty() ? dotted(key_path_) : std::move(said)) {}
  const std::vector<std::string>& key_path() const { return key_path_; }
  const std::string& said() const { return said_; }      // before ": "
  const std::string& detail() const { return detail_; }  // after "key: "
  static std::string dotted(const std::vector<std::string>& key_path) {
    std::string out;
    for (const auto& k : key_path) out += (out.empty() ? "" : ".") + k;
    return out;
  }

 private:
  std::vector<std::string> key_path_;
  std::string detail_;
  std::string said_;
};

class HfReader {
 public:
  // `prefix` names where `j` sits in the file, for errors ("text_config.").
  HfReader(const nlohmann::json& j, std::string path, HfImport& out, std::string prefix = "");

  bool has(std::string_view key) const;  // present and not null
  // A nested object (rope_scaling, quantization_config) read the same way, its keys named
  // "key.sub" in errors; nullopt when absent. Fails when the key holds something else.
  std::optional<HfReader> object(std::string_view key) const;
  // A required whole number ≥ 1; `what` says what napkin needs it for.
  long long count(std::string_view key, std::string_view napkin_key, std::string_view what);
  // The same, or `fallback` when absent (a default the transformers class documents: `why`).
  long long count_or(std::string_view key, std::string_view napkin_key, long long fallback, const std::string& why);
  // Optional; bounded like `napkin_key` when one is given.
  // Optional; bounded like `napkin_key` when one is given; at least `min` (1, or 0 where 0 means something).
  std::optional<long long> opt_count(std::string_view key, std::string_view napkin_key = {}, long long min = 1);
  std::optional<double> opt_number(std::string_view key);  // positive, finite
  bool flag_or(std::string_view key, bool fallback, std::string_view napkin_key);
  std::string string_or(std::string_view key, const std::string& fallback);
  std::vector<long long> int_list(std::string_view key);  // absent or null: empty
  long long count_in_list(std::string_view key, std::string_view value);  // -1 when absent
  long long list_length(std::string_view key);                            // -1 when absent
  long long divide(long long a, long long b, std::string_view napkin_key, std::string_view how);

  void derive(std::string_view napkin_key, const std::string& how);
  void note(const std::string& text);
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

 private:
  const nlohmann::json* find(std::string_view key) const;
  long long bounded(std::string_view key, std::string_view napkin_key, long long v) const;
  const nlohmann::json& j_;
  std::string path_;
  HfImport& out_;
  std::string prefix_;
};

}  // namespace napkin
