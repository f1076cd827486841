#pragma once
// Time of one collective over a group of GPUs, from its bytes, the algorithm's factor and the
// link it crosses (docs/METHODOLOGY.md §6.3). The bandwidth factors are those nccl-tests uses
// to turn algorithm bandwidth into bus bandwidth (NVIDIA/nccl-tests doc/PERFORMANCE.md):
// all-reduce 2(n−1)/n, reduce-scatter and all-gather (n−1)/n, all-to-all (n−1)/n, send/recv 1.
// The latency is NCCL's own ring model (src/graph/tuning.cc): a base latency plus one link
// latency per ring step.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/interconnect.hpp"

namespace napkin {

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };
std::string_view collective_name(Collective c);

// Where a group's members sit: `size` ranks, `per_domain` of them in each scale-up domain
// (1 ≤ per_domain ≤ size, and per_domain divides size). per_domain == size: the group never
// leaves the domain.
struct GroupPlacement {
  long long size = 1;
  long long per_domain = 1;
  bool crosses_domains() const { return per_domain < size; }
};

// Megatron-LM orders ranks tensor-fastest (tp, cp, ep/dp, pp): a group whose consecutive
// members are `stride` ranks apart, `size` long, on domains of `domain_gpus` GPUs.
GroupPlacement place_group(long long stride, long long size, long long domain_gpus);

// place_group prices every group alike, as if a domain held whole groups. Consecutive groups of
// `size` (tensor-parallel: stride 1) over `gpus` ranks on domains of `domain_gpus` do not all fit
// when `size` is below `domain_gpus` and does not divide it (3-GPU domains, tp 2: ranks 2 and 3
// straddle two): how many of the gpus/size groups straddle a domain boundary, and in how many
// consecutive groups the pattern repeats (3 there: 1 of every 3). {0, 1} when none can.
struct Straddle {
  long long groups = 0;  // groups that straddle
  long long period = 1;  // consecutive groups per repeat of the pattern
  long long per_period = 0;
};
Straddle straddling_groups(long long size, long long gpus, long long domain_gpus);

// S·(1 + S½/(S + S½)): the bytes a message of S costs at the full bus bandwidth.
double ramped_bytes(double bytes);

// Fraction of a link's datasheet rate a large NCCL ring collective reaches as bus bandwidth.
// Scale-up, 8 GPUs, ring (no NVLink SHARP): A100 SXM all-reduce 231.6 GB/s at 8 GB (Azure ND A100
// v4, samuel-bohman/AI-benchmarking-guide) and 234.9 GB/s at 16 GiB (ml-engineering network/README.md)
// of 300; H200 SXM 367.6 GB/s of 450 (same): 0.772, 0.783, 0.817, mean 0.79. NCCL's own tuning model
// caps A100 ring bus bandwidth at 235 GB/s (src/graph/tuning.cc).
inline constexpr double scale_up_efficiency = 0.79;
// Scale-out: 4 × 8 B200 with 8 × 400 Gb/s EFA per node, all-reduce 16 GiB: the NIC share of the bus
// bandwidth is 37 GB/s per GPU, 0.74 of 50 (ml-engineering network/README.md, "Inter-node speed").
inline constexpr double scale_out_efficiency = 0.74;
// Collectives reach that rate only for large messages: NCCL's bus bandwidth ramps from about
// half of it (small messages, after the latency) to all of it. napkin charges a message of S
// bytes as S·(1 + S½/(S + S½)) bytes at the full rate. With S½ = 24 MB this reproduces the two
// published 8-GPU NCCL all-reduce curves (Azure ND A100 v4 and ND H100 v5, same source) within
// about 10% from 1 kB to 8 GB (A100: 8 MB 155 µs vs 163 measured, 134 MB 1.21 ms vs 1.35,
// 1 GB 8.34 ms vs 8.24; H100: 67 MB 335 µs vs 325, 134 MB 590 µs vs 586).
inline constexpr double collective_half_bandwidth_bytes = 24e6;
// NCCL's ring latency model (src/graph/tuning.cc, Simple protocol): base latency of a call.
// The per-step latencies of each link type live in the hardware specs (NVLink 3.4 µs, PCIe 5.7 µs,
// network 14 µs).
inline constexpr double collective_base_latency_s = 8.4e-6;

// A collective timed by nccl-tests on the user's cluster (--network): its time against nccl-tests'
// size S, on `ranks` GPUs. Used instead of the constants above for every collective of its kind
// (and scope, when given); the ring factor carries it to other group sizes (see measured_time_s).
struct MeasuredCurve {
  Collective collective = Collective::all_reduce;
  std::optional<bool> crosses_domains;  // true: groups that leave a scale-up domain; false: inside one; nullopt: both
  std::string source;                   // the file, named in the answer
  long long ranks = 0;                  // the GPUs nccl-tests ran on (from busbw/algbw)
  long long ranks_per_host = 0;         // from its "Rank … on HOST" lines; 0 when not listed
  std::vector<double> size_bytes;       // ascending, > 0
  std::vector<double> time_s;           // out-of-place, per size
};

// nccl-tests' bus-bandwidth factor of a collective on n ranks (doc/PERFORMANCE.md): all-reduce
// 2(n−1)/n; all-gather, reduce-scatter, all-to-all (n−1)/n; send/recv 1.
double bus_factor(Collective c, double n);

// The measured time of `bytes` on a group of `n`: linear between the two measured sizes around it;
// below the smallest the smallest's time (the latency floor), above the largest at the largest's
// bus bandwidth (extrapolated: `extrapolated` set). Scaled by bus_factor(n)/bus_factor(ranks), and,
// for a ring collective of a group with `per_domain` members in each domain fewer than the file's
// ranks per host, by ranks_per_host/per_domain: across domains each member's own NIC carries the
// ring (bus_bandwidth_bytes_per_s), so a group with one GPU per node has 1/8 of the NICs a run of
// 8 per node had. per_domain 0: no such scaling (a group inside one domain).
double measured_time_s(const MeasuredCurve& c, double bytes, long long n, bool* extrapolated = nullptr, long long per_domain = 0);

// Everything the model needs of the two networks, resolved (spec values or flags).
struct Network {
  long long domain_gpus = 8;
  double scale_up_bytes_per_s = 0;   // per GPU per direction
  double scale_out_bytes_per_s = 0;  // per GPU per direction; 0 when unknown (single domain)
  double scale_up_latency_s = 3.4e-6;
  double scale_out_latency_s = 14e-6;
  // A point-to-point mesh (AMD Infinity Fabric, Gaudi's on-die RoCE) instead of a switch: each GPU
  // reaches one peer at scale_up/(domain − 1), so a group of k in the domain gets (k − 1) of those.
  bool scale_up_mesh = false;
  // --network: measured curves; the first that matches a collective and its scope prices it.
  std::vector<MeasuredCurve> measured;
};

// The curve that prices collective `c` on a group placed as `g`, if any.
const MeasuredCurve* measured_curve(const Network& net, Collective c, const GroupPlacement& g);

// What a GPU can push to k − 1 peers of its own domain, per direction, before efficiency.
double scale_up_rate_bytes_per_s(const Network& net, long long peers_in_group);

// Bus bandwidth the group reaches: inside a domain the scale-up link × scale_up_efficiency; across
// domains each member's own NIC carries one ring channel, so the k members of a domain bring k NICs:
// k × scale-out × scale_out_efficiency, capped by the scale-up link among those k.
double bus_bandwidth_bytes_per_s(const Network& net, const GroupPlacement& g);

// Seconds for one collective of `bytes`: latency + factor · S·(1 + S½/(S + S½)) / bus bandwidth (nccl-tests' S: the buffer on each rank for
// all-reduce, the whole gathered/scattered array for all-gather and reduce-scatter, what one
// rank sends in total for all-to-all, the message for send/recv). 0 for a group of one.
double collective_time_s(Collective c, double bytes, const GroupPlacement& g, const Network& net);

}  // namespace napkin
