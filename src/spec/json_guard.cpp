#include "spec/json_guard.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <vector>

#include "core/error.hpp"

namespace napkin {

void guard_json_depth(std::string_view text, const std::string& display_path) {
  int depth = 0;
  bool in_string = false;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') line++, line_start = i + 1;
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw Error(display_path + ":" + std::to_string(line) + ":" + std::to_string(i - line_start + 1) +
                    ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels; napkin reads none that deep");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;  // an unbalanced bracket is the parser's to report
    }
  }
}

void guard_duplicate_keys(std::string_view text, const std::string& display_path) {
  // nlohmann's lexer ends the input at a NUL byte, so what follows one was never parsed: scanning
  // it found names the parser never saw (tests/fuzz/fuzz_hf_config: a NUL, then an escaped name
  // with a byte that is not UTF-8, whose own parse threw past every handler).
  text = text.substr(0, text.find('\0'));
  // One entry per open bracket: an object's names so far (name -> line), or nullopt for a list.
  std::vector<std::optional<std::map<std::string, std::size_t>>> open;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') line++, line_start = i + 1;
    if (c == '{') open.emplace_back(std::map<std::string, std::size_t>{});
    else if (c == '[') open.emplace_back(std::nullopt);
    else if ((c == '}' || c == ']') && !open.empty()) open.pop_back();
    if (c != '"') continue;
    const std::size_t start = i, col = i - line_start + 1;
    for (++i; i < text.size() && text[i] != '"'; ++i)
      if (text[i] == '\\') ++i;  // the escaped character cannot end the string
    if (i >= text.size()) return;  // unterminated: the parser has said so already
    std::size_t next = i + 1;
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\r' || text[next] == '\n')) ++next;
    if (next >= text.size() || text[next] != ':' || open.empty() || !open.back()) continue;  // a value, not a name
    const std::string_view raw = text.substr(start, i - start + 1);
    std::string name(raw.substr(1, raw.size() - 2));
    if (raw.find('\\') != std::string_view::npos) {  // "hidden\u005fsize" is hidden_size
      const nlohmann::json decoded = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
      if (!decoded.is_string()) continue;  // not a name the parser accepted: it has said so already
      name = decoded.get<std::string>();
    }
    const auto [it, fresh] = open.back()->emplace(name, line);
    if (!fresh)
      throw Error(display_path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + name.substr(0, 40) +
                  ": given twice in one object (first at line " + std::to_string(it->second) +
                  "); JSON parsers keep one silently, so napkin reads neither: delete the wrong one");
  }
}

std::optional<JsonPos> find_json_key(std::string_view text, const std::vector<std::string>& key_path) {
  if (key_path.empty()) return std::nullopt;
  // One entry per open bracket: how many names of key_path lead to it (-1: off the path, or a
  // list), and for an object the last name read in it (whose value a '{' that follows is).
  struct Open {
    long matched;
    bool object;
    std::string last;
  };
  std::vector<Open> open;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') line++, line_start = i + 1;
    if (c == '{' || c == '[') {
      long matched = -1;
      if (open.empty()) {
        matched = c == '{' ? 0 : -1;
      } else if (const Open& up = open.back(); up.object && up.matched >= 0 &&
                                               static_cast<std::size_t>(up.matched) < key_path.size() &&
                                               up.last == key_path[static_cast<std::size_t>(up.matched)]) {
        matched = c == '{' ? up.matched + 1 : -1;
      }
      open.push_back({matched, c == '{', {}});
    } else if ((c == '}' || c == ']') && !open.empty()) {
      open.pop_back();
    }
    if (c != '"') continue;
    const std::size_t start = i, col = i - line_start + 1;
    for (++i; i < text.size() && text[i] != '"'; ++i)
      if (text[i] == '\\') ++i;  // the escaped character cannot end the string
    if (i >= text.size()) return std::nullopt;
    std::size_t next = i + 1;
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\r' || text[next] == '\n')) ++next;
    if (next >= text.size() || text[next] != ':' || open.empty() || !open.back().object) continue;  // a value, not a name
    const std::string_view raw = text.substr(start, i - start + 1);
    std::string name(raw.substr(1, raw.size() - 2));
    if (raw.find('\\') != std::string_view::npos) {
      try {
        name = nlohmann::json::parse(raw).get<std::string>();
      } catch (const nlohmann::json::exception&) {
        continue;  // not a name the parser accepted; the caller's text parsed, so never here
      }
    }
    Open& here = open.back();
    if (here.matched >= 0 && static_cast<std::size_t>(here.matched) + 1 == key_path.size() && name == key_path.back())
      return JsonPos{line, col};
    here.last = std::move(name);
  }
  return std::nullopt;
}

}  // namespace napkin
