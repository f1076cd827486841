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

// Narrows the widest left-aligned columns, one at a time, until the table fits `max_width` or
// no text column can give more. Returns the widths to wrap to.
std::vector<std::size_t> fit(std::vector<std::size_t> widths, const std::vector<Align>& align, std::size_t indent,
                             std::size_t max_width) {
  auto total = [&] {
    std::size_t t = indent;
    for (std::size_t w : widths) t += w;
    return t + 2 * (widths.empty() ? 0 : widths.size() - 1);
  };
  while (max_width > 0 && total() > max_width) {
    std::size_t best = widths.size();
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const bool text = c >= align.size() || align[c] == Align::left;
      if (text && widths[c] > kMinWrappedWidth && (best == widths.size() || widths[c] > widths[best])) best = c;
    }
    if (best == widths.size()) break;  // only numbers left: print wide rather than cut them
    const std::size_t over = total() - max_width;
    widths[best] -= std::min(over, widths[best] - kMinWrappedWidth);
  }
  return widths;
}

std::string render_rows(const std::vector<std::vector<std::string>>& rows, const std::vector<Align>& align,
                        const std::string& indent, bool has_header, std::size_t max_width) {
  const std::vector<std::size_t> natural = column_widths(rows);
  const std::vector<std::size_t> widths = fit(natural, align, display_width(indent), max_width);
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    // Each cell as lines: one unless its column was narrowed.
    std::vector<std::vector<std::string>> cells;
    std::size_t height = 1;
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      cells.push_back(widths[c] < natural[c] ? wrap_words(rows[r][c], widths[c]) : std::vector<std::string>{rows[r][c]});
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
