#pragma once
// napkin calibrate's output: the product table, the step's matmul time, tokens/s and the
// measured MFU beside the assumed one, as text and JSON.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/calibration.hpp"
#include "core/dtype.hpp"
#include "core/model.hpp"
#include "core/step_gemms.hpp"
#include "core/training.hpp"

namespace napkin {

// One distinct product timed before Ctrl-C stopped a calibration.
struct TimedShape {
  GemmShape shape;
  std::vector<std::string> products;  // the step's products of this shape
  long long calls = 0;                // timed calls (the last shape may have fewer than asked)
  double time_per_call_s = 0;         // median
  double flops_per_s = 0;             // one call's FLOPs / its median time
};

struct CalibrateReport {
  Model model;
  StepConfig step;
  Dtype dtype = Dtype::bf16;   // the dtype timed
  std::string backend;         // "cuda", "cpu"; empty in a dry run
  std::string device_name;     // "NVIDIA H100 80GB HBM3", as the driver names it
  std::string device;          // its description; empty in a dry run
  std::string peak_source;     // where the dense peak came from
  std::vector<Gemm> gemms;     // always
  std::optional<CalibrationResult> result;  // absent in a dry run
  // With --tokens/--gpus: the same run at the measured and at the assumed MFU.
  std::optional<TrainingRun> run_measured;
  std::optional<TrainingRun> run_assumed;
  std::vector<std::string> notes;  // said once, under the report
  // Ctrl-C: the distinct products timed so far, of `distinct_products`; no result, no totals.
  bool interrupted = false;
  std::size_t distinct_products = 0;
  std::vector<TimedShape> timed;
};

// max_width: terminal columns to fit (cli::Context::columns()); 0 keeps every line whole.
std::string calibrate_text(const CalibrateReport& r, std::size_t max_width = 0);
nlohmann::json calibrate_json(const CalibrateReport& r);

}  // namespace napkin
