#include "spec/json_guard.hpp"

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

}  // namespace napkin
