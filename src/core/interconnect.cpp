#include "core/interconnect.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace napkin {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The leading number and what follows it (spaces skipped); nullopt when there is no number.
std::optional<std::pair<double, std::string_view>> leading_number(std::string_view text) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  double v = 0;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr == first || !std::isfinite(v)) return std::nullopt;
  return std::make_pair(v, trim(std::string_view(ptr, static_cast<size_t>(last - ptr))));
}

double si_prefix(char c) {
  switch (c) {
    case 'k': case 'K': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    default: return 0;
  }
}

}  // namespace

double parse_bandwidth(std::string_view text, std::string_view what) {
  const std::string expected = "a bandwidth with its unit, e.g. 400Gb/s (bits) or 50GB/s (bytes) per GPU per direction";
  const std::string quoted = std::string(what) + ": '" + std::string(text) + "'";
  const auto parsed = leading_number(trim(text));
  if (!parsed) throw Error(quoted + " is not a number; expected " + expected);
  auto [value, unit] = *parsed;
  if (unit.empty()) throw Error(quoted + " has no unit; write 400Gb/s (bits) or 50GB/s (bytes): the two differ by 8x");
  // "/s" and "ps" mean per second.
  if (unit.size() >= 2 && (unit.substr(unit.size() - 2) == "/s" || unit.substr(unit.size() - 2) == "ps"))
    unit.remove_suffix(2);
  else
    throw Error(quoted + ": unknown unit '" + std::string(unit) + "'; expected " + expected);
  double scale = 1;
  if (unit.size() == 2) {
    scale = si_prefix(unit.front());
    if (scale == 0) throw Error(quoted + ": unknown prefix '" + std::string(1, unit.front()) + "'; expected k, M, G, T or P");
    unit.remove_prefix(1);
  }
  if (unit == "B") {
    // bytes
  } else if (unit == "b") {
    scale /= 8;
  } else {
    throw Error(quoted + ": unknown unit; expected " + expected);
  }
  const double bytes_per_s = value * scale;
  if (!(bytes_per_s > 0) || !std::isfinite(bytes_per_s)) throw Error(quoted + " must be a positive, finite bandwidth");
  return bytes_per_s;
}

double parse_duration(std::string_view text, std::string_view what) {
  const std::string quoted = std::string(what) + ": '" + std::string(text) + "'";
  const auto parsed = leading_number(trim(text));
  if (!parsed) throw Error(quoted + " is not a number; expected a duration such as 5us or 1.2ms");
  const auto [value, unit] = *parsed;
  double scale = 0;
  if (unit == "s") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us" || unit == "\xC2\xB5s") scale = 1e-6;  // "µs" in UTF-8
  else if (unit == "ns") scale = 1e-9;
  else throw Error(quoted + ": expected a duration with its unit (s, ms, us, ns), e.g. 5us");
  const double s = value * scale;
  if (!(s >= 0) || !std::isfinite(s)) throw Error(quoted + " must be a non-negative, finite duration");
  return s;
}

std::vector<MissingFigure> missing_interconnect_figures(const Interconnect& ic, bool crosses_domains) {
  std::vector<MissingFigure> missing;
  if (!ic.scale_up_gpus) missing.push_back({"GPUs per scale-up domain", "--node-gpus", "scale_up_gpus", ""});
  if (!ic.scale_up.bandwidth_bytes_per_s) missing.push_back({"scale-up bandwidth", "--scale-up-bw", "scale_up_bandwidth", "450GB/s"});
  if (crosses_domains && !ic.scale_out.bandwidth_bytes_per_s)
    missing.push_back({"scale-out bandwidth", "--scale-out-bw", "scale_out_bandwidth", "400Gb/s"});
  return missing;
}

}  // namespace napkin
