// libFuzzer target: what a user types for a number ("70B", "80GiB", "45%") and what napkin prints
// back. The parsers return a finite, non-negative value or throw napkin::Error; the formatters
// give a short string for any double; printable() leaves no control character in its output.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/units.hpp"
#include "report/format.hpp"
#include "report/text.hpp"

#include "fuzz_require.hpp"

namespace {


// Every formatter of a value stays short: never a 300-digit figure.
void check_formats(double v) {
  for (const std::string& s : {napkin::format_si(v, "FLOP/s"), napkin::format_count(v), napkin::format_iec_bytes(v),
                               napkin::format_sig(v), napkin::format_sci(v), napkin::format_percent(v, 3, true),
                               napkin::format_duration(v)})
    require(!s.empty() && s.size() < 48);
  try {
    const double r = napkin::checked_result(v, "the result", "--input");
    require(std::isfinite(r));
  } catch (const napkin::Error&) {
  }
}

template <typename Parse>
void check_parse(Parse parse, std::string_view text) {
  try {
    const double v = parse(text, "--flag");
    require(std::isfinite(v) && v >= 0);
    check_formats(v);
  } catch (const napkin::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_parse(napkin::parse_count, text);
  check_parse(napkin::parse_bytes, text);
  check_parse(napkin::parse_fraction, text);

  // The raw bytes as a double: every bit pattern, subnormals, infinities and NaNs included.
  if (size >= sizeof(double)) {
    double v = 0;
    std::memcpy(&v, data, sizeof v);
    check_formats(v);
  }

  for (const bool keep_newlines : {true, false}) {
    const std::string safe = napkin::printable(text, keep_newlines);
    for (const char ch : safe) {
      const auto c = static_cast<unsigned char>(ch);
      require(c >= 0x20 || (keep_newlines && c == '\n'));
      require(c != 0x7F);
    }
    // The escaped text is printable UTF-8: escaping it again changes nothing.
    require(napkin::printable(safe, keep_newlines) == safe);
  }
  // Wrapping for the terminal: no line wider than asked, unless one piece is and is cut to it.
  const std::size_t width = size % 40;
  for (const std::string& line : napkin::wrap_words(text, width))
    require(width == 0 || napkin::display_width(line) <= width);
  const std::size_t max = size / 2 + 1;
  const std::string short_text = napkin::shorten_middle(text, max);
  require(short_text.size() <= std::max(size, max + 64));
  return 0;
}
