#include "report/calibration_file.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "report/format.hpp"
#include "spec/json_guard.hpp"
#include "spec/spec_file.hpp"

namespace napkin::calibration_file {

nlohmann::json products_json(const std::vector<Gemm>& gemms, const std::optional<CalibrationResult>& result) {
  nlohmann::json products = nlohmann::json::array();
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const Gemm& g = gemms[i];
    nlohmann::json p{{"name", g.name}, {"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}, {"count", g.count},
                     {"useful_fraction", g.useful_fraction}, {"flops", g.flops}, {"time_s", nullptr}};
    if (result) {
      const TimedGemm& t = result->products.at(i);
      p["time_s"] = t.time_s;
      p[kTimePerCall] = t.time_per_call_s;
      p[kTimePerProduct] = t.time_per_call_s / static_cast<double>(g.batch);
      p["flops_per_s"] = t.flops_per_s;
      p["share"] = t.share;
    }
    products.push_back(p);
  }
  return products;
}

std::vector<MeasuredGemm> read_timed_products(const std::string& path, const std::string& where) {
  std::string text;
  try {
    text = read_spec_file(path, 16 * kMaxSpecFileBytes);  // calibrate's JSON: a few hundred products
  } catch (const Error& e) {
    throw Error(where + " is neither a fraction (0.7, 70%) nor a 'napkin calibrate --json' file: " + e.what());
  }
  guard_json_depth(text, where);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(where + " is not JSON (expected 'napkin calibrate --json' output)");
  if (j.is_object() && j.contains("interrupted") && j["interrupted"] == true)
    throw Error(where + " is a calibration stopped by Ctrl-C: it times only part of the step; run 'napkin calibrate' to the end");
  if (!j.is_object() || !j.contains(kProducts) || !j[kProducts].is_array())
    throw Error(where + " has no '" + kProducts + "' list (expected 'napkin calibrate --json' output)");
  std::vector<MeasuredGemm> measured;
  std::size_t i = 0;
  for (const auto& p : j[kProducts]) {
    ++i;
    if (!p.is_object() || !p.contains(kTimePerProduct)) continue;  // a --dry-run entry: nothing timed
    const auto field = [&](const char* key) -> const nlohmann::json& {
      if (!p.contains(key) || !p[key].is_number())
        throw Error(fmt::format("{}: {}[{}].{}: missing or not a number", where, kProducts, i - 1, key));
      return p[key];
    };
    MeasuredGemm g;
    for (auto [key, dim] : {std::pair{"m", &g.m}, std::pair{"n", &g.n}, std::pair{"k", &g.k}}) {
      const double v = field(key).get<double>();
      if (!(v >= 1 && v <= 1e9) || v != std::floor(v))
        throw Error(fmt::format("{}: {}[{}].{}: {} is not a whole dimension in [1, 1e9]", where, kProducts, i - 1, key, format_sig(v, 6)));
      *dim = static_cast<long long>(v);
    }
    g.time_s = field(kTimePerProduct).get<double>();
    // 1 ns is below any kernel launch; 1 h above any one product napkin would time.
    if (!(g.time_s >= 1e-9 && g.time_s <= 3600))
      throw Error(fmt::format("{}: {}[{}].{}: {} is not a time in [1 ns, 3600 s]", where, kProducts, i - 1, kTimePerProduct,
                              format_sig(g.time_s, 6)));
    measured.push_back(g);
  }
  return measured;
}

}  // namespace napkin::calibration_file
