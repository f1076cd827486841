#pragma once
// What `napkin infer` prints: memory per GPU, max batch, and latency/throughput at one batch
// or over a ladder of batches; text, --explain and JSON (the keys are a contract, see
// docs/METHODOLOGY.md "Serving").
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/hardware.hpp"
#include "core/infer_memory.hpp"
#include "core/infer_serving.hpp"
#include "core/infer_time.hpp"
#include "core/model.hpp"

namespace napkin {

struct InferReport {
  Model model;
  Hardware hardware;
  InferSetup setup;
  InferTimeSetup time_setup;
  std::string mbu_source;
  InferMemory memory;
  std::optional<long long> batch;   // --batch
  std::vector<long long> concurrency;  // --concurrency
  std::vector<double> rates;           // --rate, requests a second
  std::vector<SteadyState> serving;    // one per --concurrency value, then one per --rate value
  std::vector<InferTime> points;    // one (--batch) or the ladder
  std::size_t knee = 0;             // index into points (the ladder)
  std::vector<InferHint> hints;
  std::vector<std::string> assumptions;
  std::vector<std::string> notes;
};

std::string infer_text(const InferReport& r, bool explain, std::size_t max_width = 0);
std::vector<std::string> infer_explain_steps(const InferReport& r);
nlohmann::json infer_json(const InferReport& r);

}  // namespace napkin
