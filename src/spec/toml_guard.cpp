#include "spec/toml_guard.hpp"

#include "core/error.hpp"

namespace napkin {
namespace {

class Scanner {
 public:
  Scanner(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  void run() {
    // A quote opens a string only where TOML starts a key or a value: at a line start, after
    // = [ , or {, and after a dot in a dotted key. Inside a bare token (a number, a bare key, or
    // junk such as `+z[["a`) toml++ reads quotes and brackets as part of the token and tests
    // every character up to a terminator, so what follows is checked as outside a string.
    // Brackets are tracked to tell keys ([header], {inline = table}) from values.
    char prev = '\n';
    bool after_equals = false;
    bool bare = false;    // inside a bare token
    std::string nesting;  // '[' array, 'h' table header, '{' inline table
    int key_parts = 1;    // parts of the dotted key being read: a.b.c is 3
    while (i_ < text_.size()) {
      const char c = text_[i_];
      const bool key_context = !after_equals && (nesting.empty() || nesting.back() != '[');
      if (c == '#') {
        skip_comment();
        bare = false;
        continue;
      }
      if (bare) {
        const bool ends = c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ']' || c == '}' || c == ',' ||
                          ((c == '=' || c == '.') && key_context);
        if (!ends) {
          if (static_cast<unsigned char>(c) >= 0x80) fail("non-ASCII character outside a string or comment");
          prev = c;
          ++i_;
          continue;
        }
        bare = false;
      }
      const bool string_may_start = prev == '\n' || prev == '=' || prev == '[' || prev == ',' || prev == '{' ||
                                    (prev == '.' && key_context);
      if ((c == '"' || c == '\'') && string_may_start) {
        if (starts_with("\"\"\"")) multi_line_basic();
        else if (starts_with("'''")) multi_line_literal();
        else single_line(c);
        prev = c;
        continue;
      }
      if (static_cast<unsigned char>(c) >= 0x80) fail("non-ASCII character outside a string or comment");
      switch (c) {
        case '=': after_equals = true, key_parts = 1; break;
        case '\n': if (nesting.empty()) after_equals = false, key_parts = 1; break;
        case '{': nesting += '{'; after_equals = false; key_parts = 1; break;
        case '[':
          if (!after_equals && (nesting.empty() || (nesting == "h" && prev == '['))) nesting += 'h';  // [t] or [[t]]
          else nesting += '[';
          key_parts = 1;
          break;
        case '}': case ']':
          // Closing a value returns to value context (the rest of the line, or the enclosing
          // array or inline-table value); closing a header does not.
          if (!nesting.empty()) {
            after_equals = nesting.back() != 'h';
            nesting.pop_back();
          }
          break;
        case ',': if (!nesting.empty() && nesting.back() == '{') after_equals = false, key_parts = 1; break;
        case '.':
          if (key_context && ++key_parts > kMaxTomlDepth) fail("a dotted key of more parts than napkin reads (64)");
          break;
        case ' ': case '\t': case '\r': break;
        default: bare = true; break;  // a bare key, a number, true/false, a date, or junk
      }
      // Each level is a table or an array that toml++ frees recursively, one stack frame per level;
      // a spec napkin reads nests 2 deep.
      if (nesting.size() > static_cast<std::size_t>(kMaxTomlDepth)) fail("arrays or tables nested deeper than napkin reads (64)");
      if (c != ' ' && c != '\t' && c != '\r') prev = c;
      ++i_;
    }
  }

 private:
  bool starts_with(std::string_view s) const { return text_.substr(i_, s.size()) == s; }
  bool ascii_at(std::size_t i) const { return i >= text_.size() || static_cast<unsigned char>(text_[i]) < 0x80; }

  [[noreturn]] void fail(const char* what) const {
    // toml++ counts columns in code points; so does this.
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < i_; ++k) {
      const auto b = static_cast<unsigned char>(text_[k]);
      if (b == '\n') line++, column = 1;
      else if ((b & 0xC0) != 0x80) column++;
    }
    throw Error(path_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": syntax error: " + what);
  }

  void skip_comment() {
    while (i_ < text_.size() && text_[i_] != '\n') ++i_;
  }

  // "..." or '...': ends at the closing quote or the end of the line (toml++ reports the latter).
  void single_line(char quote) {
    ++i_;
    while (i_ < text_.size() && text_[i_] != quote && text_[i_] != '\n') i_ += (quote == '"' && text_[i_] == '\\') ? 2 : 1;
    if (i_ < text_.size() && text_[i_] == quote) ++i_;
  }

  void multi_line_literal() {
    i_ += 3;
    while (i_ < text_.size() && !starts_with("'''")) ++i_;
    close_multi_line('\'');
  }

  void multi_line_basic() {
    i_ += 3;
    while (i_ < text_.size() && !starts_with("\"\"\"")) {
      if (text_[i_] != '\\') {
        ++i_;
        continue;
      }
      ++i_;  // the backslash; toml++ then tests the next character for whitespace
      if (!ascii_at(i_)) fail("non-ASCII character after a backslash in a multi-line string");
      std::size_t k = i_;
      while (k < text_.size() && (text_[k] == ' ' || text_[k] == '\t')) ++k;
      if (k < text_.size() && (text_[k] == '\n' || text_[k] == '\r') && (text_[i_] == ' ' || text_[i_] == '\t' || k == i_)) {
        // A line-ending backslash: whitespace and line breaks up to the next character vanish.
        while (k < text_.size() && (text_[k] == ' ' || text_[k] == '\t' || text_[k] == '\n' || text_[k] == '\r')) ++k;
        i_ = k;
        if (!ascii_at(i_))
          fail("a non-ASCII character right after a line-ending backslash (toml++ 3.3.0 mishandles it; "
               "start the line with an ASCII character or a \\u escape)");
      } else {
        if (!ascii_at(k)) {
          i_ = k;
          fail("non-ASCII character after a backslash in a multi-line string");
        }
        ++i_;  // an ordinary escape: \" \\ \n \uXXXX ...
      }
    }
    close_multi_line('"');
  }

  // """ or ''' closes; up to two more quotes belong to the string (TOML 1.0).
  void close_multi_line(char quote) {
    if (i_ >= text_.size()) return;
    i_ += 3;
    for (int extra = 0; extra < 2 && i_ < text_.size() && text_[i_] == quote; ++extra) ++i_;
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t i_ = 0;
};

}  // namespace

void guard_toml_text(std::string_view text, const std::string& display_path) { Scanner(text, display_path).run(); }

}  // namespace napkin
