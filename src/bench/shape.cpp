#include "bench/shape.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/units.hpp"

namespace napkin::bench {
namespace {

// BLAS takes 32-bit dimensions; cuBLASLt takes 64-bit but napkin keeps one limit for both.
constexpr double max_dim = 2147483647.0;

std::int64_t parse_dim(std::string_view text, std::string_view what) {
  const double v = parse_count(text, what);
  if (v != std::floor(v)) throw Error(std::string(what) + ": '" + std::string(text) + "' is not a whole number");
  if (v < 1) throw Error(std::string(what) + ": sizes must be at least 1, got '" + std::string(text) + "'");
  if (v > max_dim) throw Error(std::string(what) + ": '" + std::string(text) + "' exceeds the largest size, 2147483647");
  return static_cast<std::int64_t>(v);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

struct Range {
  std::int64_t start = 0, stop = 0, step = 1;
  double count() const { return static_cast<double>((stop - start) / step + 1); }
};

Range parse_range(std::string_view text, std::string_view what) {
  const auto parts = split(text, ':');
  if (parts.size() == 1) {
    const std::int64_t v = parse_dim(parts[0], what);
    return {v, v, 1};
  }
  if (parts.size() != 3)
    throw Error(std::string(what) + ": '" + std::string(text) + "' is not START:STOP:STEP or a single size");
  const std::int64_t start = parse_dim(parts[0], what), stop = parse_dim(parts[1], what), step = parse_dim(parts[2], what);
  if (start > stop) throw Error(std::string(what) + ": range '" + std::string(text) + "' starts after it stops");
  return {start, stop, step};
}

}  // namespace

double matmul_flops(const Shape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) * static_cast<double>(s.batch);
}

Shape parse_shape(std::string_view text, std::string_view what) {
  const auto parts = split(text, 'x');
  const std::string w = std::string(what);
  if (parts.size() == 1) {
    const std::int64_t n = parse_dim(parts[0], w);
    return {n, n, n};
  }
  if (parts.size() != 3) throw Error(w + ": '" + std::string(text) + "' is not MxNxK (e.g. 8192x8192x8192)");
  return {parse_dim(parts[0], w), parse_dim(parts[1], w), parse_dim(parts[2], w)};
}

std::vector<Shape> parse_sweep(std::string_view text, std::string_view what) {
  const std::string w(what);
  Range dims[3];
  bool seen[3] = {false, false, false};
  for (std::string_view item : split(text, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq != 1)
      throw Error(w + ": '" + std::string(item) + "' is not m=..., n=... or k=... (e.g. m=1024:8192:1024,n=4096,k=4096)");
    const int axis = item[0] == 'm' ? 0 : item[0] == 'n' ? 1 : item[0] == 'k' ? 2 : -1;
    if (axis < 0) throw Error(w + ": unknown dimension '" + std::string(item.substr(0, 1)) + "' (use m, n and k)");
    if (seen[axis]) throw Error(w + ": dimension '" + std::string(item.substr(0, 1)) + "' given twice");
    seen[axis] = true;
    dims[axis] = parse_range(item.substr(2), w + " " + std::string(item.substr(0, 1)));
  }
  for (int a = 0; a < 3; ++a)
    if (!seen[a]) throw Error(w + ": missing dimension '" + std::string(1, "mnk"[a]) + "' (give m, n and k, e.g. m=1024:8192:1024,n=4096,k=4096)");
  // Counted before anything is listed: a range of a billion sizes is refused, not allocated.
  const double count = dims[0].count() * dims[1].count() * dims[2].count();
  if (count > max_sweep_shapes)
    throw Error(w + ": " + fmt::format("{:.0f}", count) + " shapes is too many (at most " +
                fmt::format("{:.0f}", max_sweep_shapes) + ")");
  std::vector<Shape> out;
  for (auto m = dims[0].start; m <= dims[0].stop; m += dims[0].step)
    for (auto n = dims[1].start; n <= dims[1].stop; n += dims[1].step)
      for (auto k = dims[2].start; k <= dims[2].stop; k += dims[2].step) out.push_back({m, n, k});
  return out;
}

std::string shape_text(const Shape& s) {
  const std::string mnk = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  return s.batch == 1 ? mnk : mnk + " (batch " + std::to_string(s.batch) + ")";
}

}  // namespace napkin::bench
