#pragma once
// Time of one collective over a group of GPUs, from its bytes, the algorithm's factor and the
// link it crosses (docs/METHODOLOGY.md §6.3). The bandwidth factors are those nccl-tests uses
// to turn algorithm bandwidth into bus bandwidth (NVIDIA/nccl-tests doc/PERFORMANCE.md):
// all-reduce 2(n−1)/n, reduce-scatter and all-gather (n−1)/n, all-to-all (n−1)/n, send/recv 1.
// The latency is NCCL's own ring model (src/graph/tuning.cc): a base latency plus one link
// latency per ring step.
#include <string_view>

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

// S·(1 + S½/(S + S½)): the bytes a message of S costs at the full bus bandwidth.
double ramped_bytes(double bytes);

// Fraction of a link's datasheet rate a large NCCL collective reaches as bus bandwidth.
// Measured: 8 × A100-SXM4-80GB NVLink all-reduce, 231.6 GB/s bus bandwidth at 8 GB against
// 300 GB/s per direction = 0.772 (Azure ND A100 v4, samuel-bohman/AI-benchmarking-guide
// Azure_Results/ND_A100_v4_results.md); NCCL's tuning model caps A100 ring bus bandwidth at
// 235 GB/s (src/graph/tuning.cc), 0.78 of the link.
inline constexpr double collective_bus_efficiency = 0.77;
// Collectives reach that rate only for large messages: NCCL's bus bandwidth ramps from about
// half of it (small messages, after the latency) to all of it. napkin charges a message of S
// bytes as S·(1 + S½/(S + S½)) bytes at the full rate. With S½ = 24 MB this reproduces the two
// published 8-GPU NCCL all-reduce curves (Azure ND A100 v4 and ND H100 v5, same source) within
// about 10% from 1 kB to 8 GB (A100: 8 MB 155 µs vs 163 measured, 134 MB 1.21 ms vs 1.35,
// 1 GB 8.34 ms vs 8.24; H100: 67 MB 335 µs vs 325, 134 MB 590 µs vs 586).
inline constexpr double collective_half_bandwidth_bytes = 24e6;
// NCCL's ring latency model (src/graph/tuning.cc, Simple protocol): base latency of a call.
inline constexpr double collective_base_latency_s = 8.4e-6;

// Everything the model needs of the two networks, resolved (spec values or flags).
struct Network {
  long long domain_gpus = 8;
  double scale_up_bytes_per_s = 0;   // per GPU per direction
  double scale_out_bytes_per_s = 0;  // per GPU per direction; 0 when unknown (single domain)
  double scale_up_latency_s = 3.4e-6;
  double scale_out_latency_s = 9.6e-6;
};

// Bus bandwidth the group reaches: inside a domain the scale-up link; across domains each
// member's own NIC carries one ring channel, so the k members of a domain bring k NICs:
// min(scale-up, k × scale-out). Both × collective_bus_efficiency.
double bus_bandwidth_bytes_per_s(const Network& net, const GroupPlacement& g);

// Seconds for one collective of `bytes`: latency + factor · S·(1 + S½/(S + S½)) / bus bandwidth (nccl-tests' S: the buffer on each rank for
// all-reduce, the whole gathered/scattered array for all-gather and reduce-scatter, what one
// rank sends in total for all-to-all, the message for send/recv). 0 for a group of one.
double collective_time_s(Collective c, double bytes, const GroupPlacement& g, const Network& net);

}  // namespace napkin
