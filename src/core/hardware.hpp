#pragma once
// One accelerator, as its datasheet describes it.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/interconnect.hpp"

namespace napkin {

struct Hardware {
  std::string key;           // the spec's file stem: "h100-sxm"
  std::string name;          // display name: "NVIDIA H100 SXM5 80GB"
  std::string vendor;
  double memory_bytes = 0;   // as the datasheet states it (80 GB = 80e9 bytes)
  // What a driver reports as usable (H100 SXM: about 79.6 GiB), where known.
  std::optional<double> usable_memory_bytes;
  std::string memory_type;
  double memory_bandwidth_bytes_per_s = 0;
  std::optional<double> tdp_watts;
  // Streaming multiprocessors (NVIDIA): what a communication kernel that holds some of them leaves
  // to the products (tensor-parallel overlap, core/step_time.hpp); unset where not given.
  std::optional<long long> sm_count;
  // The power limit the part runs at as deployed, where it is below the TDP (Meta's Grand Teton
  // H100s: 500 W of 700). `--power-limit` replaces it (core/power.hpp).
  std::optional<double> power_limit_watts;
  // NVIDIA and AMD quote tensor throughput with 2:4 structured sparsity; napkin stores the
  // dense half and derives the sparse figure only when asked (--sparse).
  bool tensor_figures_quoted_sparse = false;
  std::map<Dtype, double> dense_peak_flops_per_s;
  std::string source;
  std::vector<std::string> device_names;  // what the driver reports, for auto-detection
  std::string notes;
  std::string origin;  // where the spec was loaded from ("builtin:hardware/h100-sxm.toml" or a path)
  // Scale-up and scale-out networks of a typical cluster of this part (the spec's optional
  // [interconnect] table); `napkin plan` refuses to predict communication without them.
  Interconnect interconnect;

  // Vendors compare without regard to case: a spec's "Nvidia" is NVIDIA, with its runtime reserve
  // and the engines that run only there.
  bool made_by(std::string_view v) const {
    return std::equal(vendor.begin(), vendor.end(), v.begin(), v.end(), [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
  }

  // What one part is called in text: "GPU" for NVIDIA's and AMD's, "chip" for the others (a TPU,
  // a Gaudi). JSON keys keep "gpu" whatever the part (weights_bytes_per_gpu is a contract).
  std::string_view device_word() const { return made_by("NVIDIA") || made_by("AMD") ? "GPU" : "chip"; }

  std::optional<double> dense_peak(Dtype d) const {
    auto it = dense_peak_flops_per_s.find(d);
    if (it == dense_peak_flops_per_s.end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace napkin
