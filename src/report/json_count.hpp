#pragma once
// Counts in JSON are integers (`"gpus": 1024`, not 1024.0) wherever the value is a whole
// number a double holds exactly; anything else stays a number.
#include <nlohmann/json.hpp>

namespace napkin {

inline nlohmann::json json_count(double v) {
  if (v >= 0 && v < 9007199254740992.0 && v == static_cast<double>(static_cast<long long>(v))) return static_cast<long long>(v);
  return v;
}

}  // namespace napkin
