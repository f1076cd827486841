#pragma once
// napkin calibrate's engine: list one training step's matrix products (core/step_gemms),
// time each distinct shape with the bench harness (warm-up, per-product timing, cache
// flush, random operands, algorithm choice, correctness check), and combine the times
// into a step time and a measured MFU (core/calibration). `napkin train --mfu calibrated`
// calls calibrate() and uses result.mfu_measured.
#include <optional>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/harness.hpp"
#include "core/calibration.hpp"
#include "core/dtype.hpp"
#include "core/hardware.hpp"
#include "core/model.hpp"
#include "core/step_gemms.hpp"
#include "spec/registry.hpp"

namespace napkin {

struct CalibrateOptions {
  StepConfig step;                     // micro-batch, seq, tp
  Dtype dtype = Dtype::bf16;           // the CPU backend times fp32 instead of 16-bit formats
  double mfu_assumed = 0.5;            // what the report compares against
  std::optional<Hardware> hardware;    // peak and memory from this spec, not detection
  std::optional<long long> iterations; // timed calls per shape; nullopt: about target_time_s
  double target_time_s = 0.25;         // per shape, when iterations is unset
  std::optional<double> warmup_s;      // nullopt: the backend's default
  bench::RunControl control;           // progress and Ctrl-C (bench/harness.hpp)
};

struct Calibration {
  std::vector<Gemm> gemms;       // the step's products, in the order of result.products
  CalibrationResult result;      // step time, tokens/s, mfu_measured
  Dtype dtype_timed = Dtype::bf16;
  std::string backend;           // "cuda", "cpu"
  std::string device_name;       // as the driver or OS names it
  std::string device;            // the backend's description
  std::string peak_source;       // where the dense peak came from
  std::vector<std::string> notes;
  // Ctrl-C: what was timed before it, in order (the last may have fewer calls than asked);
  // result is then empty: a step time needs every distinct product.
  bool interrupted = false;
  std::vector<GemmShape> shapes;                // every distinct product, timed or not
  std::vector<bench::BenchResult> timed;        // the first timed.size() of them
};

// Throws Error: bad_input for a step that does not fit in the device's memory (with the
// bytes needed and what to lower), a dtype the device lacks, no known peak; failure for
// a timing or correctness failure. When opts.control asked to stop (Ctrl-C) it returns what was
// timed, with interrupted set; the caller reports it and exits 130.
Calibration calibrate(const Model& model, const CalibrateOptions& opts, bench::Backend& backend,
                      const SpecRegistry& registry);

// Bytes the device offers for timing: the spec's memory for a GPU (nullopt if unknown),
// physical RAM for the CPU.
std::optional<double> device_memory_bytes(bench::Backend& backend, const SpecRegistry& registry,
                                          const std::optional<std::string>& hardware_key);

}  // namespace napkin
