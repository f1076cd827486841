#include "core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace napkin {
namespace {

struct Split {
  double number;
  std::string_view suffix;
};

std::string quoted(std::string_view what, std::string_view text) {
  return std::string(what) + ": '" + std::string(text) + "'";
}

// Leading number (from_chars accepts "1.5e12", rejects "inf"/"nan" spelled out below), then the rest.
Split split_number(std::string_view text, std::string_view what, std::string_view expected) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) throw Error(std::string(what) + ": empty value; expected " + std::string(expected));
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range)
    throw Error(quoted(what, text) + " is out of range");
  if (ec != std::errc() || ptr == first)
    throw Error(quoted(what, text) + " is not a number; expected " + std::string(expected));
  std::string_view suffix(ptr, static_cast<size_t>(last - ptr));
  while (!suffix.empty() && std::isspace(static_cast<unsigned char>(suffix.front()))) suffix.remove_prefix(1);
  if (!std::isfinite(value)) throw Error(quoted(what, text) + " is not a finite number");
  return {value, suffix};
}

double checked(double value, std::string_view what, std::string_view text) {
  if (!std::isfinite(value)) throw Error(quoted(what, text) + " overflows");
  if (value < 0) throw Error(quoted(what, text) + " is negative");
  return value;
}

}  // namespace

double parse_count(std::string_view text, std::string_view what) {
  constexpr std::string_view expected = "a number such as 70B, 15T, 1.5e12 (suffixes k M G/B T P E Z Y)";
  auto [number, suffix] = split_number(text, what, expected);
  double scale = 1;
  if (suffix.empty()) scale = 1;
  else if (suffix == "k" || suffix == "K") scale = 1e3;
  else if (suffix == "M") scale = 1e6;
  else if (suffix == "G" || suffix == "B") scale = 1e9;
  else if (suffix == "T") scale = 1e12;
  else if (suffix == "P") scale = 1e15;
  else if (suffix == "E") scale = 1e18;
  else if (suffix == "Z") scale = 1e21;
  else if (suffix == "Y") scale = 1e24;
  else throw Error(quoted(what, text) + ": unknown suffix '" + std::string(suffix) + "'; expected " + std::string(expected));
  return checked(number * scale, what, text);
}

double parse_bytes(std::string_view text, std::string_view what) {
  constexpr std::string_view expected = "a size such as 80GB, 80GiB, 512MiB or 1.5e9 (bytes)";
  auto [number, suffix] = split_number(text, what, expected);
  if (!suffix.empty() && suffix.back() == 'B') suffix.remove_suffix(1);
  bool binary = false;
  if (!suffix.empty() && suffix.back() == 'i') {
    binary = true;
    suffix.remove_suffix(1);
  }
  if (suffix.size() > 1) throw Error(quoted(what, text) + ": unknown unit; expected " + std::string(expected));
  int power = 0;
  if (!suffix.empty()) {
    switch (suffix.front()) {
      case 'k': case 'K': power = 1; break;
      case 'M': power = 2; break;
      case 'G': power = 3; break;
      case 'T': power = 4; break;
      case 'P': power = 5; break;
      case 'E': power = 6; break;
      default:
        throw Error(quoted(what, text) + ": unknown unit; expected " + std::string(expected));
    }
  } else if (binary) {
    throw Error(quoted(what, text) + ": unknown unit; expected " + std::string(expected));
  }
  const double scale = std::pow(binary ? 1024.0 : 1000.0, power);
  const double bytes = checked(number * scale, what, text);
  // Memory comes in whole bytes: 1e-300GB is a typo or a probe, never a size.
  if (bytes > 0 && bytes < 1) throw Error(quoted(what, text) + " is less than one byte; expected 0 or " + std::string(expected));
  return bytes;
}

double parse_fraction(std::string_view text, std::string_view what) {
  constexpr std::string_view expected = "a fraction in (0, 1] such as 0.45 or 45%";
  auto [number, suffix] = split_number(text, what, expected);
  if (suffix == "%") number /= 100;
  else if (!suffix.empty()) throw Error(quoted(what, text) + " is not " + std::string(expected));
  if (!(number > 0) || number > 1) throw Error(quoted(what, text) + " is not " + std::string(expected));
  return number;
}

}  // namespace napkin
