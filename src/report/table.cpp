#include "report/table.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "report/text.hpp"

namespace napkin {
namespace {

// The narrowest a wrapped text column gets: enough for a word or two.
constexpr std::size_t kMinWrappedWidth = 12;

std::string pad(const std::string& s, std::size_t w, Align a) {
  const std::size_t n = display_width(s);
  if (n >= w) return s;
  const std::string fill(w - n, ' ');
  return a == Align::right ? fill + s : s + fill;
}

std::vector<std::size_t> column_widths(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (widths.size() <= c) widths.push_back(0);
      widths[c] = std::max(widths[c], display_width(row[c]));
    }
  return widths;
}

// Widths that fit `max_width`, narrowing step by step until the table fits or nothing can give:
// first headers wider than their column's values wrap (at spaces and hyphens: "bf16-mixed-" over
// "fp32-grads"), then the widest left-aligned (text) columns wrap, down to kMinWrappedWidth.
// Values in right-aligned (number) columns are never cut, and text is wrapped only if that makes
// the table fit.
struct Fitted {
  std::vector<std::size_t> widths;
  bool fits = true;
};

Fitted fit(const std::vector<std::vector<std::string>>& rows, bool has_header, const std::vector<Align>& align, std::size_t indent,
           std::size_t max_width) {
  std::vector<std::size_t> widths = column_widths(rows);
  auto total = [&] {
    std::size_t t = indent;
    for (std::size_t w : widths) t += w;
    return t + 2 * (widths.empty() ? 0 : widths.size() - 1);
  };
  if (max_width == 0 || total() <= max_width) return {widths, true};
  if (has_header && !rows.empty()) {
    const std::vector<std::vector<std::string>> body(rows.begin() + 1, rows.end());
    std::vector<std::size_t> data = column_widths(body);
    data.resize(widths.size(), 0);
    for (std::size_t c = 0; c < widths.size() && c < rows[0].size() && total() > max_width; ++c) {
      const std::size_t narrowest = std::max(data[c], longest_piece(rows[0][c]));
      if (narrowest < widths[c]) widths[c] -= std::min(total() - max_width, widths[c] - narrowest);
    }
  }
  const std::vector<std::size_t> headers_wrapped = widths;
  while (total() > max_width) {
    std::size_t best = widths.size();
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const bool text = c >= align.size() || align[c] == Align::left;
      if (text && widths[c] > kMinWrappedWidth && (best == widths.size() || widths[c] > widths[best])) best = c;
    }
    if (best == widths.size()) break;
    // Narrow the widest text column only down to the next widest, so two long text columns share
    // the room (a description and a detail column both wrap a little, not one to a word per line).
    std::size_t next = kMinWrappedWidth;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const bool text = c >= align.size() || align[c] == Align::left;
      if (text && c != best && widths[c] <= widths[best]) next = std::max(next, widths[c]);
    }
    widths[best] -= std::max<std::size_t>(1, std::min(total() - max_width, widths[best] - next));
  }
  // Wrapping text that still cannot make the table fit only makes it harder to read: then the
  // text stays whole (the numbers need the room anyway); wrapped headers are kept, they cost nothing.
  if (total() <= max_width) return {widths, true};
  return {headers_wrapped, false};
}

std::string render_rows(const std::vector<std::vector<std::string>>& rows, const std::vector<Align>& align,
                        const std::string& indent, bool has_header, const std::vector<std::size_t>& widths) {
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    // Each cell as lines: one unless its column was narrowed.
    std::vector<std::vector<std::string>> cells;
    std::size_t height = 1;
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      const bool too_wide = display_width(rows[r][c]) > widths[c];  // only these wrap; the rest keep their spaces
      cells.push_back(too_wide ? wrap_words(rows[r][c], widths[c]) : std::vector<std::string>{rows[r][c]});
      height = std::max(height, cells.back().size());
    }
    for (std::size_t l = 0; l < height; ++l) {
      std::string line = indent;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const Align a = c < align.size() ? align[c] : Align::left;
        const bool last = c + 1 == cells.size();
        const std::string& text = l < cells[c].size() ? cells[c][l] : std::string();
        line += last && a == Align::left ? text : pad(text, widths[c], a);
        if (!last) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    if (r == 0 && has_header) {
      std::string rule = indent;
      for (std::size_t c = 0; c < widths.size(); ++c) rule += std::string(widths[c], '-') + (c + 1 < widths.size() ? "  " : "");
      out += rule + "\n";
    }
  }
  return out;
}

// `rows` as a grid if it fits `max_width` (always, when 0), else nothing.
std::optional<std::string> grid(const std::vector<std::vector<std::string>>& rows, const std::vector<Align>& align,
                                const std::string& indent, bool has_header, std::size_t max_width) {
  const Fitted f = fit(rows, has_header, align, display_width(indent), max_width);
  if (!f.fits) return std::nullopt;
  return render_rows(rows, align, indent, has_header, f.widths);
}

// The columns `keep` of `rows` and `align`.
std::pair<std::vector<std::vector<std::string>>, std::vector<Align>> pick(const std::vector<std::vector<std::string>>& rows,
                                                                          const std::vector<Align>& align,
                                                                          const std::vector<std::size_t>& keep) {
  std::pair<std::vector<std::vector<std::string>>, std::vector<Align>> out;
  for (const auto& row : rows) {
    out.first.emplace_back();
    for (std::size_t c : keep)
      if (c < row.size()) out.first.back().push_back(row[c]);
  }
  for (std::size_t c : keep) out.second.push_back(c < align.size() ? align[c] : Align::left);
  return out;
}

// A word wider than the terminal cannot wrap: its middle is left out, so that it fits (a
// 5,000-character model name; a grid would otherwise cut it into 63 lines).
std::string elide_long_words(const std::string& cell, std::size_t room) {
  if (room == 0 || longest_piece(cell) <= room) return cell;
  std::string out;
  std::size_t i = 0;
  while (i <= cell.size()) {
    const std::size_t end = std::min(cell.find(' ', i), cell.size());
    const std::string word = cell.substr(i, end - i);
    out += display_width(word) > room ? shorten_middle(word, room > 40 ? room - 30 : 10) : word;
    if (end == cell.size()) break;
    out += ' ';
    i = end + 1;
  }
  return out;
}

}  // namespace

std::string Table::render() const {
  const bool has_header = !header.empty();
  const std::size_t room = max_width > display_width(indent) + 4 ? max_width - display_width(indent) - 4 : 0;
  std::vector<std::vector<std::string>> all;
  if (has_header) all.push_back(header);
  for (const auto& row : rows) {
    all.emplace_back();
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool text = c >= align.size() || align[c] == Align::left;  // numbers are never cut
      // Escaped here, not only at the output boundary: a cell's width is measured as it prints
      // (a key "we<U+202E>ird" printed as "we\u202eird", 6 columns wider than its padding said).
      const std::string cell = printable(row[c]);
      all.back().push_back(text ? elide_long_words(cell, room) : cell);
    }
  }
  if (auto out = grid(all, align, indent, has_header, max_width)) return *out;

  // Abbreviated headers.
  if (has_header)
    for (std::size_t c = 0; c < short_header.size() && c < all[0].size(); ++c)
      if (!short_header[c].empty()) all[0][c] = short_header[c];
  if (auto out = grid(all, align, indent, has_header, max_width)) return *out;

  // Columns left out, the highest rank first (of equal rank, the rightmost), named in a note.
  const std::size_t n = all.empty() ? 0 : all[0].size();
  std::vector<std::size_t> droppable;
  for (std::size_t c = 0; c < n && c < drop_rank.size(); ++c)
    if (drop_rank[c] > 0) droppable.push_back(c);
  std::stable_sort(droppable.begin(), droppable.end(), [this](std::size_t a, std::size_t b) {
    return drop_rank[a] != drop_rank[b] ? drop_rank[a] > drop_rank[b] : a > b;
  });
  std::vector<bool> dropped(n, false);
  std::vector<std::string> left_out;
  for (std::size_t c : droppable) {
    dropped[c] = true;
    left_out.push_back(has_header ? header[c] : std::to_string(c + 1));
    std::vector<std::size_t> keep;
    for (std::size_t k = 0; k < n; ++k)
      if (!dropped[k]) keep.push_back(k);
    const auto [rows_kept, align_kept] = pick(all, align, keep);
    if (auto out = grid(rows_kept, align_kept, indent, has_header, max_width)) {
      std::string names;
      for (const std::string& h : left_out) names += (names.empty() ? "" : ", ") + h;
      return *out + wrap_paragraph("(left out to fit " + std::to_string(max_width) + " columns: " + names + "; --wide shows them)",
                                   max_width, indent, indent + " ");
    }
  }

  // Groups of columns, each after the first (a row's name): plans side by side, a few at a time.
  if (split_columns && n > 1) {
    const auto fits_columns = [&](const std::vector<std::size_t>& columns) {
      const auto [r, a] = pick(all, align, columns);
      return fit(r, has_header, a, display_width(indent), max_width).fits;
    };
    std::vector<std::vector<std::size_t>> groups{{0}};
    bool fits = true;
    for (std::size_t c = 1; c < n && fits; ++c) {
      std::vector<std::size_t> wider = groups.back();
      wider.push_back(c);
      if (fits_columns(wider)) groups.back() = std::move(wider);
      else if (groups.back().size() > 1 && fits_columns({0, c})) groups.push_back({0, c});
      else fits = false;
    }
    if (fits) {
      std::string out;
      for (const auto& g : groups) {
        const auto [r, a] = pick(all, align, g);
        if (!out.empty()) out += '\n';
        out += *grid(r, a, indent, has_header, max_width);
      }
      return out;
    }
  }

  // Each row as "header  value" lines, the rows apart (every column kept, with its full header).
  // Without headers there is nothing to label the values with: the grid, too wide.
  if (!has_header) return render_rows(all, align, indent, false, fit(all, false, align, display_width(indent), max_width).widths);
  // The values keep their width; the headers wrap (at spaces and hyphens) into what is left.
  std::size_t key_width = 0, value_width = 0, key_piece = 0;
  for (std::size_t c = 0; c < header.size(); ++c) key_width = std::max(key_width, display_width(header[c])), key_piece = std::max(key_piece, longest_piece(header[c]));
  for (std::size_t r = 1; r < all.size(); ++r)
    for (const std::string& cell : all[r]) value_width = std::max(value_width, display_width(cell));
  const std::size_t fixed = display_width(indent) + 2 + value_width;
  if (fixed + key_width > max_width) key_width = std::max(key_piece, max_width > fixed ? max_width - fixed : 0);
  std::string out;
  for (std::size_t r = 1; r < all.size(); ++r) {
    std::vector<std::vector<std::string>> kv;
    for (std::size_t c = 0; c < all[r].size(); ++c) kv.push_back({c < header.size() ? header[c] : "", all[r][c]});
    if (!out.empty()) out += '\n';
    out += render_rows(kv, {Align::left, Align::left}, indent, false, {key_width, value_width});
  }
  return out;
}

std::string KeyValues::render(const std::string& indent) const {
  const std::vector<Align> align = {Align::left, value_align, Align::left};
  std::vector<std::vector<std::string>> shown = rows;  // escaped before measured, as in Table::render
  for (auto& row : shown)
    for (auto& cell : row) cell = printable(cell);
  return render_rows(shown, align, indent, false, fit(shown, false, align, display_width(indent), max_width).widths);
}

}  // namespace napkin
