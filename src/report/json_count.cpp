#include "report/json_count.hpp"

#include <cmath>

namespace napkin {

bool is_count_key(std::string_view key) {
  if (key == "params" || key == "tokens" || key == "gpus") return true;
  if (key == "value_bytes") return false;
  for (std::string_view suffix : {"_params", "_tokens", "_gpus", "_bytes"})
    if (key.size() > suffix.size() && key.substr(key.size() - suffix.size()) == suffix) return true;
  return false;
}

namespace {

void round_count(nlohmann::json& v) {
  if (!v.is_number_float()) return;
  const double x = v.get<double>();
  if (!std::isfinite(x)) return;
  const double r = std::round(x);
  if (r >= 0 && r < 18446744073709551616.0) v = static_cast<unsigned long long>(r);
  else if (r < 0 && r > -9223372036854775808.0) v = static_cast<long long>(r);
}

}  // namespace

void integer_counts(nlohmann::json& j) {
  if (j.is_array()) {
    for (auto& e : j) integer_counts(e);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (is_count_key(it.key())) {
        if (it->is_array()) {
          for (auto& e : *it) round_count(e);
        } else {
          round_count(*it);
        }
      }
      if (it->is_structured()) integer_counts(*it);
    }
  }
}

}  // namespace napkin
