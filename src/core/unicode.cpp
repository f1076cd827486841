#include "core/unicode.hpp"

namespace napkin {

std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& cp) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t n = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool invisible_code_point(char32_t cp) {
  const auto in = [cp](char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; };
  return in(0x80, 0x9F) || cp == 0xAD || cp == 0x34F || cp == 0x61C || in(0x115F, 0x1160) || in(0x17B4, 0x17B5) ||
         in(0x180B, 0x180F) || in(0x200B, 0x200F) || in(0x2028, 0x202E) || in(0x2060, 0x206F) || cp == 0x3164 ||
         in(0xFE00, 0xFE0F) || cp == 0xFEFF || cp == 0xFFA0 || in(0xFFF9, 0xFFFB) || in(0x1BCA0, 0x1BCA3) ||
         in(0x1D173, 0x1D17A) || in(0xE0000, 0xE0FFF);
}

}  // namespace napkin
