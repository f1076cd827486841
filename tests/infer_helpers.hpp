#pragma once
// Shared by the infer tests: a serving setup on one replica of one GPU, as a user's flags make it.
#include "core/infer_memory.hpp"
#include "core/infer_time.hpp"
#include "spec/registry.hpp"

namespace napkin::test {

inline InferSetup serving_setup(const SpecRegistry& specs, const Hardware& hw, const char* engine, const char* weights, const char* kv,
                                long long input, long long output) {
  InferSetup s;
  s.engine = engine_on(specs.engine(engine), hw);  // with the limits the engine sets by the GPU, as infer does
  s.weights = weight_format(weights);
  s.kv = kv_format(kv);
  s.input_tokens = input, s.output_tokens = output;
  s.memory_bytes = hw.usable_memory_bytes.value_or(hw.memory_bytes);
  return s;
}

// One built-in model on one built-in part under one engine, with its memory and time setups at the
// default decode MBU: what most serving tests start from.
struct ServingCase {
  SpecRegistry specs = SpecRegistry::builtin_only();
  Model m;
  Hardware hw;
  InferSetup s;
  InferTimeSetup t;
  InferMemory mem;
  ServingCase(const char* model, const char* hardware, const char* engine, const char* weights, const char* kv, long long input,
              long long output)
      : m(specs.model(model)),
        hw(specs.hardware(hardware)),
        s(serving_setup(specs, hw, engine, weights, kv, input, output)),
        t(infer_time_setup(hw, s.weights, default_decode_mbu)),
        mem(infer_memory(m, s)) {}
};

}  // namespace napkin::test
