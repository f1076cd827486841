#pragma once
// For `napkin train --mfu measured`: a short matmul bench on the local device.
#include <optional>
#include <string>

#include "bench/harness.hpp"
#include "bench/shape.hpp"
#include "core/dtype.hpp"
#include "core/hardware.hpp"
#include "spec/registry.hpp"

namespace napkin::bench {

struct MeasuredMfu {
  double mfu = 0;               // median throughput / peak, in (0, 1]
  double flops_per_s = 0;       // median throughput
  double peak_flops_per_s = 0;
  std::string device;           // "NVIDIA H100 80GB HBM3 (cuda)"
  std::string peak_source;      // where the peak came from
  Shape shape;
  Dtype dtype = Dtype::bf16;    // the dtype measured (the CPU measures fp32 for 16-bit requests)
  std::string note;             // e.g. why the dtype differs; empty otherwise
};

// Picks cuda if available, else cpu; `hardware` overrides the detected spec; `iterations`
// caps the timed products (default: about 0.5 s worth). Throws Error when no peak is known
// for the device (unknown GPU without `hardware`), and Error(interrupted) when `control`
// asked to stop.
MeasuredMfu measure_mfu(const SpecRegistry& registry, Dtype dtype, std::optional<Hardware> hardware,
                        std::optional<long long> iterations = std::nullopt, const RunControl& control = {});

}  // namespace napkin::bench
