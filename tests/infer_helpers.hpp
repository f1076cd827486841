#pragma once
// Shared by the infer tests: a serving setup on one replica of one GPU, as a user's flags make it.
#include "core/infer_memory.hpp"
#include "spec/registry.hpp"

namespace napkin::test {

inline InferSetup serving_setup(const SpecRegistry& specs, const Hardware& hw, const char* engine, const char* weights, const char* kv,
                                long long input, long long output) {
  InferSetup s;
  s.engine = specs.engine(engine);
  s.weights = weight_format(weights);
  s.kv = kv_format(kv);
  s.input_tokens = input, s.output_tokens = output;
  s.memory_bytes = hw.usable_memory_bytes.value_or(hw.memory_bytes);
  return s;
}

}  // namespace napkin::test
