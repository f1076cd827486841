#include "report/table.hpp"

#include <algorithm>

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
std::vector<std::size_t> fit(const std::vector<std::vector<std::string>>& rows, bool has_header,
                             const std::vector<Align>& align, std::size_t indent, std::size_t max_width) {
  std::vector<std::size_t> widths = column_widths(rows);
  auto total = [&] {
    std::size_t t = indent;
    for (std::size_t w : widths) t += w;
    return t + 2 * (widths.empty() ? 0 : widths.size() - 1);
  };
  if (max_width == 0 || total() <= max_width) return widths;
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
  return total() <= max_width ? widths : headers_wrapped;
}

std::string render_rows(const std::vector<std::vector<std::string>>& rows, const std::vector<Align>& align,
                        const std::string& indent, bool has_header, std::size_t max_width) {
  const std::vector<std::size_t> natural = column_widths(rows);
  const std::vector<std::size_t> widths = fit(rows, has_header, align, display_width(indent), max_width);
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

}  // namespace

std::string Table::render() const {
  std::vector<std::vector<std::string>> all;
  if (!header.empty()) all.push_back(header);
  all.insert(all.end(), rows.begin(), rows.end());
  return render_rows(all, align, indent, !header.empty(), max_width);
}

std::string KeyValues::render(const std::string& indent) const {
  return render_rows(rows, {Align::left, value_align, Align::left}, indent, false, max_width);
}

}  // namespace napkin
