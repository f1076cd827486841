#include "core/moe_dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace napkin {

std::string_view ep_dispatcher_name(EpDispatcher d) { return d == EpDispatcher::flex ? "flex" : "alltoall"; }

double group_hit_probability(long long experts, long long k, long long groups) {
  if (experts < 1 || k < 1 || groups < 1) return 0;
  if (groups == 1) return 1;
  const long long outside = experts - experts / groups;  // experts not in the group
  // C(outside, k) / C(experts, k) as the product of (outside − i)/(experts − i), i < k.
  double miss = 1;
  for (long long i = 0; i < std::min(k, experts); ++i) {
    if (outside - i <= 0) return 1;
    miss *= static_cast<double>(outside - i) / static_cast<double>(experts - i);
  }
  return 1 - miss;
}

double flex_counted_rdma_fraction(long long nodes) {
  // HybridEP on H100, mean of dispatch and combine over the 50 GB/s NIC (moe_dispatch.hpp).
  constexpr double at_2 = (54.47 + 53.35) / 2 / 50, at_4 = (47.36 + 52.53) / 2 / 50, at_8 = (41.24 + 46.57) / 2 / 50;
  const double x = std::log2(static_cast<double>(std::max(2LL, std::min(8LL, nodes))));
  return x <= 2 ? at_2 + (at_4 - at_2) * (x - 1) : at_4 + (at_8 - at_4) * (x - 2);
}

FlexDispatch flex_dispatch(double tokens, double token_bytes, long long experts, long long k, const GroupPlacement& g,
                           const Network& net) {
  FlexDispatch f;
  if (g.size <= 1 || tokens <= 0) return f;
  const double per_node = static_cast<double>(g.per_domain);
  const long long nodes = g.size / g.per_domain;
  const double volume = tokens * token_bytes;  // one copy of this GPU's tokens
  // NVLink: to each other rank of its own node that holds one of a token's experts, and the same
  // again for each remote node's tokens this GPU receives over RDMA and forwards.
  f.scale_up_bytes = volume * (per_node - 1) * group_hit_probability(experts, k, g.size) * static_cast<double>(nodes);
  // Across nodes: once to each node holding one of a token's experts, as the benchmarks count it.
  if (nodes > 1) f.counted_node_bytes = volume * static_cast<double>(nodes) * group_hit_probability(experts, k, nodes);
  const double up = f.scale_up_bytes > 0 ? f.scale_up_bytes / (scale_up_rate_bytes_per_s(net, g.per_domain - 1) * scale_up_efficiency) : 0;
  const double out = f.counted_node_bytes > 0 ? f.counted_node_bytes / (net.scale_out_bytes_per_s * flex_counted_rdma_fraction(nodes)) : 0;
  const bool cross = g.crosses_domains();
  f.time_s = collective_base_latency_s + (cross ? net.scale_out_latency_s : net.scale_up_latency_s) + std::max(up, out);
  return f;
}

}  // namespace napkin
