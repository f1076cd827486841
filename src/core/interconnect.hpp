#pragma once
// The two networks a training GPU talks over (docs/METHODOLOGY.md §6.1):
//   scale-up  — the fast domain inside a node or rack: NVLink + NVSwitch (8 GPUs in an HGX
//               board, 72 in a GB200 NVL72), AMD Infinity Fabric, Gaudi's on-chip RoCE ports;
//   scale-out — the network between domains: one InfiniBand/RoCE NIC per GPU in a typical
//               training cluster (400 Gb/s ConnectX-7 per H100, 200 Gb/s HDR per A100).
// Bandwidths are per GPU and per direction, in bytes per second. Vendors quote NVLink as a
// bidirectional total (H100 "900 GB/s" = 450 GB/s each way) and NICs in bits (400 Gb/s =
// 50 GB/s): the spec files and flags say which by their unit (parse_bandwidth).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace napkin {

struct Link {
  std::string technology;                      // "NVLink 4 via NVSwitch", "NDR InfiniBand (ConnectX-7)"
  std::optional<double> bandwidth_bytes_per_s; // per GPU, per direction
  std::optional<double> latency_s;             // per ring step (NCCL's hwLat for the link type)
};

struct Interconnect {
  std::optional<long long> scale_up_gpus;  // GPUs in one scale-up domain ("node" below)
  bool scale_up_mesh = false;              // point-to-point links to each peer (Infinity Fabric, Gaudi), not a switch
  Link scale_up;
  Link scale_out;
  std::string source;
  std::string notes;
};

// "450GB/s", "400Gb/s", "3.2Tb/s", "50 GB/s", "400Gbps", "900GBps": bytes (B) or bits (b) per
// second with an SI prefix. A bare number is refused: Gb/s against GB/s is a factor of 8.
// Throws Error naming `what`.
double parse_bandwidth(std::string_view text, std::string_view what);

// A duration with a unit: "5us", "5µs", "1.2ms", "3e-6s". Throws Error naming `what`.
double parse_duration(std::string_view text, std::string_view what);

// A figure the spec lacks: what it is, the plan flag that gives it, and the spec's
// [interconnect] key (infer has no such flags: its errors name the key).
struct MissingFigure {
  std::string what;     // "scale-out bandwidth"
  std::string flag;     // "--scale-out-bw"
  std::string key;      // "scale_out_bandwidth"
  std::string example;  // "400Gb/s", or empty
};
// The figures a plan needs that the spec lacks, for an error message. `crosses_domains`: some
// group spans more than one scale-up domain, so the scale-out figures are needed too.
std::vector<MissingFigure> missing_interconnect_figures(const Interconnect& ic, bool crosses_domains);

}  // namespace napkin
