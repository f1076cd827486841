#pragma once
// Where `napkin train` gets its MFU: a number, or a measurement on this machine.
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/model.hpp"
#include "spec/registry.hpp"

namespace napkin::cli {

struct MfuChoice {
  double mfu = 0.5;
  std::string source;                 // printed beside the assumption
  std::vector<std::string> warnings;
};

// `text` is a fraction ("0.45", "45%"), "measured" (a short matmul bench on the local device
// in `dtype`) or "calibrated" (the model's own step products, timed; needs `model`).
// `hardware_key` is the run's accelerator, to warn when the measurement is of another device.
// `iterations` caps the timed products per shape of a measurement (train --iters). A
// measurement shows progress on stderr (cli/progress.hpp); Ctrl-C stops it (exit 130).
// On a machine with no GPU the measurement is the CPU's: refused for a GPU estimate unless
// `cpu_for_gpu` (train --force-cpu-mfu), since an OpenBLAS MFU says nothing about an H100's.
MfuChoice resolve_mfu(const std::string& text, bool given, Dtype dtype, const std::optional<Model>& model,
                      std::optional<double> seq_len, const std::string& hardware_key, const SpecRegistry& specs,
                      std::optional<long long> iterations = std::nullopt, bool cpu_for_gpu = false);

}  // namespace napkin::cli
