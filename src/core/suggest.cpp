#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "core/unicode.hpp"

namespace napkin {
namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
// Letters and digits only, lower case: "Meta-Llama-3-8B" → "metallama38b", "llama3-8b" → "llama38b".
std::string squashed(std::string_view s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
// Without what cannot be seen or typed on purpose: C0 controls and DEL, a terminal escape sequence
// whole, and every invisible_code_point (C1 controls, the soft hyphen, zero-width characters and
// joiners, bidi controls, the BOM, ...). A name typed with a stray one ("llama\x07", a pasted
// "llama3-8b\u200b", a colour code) is matched as the name around it.
std::string visible(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b && i + 1 < s.size() && s[i + 1] == '[') {  // a terminal escape sequence, "\x1b[31m": to its final byte
      for (i += 2; i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e); ++i) {
      }
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = c < 0x80 ? 0 : utf8_sequence(s, i, cp);
    if (n > 0 && invisible_code_point(cp)) {
      i += n;
      continue;
    }
    const std::size_t keep = n > 0 ? n : 1;
    out.append(s.substr(i, keep));
    i += keep;
  }
  return out;
}
}  // namespace

std::size_t edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = lower(a_in), b = lower(b_in);
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest_names(std::string_view query, const std::vector<std::string>& candidates,
                                       std::size_t max_results) {
  const std::string q = lower(visible(query));
  const std::size_t limit = std::max<std::size_t>(2, q.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = lower(visible(c));
    std::size_t d = edit_distance(q, lc);
    if (!q.empty() && lc.find(q) != std::string::npos) d = std::min<std::size_t>(d, 1);  // a prefix or part of the name
    if (d <= limit) scored.emplace_back(d, c);
  }
  if (scored.empty()) {
    // Nothing close: a known name inside the query, spelled with other separators or case
    // ("Meta-Llama-3-8B" holds llama3-8b, "nvidia-h100-sxm" holds h100-sxm,
    // "llama3-70b-instruct" holds llama3-70b), the longest (most specific) first. Only as a
    // fallback, so a one-letter typo still wins; three characters at least, so "l4" is not
    // found everywhere.
    const std::string sq = squashed(query);
    for (const auto& c : candidates) {
      const std::string sc = squashed(c);
      if (sc.size() >= 3 && sq.find(sc) != std::string::npos) scored.emplace_back(sq.size() - sc.size(), c);
    }
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() == max_results) break;
    out.push_back(c);
  }
  return out;
}

std::string did_you_mean(std::string_view query, const std::vector<std::string>& candidates) {
  const auto names = closest_names(query, candidates);
  if (names.empty()) return {};
  std::string s = "; did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += "'" + names[i] + "'";
  }
  return s + "?";
}

}  // namespace napkin
