#pragma once
// Column-aligned text tables. Debian ships no table-layout library for C++, so this is
// fmt's width specifiers and a word wrapper.
//
// Terminal width: with `max_width` set (cli::Context::columns(): COLUMNS or the tty's width,
// 0 under --wide or when stdout is not a terminal), a table wider than that is fitted, trying in
// turn until it fits: wrap headers and the widest left-aligned (text) columns; abbreviate headers
// (short_header); leave out columns by rank (drop_rank, a note names them); print the columns in
// groups that each repeat the first (split_columns); stack each row into "header  value" lines.
// Numbers are never cut; one word wider than the terminal (a 5,000-character name) is shortened
// in the middle.
#include <cstddef>
#include <string>
#include <vector>

namespace napkin {

enum class Align { left, right };

struct Table {
  std::vector<std::string> header;
  std::vector<Align> align;  // per column; missing entries are left-aligned
  std::vector<std::string> short_header;  // per column: the header when the table is too wide ("": keep it)
  std::vector<int> drop_rank;  // per column: > 0 may be left out when too wide, the highest rank first
  bool split_columns = false;  // too wide: print groups of columns, each after the first column
  std::vector<std::vector<std::string>> rows;
  std::string indent = "  ";
  std::size_t max_width = 0;  // terminal columns to fit in; 0: no limit

  void add(std::vector<std::string> row) { rows.push_back(std::move(row)); }
  std::string render() const;
};

// "label   value   note" lines for one-result reports. Under max_width the note wraps.
struct KeyValues {
  std::vector<std::vector<std::string>> rows;
  Align value_align = Align::left;
  std::size_t max_width = 0;
  void add(std::string label, std::string value, std::string note = {}) {
    rows.push_back({std::move(label), std::move(value), std::move(note)});
  }
  std::string render(const std::string& indent = "  ") const;
};

}  // namespace napkin
