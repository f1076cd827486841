#pragma once
// Counts in JSON are integers (`"gpus": 1024`, not 1024.0): one rule, by key name, for every
// command's --json (integer_counts), so that `tokens`, `params` and `*_bytes` read the same in
// plan as in memory and train.
#include <nlohmann/json.hpp>

#include <string_view>

namespace napkin {

// A whole number a double holds exactly becomes an integer; anything else stays a number.
inline nlohmann::json json_count(double v) {
  if (v >= 0 && v < 9007199254740992.0 && v == static_cast<double>(static_cast<long long>(v))) return static_cast<long long>(v);
  return v;
}

// Whether a key names a count of things: params, tokens, gpus, or a name ending in _params,
// _tokens, _gpus or _bytes (model_states_bytes, host_bytes), except value_bytes (the size of one
// stored value, 0.5 for fp4).
bool is_count_key(std::string_view key);

// Rounds every number under a count key, at any depth, to the nearest integer (a count above
// 2^64 stays a double: JSON integers stop there).
void integer_counts(nlohmann::json& j);

}  // namespace napkin
