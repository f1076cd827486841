#include "report/text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/unicode.hpp"

namespace napkin {

// Words longer than this, and than two lines, are shortened in the middle when wrapped: 160 bytes,
// as cli::shorten_words shortens what a message echoes.
constexpr std::size_t kLongestWord = 160;
namespace {

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The largest cut <= `at` that does not split a UTF-8 sequence. A sequence is at most 4 bytes,
// so at most 3 steps back: in a run of stray continuation bytes (not UTF-8) the cut stays near
// `at` (the fuzzer found a walk back to the start, which kept the whole text).
std::size_t boundary(std::string_view text, std::size_t at) {
  at = std::min(at, text.size());
  for (std::size_t k = 0; k < 3 && at > 0 && at < text.size() && continuation(static_cast<unsigned char>(text[at])); ++k)
    --at;
  return at;
}

}  // namespace

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(c == '\n' && keep_newlines)) || c == 0x7F) out += fmt::format("\\x{:02x}", c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (invisible_code_point(cp)) {
      out += (cp > 0xFFFF ? fmt::format("\\U{:08x}", static_cast<unsigned>(cp)) : fmt::format("\\u{:04x}", static_cast<unsigned>(cp)));
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string shorten_middle(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  const std::size_t head = boundary(text, max_bytes / 2);
  const std::size_t tail = boundary(text, text.size() - max_bytes / 2);
  return std::string(text.substr(0, head)) + fmt::format(" … ({} bytes left out) … ", tail - head) +
         std::string(text.substr(tail));
}

std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !continuation(static_cast<unsigned char>(c)); }));
}

// The byte offset where the first `columns` display columns of `text` end.
static std::size_t byte_offset(std::string_view text, std::size_t columns) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < text.size(); ++i) {
    if (!continuation(static_cast<unsigned char>(text[i]))) {
      if (seen == columns) break;
      ++seen;
    }
  }
  return i;
}

// One piece of a paragraph for wrapping: a word, or the part of a hyphenated word up to and
// including a hyphen ("bf16-", "mixed"). `joined` when it continues the previous piece directly
// (no space between them).
struct Piece {
  std::string_view text;
  bool joined = false;
};

static std::vector<Piece> pieces_of(std::string_view para, bool at_hyphens = true) {
  std::vector<Piece> out;
  bool after_space = true;
  std::size_t i = 0;
  while (i < para.size()) {
    if (para[i] == ' ') {
      after_space = true;
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < para.size() && para[end] != ' ') {
      // Break after an inner hyphen: one with a non-hyphen on each side.
      if (at_hyphens && para[end] == '-' && end > i && para[end - 1] != '-' && end + 1 < para.size() && para[end + 1] != '-' &&
          para[end + 1] != ' ') {
        ++end;
        break;
      }
      ++end;
    }
    out.push_back({para.substr(i, end - i), !after_space});
    after_space = false;
    i = end;
  }
  return out;
}

std::size_t longest_piece(std::string_view text) {
  std::size_t longest = 0;
  for (const Piece& p : pieces_of(text)) longest = std::max(longest, display_width(p.text));
  return longest;
}

std::vector<std::string> wrap_words(std::string_view text, std::size_t width, bool at_hyphens) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line;
    for (Piece piece : pieces_of(text.substr(start, end - start), at_hyphens)) {
      const std::size_t glue = piece.joined || line.empty() ? 0 : 1;
      if (width > 0 && !line.empty() && display_width(line) + glue + display_width(piece.text) > width) {
        lines.push_back(std::move(line));
        line.clear();
      } else if (glue) {
        line += ' ';
      }
      // Too long to read whole (a 5,000-character name): its middle is left out, not cut into
      // dozens of lines.
      std::string elided;
      if (width > 0 && display_width(piece.text) > std::max<std::size_t>(2 * width, kLongestWord)) {
        elided = shorten_middle(piece.text, width > 50 ? width - 40 : 10);
        piece.text = elided;
      }
      while (width > 0 && display_width(piece.text) > width) {  // wider than the column: cut it
        if (!line.empty()) lines.push_back(std::move(line)), line.clear();
        const std::size_t cut = byte_offset(piece.text, width);
        lines.emplace_back(piece.text.substr(0, cut));
        piece.text.remove_prefix(cut);
      }
      line.append(piece.text);
    }
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

std::string wrap_paragraph(std::string_view text, std::size_t width, std::string_view first, std::string_view rest) {
  const std::size_t indent = std::max(display_width(first), display_width(rest));
  // Never narrower than 20 columns: a terminal narrower than indent + 20 gets 20-column lines
  // (a little too wide) rather than whole ones (far too wide).
  const std::size_t room = width == 0 ? 0 : std::max<std::size_t>(20, width > indent ? width - indent : 0);
  std::string out;
  const std::vector<std::string> lines = wrap_words(text, room);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out.append(i == 0 ? first : rest);
    out += lines[i];
    out += '\n';
  }
  return out;
}

// One over-long line, broken at spaces: the runs of spaces inside each piece are kept (aligned
// columns stay aligned), the run where a break falls is dropped, and continuation lines start
// two columns further in than the line did.
static std::string wrap_line(std::string_view line, std::size_t width) {
  const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
  const std::string hang(lead + 2, ' ');
  std::string out(line.substr(0, lead));
  std::size_t column = lead;
  bool line_empty = true;  // nothing after the indent yet
  std::size_t pos = lead;
  while (pos < line.size()) {
    const std::size_t word_start = line.find_first_not_of(' ', pos);
    if (word_start == std::string_view::npos) break;
    std::size_t word_end = line.find(' ', word_start);
    if (word_end == std::string_view::npos) word_end = line.size();
    const std::string_view gap = line.substr(pos, word_start - pos);
    std::string_view word = line.substr(word_start, word_end - word_start);
    // A word too long to read whole is shortened in the middle (a 5,000-character model name).
    std::string elided;
    if (display_width(word) > std::max<std::size_t>(2 * width, kLongestWord)) {
      elided = shorten_middle(word, width > 50 ? width - 40 : 10);
      word = elided;
    }
    const std::size_t w = display_width(word);
    if (!line_empty && column + gap.size() + w > width) {
      out += '\n';
      out += hang;
      column = hang.size();
    } else {
      out.append(gap);
      column += gap.size();
    }
    out.append(word);
    column += w;
    line_empty = false;
    pos = word_end;
  }
  out += '\n';
  return out;
}

std::string wrap_lines(std::string_view text, std::size_t width) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (width == 0 || display_width(line) <= width) {
      out.append(line);
      out += '\n';
    } else {
      out += wrap_line(line, width);
    }
    start = end + 1;
  }
  return out;
}

}  // namespace napkin
