#pragma once
// A pass over JSON text before nlohmann::json sees it. The library parses nesting with its own
// stack, but dump() and the destructor of a parsed value recurse once per level: a config.json
// nested 100,000 levels deep (200 kB, well under the size cap) overflowed the stack while napkin
// built an error message quoting the value (issue 16, class 1). No JSON napkin reads nests more
// than a few levels (a config.json's rope_scaling is 2; calibrate's products list 2), so a
// document deeper than kMaxJsonDepth is refused here, with the place it got too deep.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace napkin {

inline constexpr int kMaxJsonDepth = 64;

// Throws Error("file:line:col: JSON nested deeper than 64 levels ...") for a deeper document;
// otherwise does nothing. Brackets inside strings do not count.
void guard_json_depth(std::string_view text, const std::string& display_path);

// RFC 8259 §4: names within an object "SHOULD be unique", and nlohmann::json keeps the last of
// two silently (a config.json with hidden_size 4096, then 1, became a 1-wide model). For text
// that parsed as JSON: throws Error("file:line:col: key: given twice in one object (first at line
// N) ...") at the second; otherwise does nothing. Names compare after unescaping.
void guard_duplicate_keys(std::string_view text, const std::string& display_path);

// Where a key's name starts in JSON text (1-based line and column of its opening quote), so an
// error about its value can say path:line:col as the syntax and duplicate-key errors do.
// `key_path` names it from the top object down ({"text_config", "hidden_size"}); objects inside
// lists are never searched. Names compare after unescaping. Keys are unique in text that passed
// guard_duplicate_keys, so the first match is the one. nullopt when the key is not there.
struct JsonPos {
  std::size_t line, col;
};
std::optional<JsonPos> find_json_key(std::string_view text, const std::vector<std::string>& key_path);

}  // namespace napkin
