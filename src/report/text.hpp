#pragma once
// Text on its way to a terminal. Arguments and spec strings come from the user and may hold
// escape sequences ("\e[2J" clears the screen) or be 100 kB long, so everything napkin prints
// passes through here at the output boundary (cli::emit, cli::warn, the error printer).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace napkin {

// `text` with every control character written as an escape: C0 controls and DEL as "\x1b",
// C1 controls, bidirectional overrides and every other character that draws nothing
// (invisible_code_point: U+200B, U+FEFF, ...) as "\u009b" (above U+FFFF as "\U000e0001"), and
// bytes that are not valid UTF-8 as "\xff". Printable UTF-8 ("·", "×", "²") passes unchanged. With
// keep_newlines, '\n' is kept (reports are multi-line); without it the result is one line.
std::string printable(std::string_view text, bool keep_newlines = true);

// `text` at most about `max_bytes` long: the head and the tail, with the middle replaced by
// " … (N bytes left out) … ". Cuts only between UTF-8 characters.
std::string shorten_middle(std::string_view text, std::size_t max_bytes);

// Display width in terminal columns: UTF-8 code points (napkin prints no wide characters).
std::size_t display_width(std::string_view text);

// `text` broken into lines of at most `width` columns at spaces and after inner hyphens
// ("bf16-|mixed"; not with at_hyphens false: help, where "bf16-mixed" is a value to type); a word
// longer than `width` is cut.
// Existing line breaks are kept. width 0 means no limit (one line per
// input line).
std::vector<std::string> wrap_words(std::string_view text, std::size_t width, bool at_hyphens = true);

// The widest part wrap_words never breaks: a word, or a hyphenated word's part up to its hyphen.
std::size_t longest_piece(std::string_view text);

// A paragraph for a terminal `width` columns wide (0: no limit): the first line after `first`,
// the others after `rest` (a hanging indent), each ending in '\n'.
std::string wrap_paragraph(std::string_view text, std::size_t width, std::string_view first, std::string_view rest);

// Lines of prose for a terminal `width` columns wide (0: no limit): each line longer than `width`
// wrapped on its own, its continuation lines indented two more than it. Not for tables (their
// Table::max_width fits them column by column).
std::string wrap_lines(std::string_view text, std::size_t width);

}  // namespace napkin
