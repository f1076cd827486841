#include "core/moe_dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace napkin {

std::string_view ep_dispatcher_name(EpDispatcher d) { return d == EpDispatcher::flex ? "flex" : "alltoall"; }

namespace {
// C(n − x, k) / C(n, k): the chance that k distinct draws from n miss a given x of them.
double miss(long long n, long long x, long long k) {
  double p = 1;
  for (long long i = 0; i < k; ++i) {
    if (n - x - i <= 0) return 0;
    p *= static_cast<double>(n - x - i) / static_cast<double>(n - i);
  }
  return p;
}
double choose(double n, double r) { return r < 0 || r > n ? 0 : std::exp(std::lgamma(n + 1) - std::lgamma(r + 1) - std::lgamma(n - r + 1)); }
}  // namespace

double group_hit_probability(long long experts, long long k, long long buckets, long long routing_groups, long long groups_per_token) {
  if (experts < 1 || k < 1 || buckets < 1) return 0;
  if (buckets == 1) return 1;
  const long long in_bucket = experts / buckets;
  const long long G = routing_groups, t = groups_per_token;
  if (G > 1 && t >= 1 && t < G && t <= k && experts % G == 0) {
    const long long per_group = experts / G, n = t * per_group;
    if (buckets % G == 0)  // the bucket sits inside one group: its group chosen, then one of the k in it
      return static_cast<double>(t) / static_cast<double>(G) *
             (1 - (1 - static_cast<double>(in_bucket) / static_cast<double>(per_group)) * miss(n - t, in_bucket, k - t));
    if (G % buckets == 0)  // the bucket is c whole groups: hit when one of them is chosen
      return 1 - choose(static_cast<double>(G - G / buckets), static_cast<double>(t)) / choose(static_cast<double>(G), static_cast<double>(t));
  }
  return 1 - miss(experts, in_bucket, k);
}

std::string_view moe_routing_name(MoeRouting r) { return r == MoeRouting::contiguous ? "contiguous" : "even"; }

double contiguous_hit_probability(long long experts, long long k, long long buckets) {
  if (experts < 1 || k < 1 || buckets < 1) return 0;
  if (buckets == 1 || k >= experts) return 1;
  const long long in_bucket = std::max(1LL, experts / buckets);
  const long long period = experts / std::gcd(k, experts);
  std::vector<char> seen(static_cast<std::size_t>(buckets));
  double reached = 0;
  for (long long t = 0; t < period; ++t) {
    std::fill(seen.begin(), seen.end(), 0);
    const long long start = (t * k) % experts;
    for (long long j = 0; j < k; ++j) {
      const long long b = std::min(buckets - 1, ((start + j) % experts) / in_bucket);
      if (!seen[static_cast<std::size_t>(b)]) seen[static_cast<std::size_t>(b)] = 1, reached += 1;
    }
  }
  return reached / static_cast<double>(period) / static_cast<double>(buckets);
}

double flex_counted_rdma_fraction(long long nodes) {
  // HybridEP on H100, mean of dispatch and combine over the 50 GB/s NIC (moe_dispatch.hpp).
  constexpr double at_2 = (54.47 + 53.35) / 2 / 50, at_4 = (47.36 + 52.53) / 2 / 50, at_8 = (41.24 + 46.57) / 2 / 50;
  const double x = std::log2(static_cast<double>(std::max(2LL, std::min(8LL, nodes))));
  return x <= 2 ? at_2 + (at_4 - at_2) * (x - 1) : at_4 + (at_8 - at_4) * (x - 2);
}

FlexDispatch flex_dispatch(double tokens, double token_bytes, const MoeSpec& moe, const GroupPlacement& g, const Network& net,
                           MoeRouting routing) {
  const long long experts = moe.experts, k = moe.experts_per_token, G = moe.routing_groups, t = moe.groups_per_token;
  FlexDispatch f;
  if (g.size <= 1 || tokens <= 0) return f;
  const double per_node = static_cast<double>(g.per_domain);
  const long long nodes = g.size / g.per_domain;
  const double volume = tokens * token_bytes;  // one copy of this GPU's tokens
  // NVLink: to each rank of its own node that holds one of a token's experts (itself included, as the
  // benchmark counts), and the same again for each remote node's tokens it receives and forwards.
  const auto hit = [&](long long buckets) {
    return routing == MoeRouting::contiguous ? contiguous_hit_probability(experts, k, buckets) : group_hit_probability(experts, k, buckets, G, t);
  };
  f.scale_up_bytes = volume * per_node * hit(g.size) * static_cast<double>(nodes);
  // Across nodes: once to each node holding one of a token's experts, as the benchmarks count it.
  if (nodes > 1) f.counted_node_bytes = volume * static_cast<double>(nodes) * hit(nodes);
  const double up = g.per_domain > 1 ? f.scale_up_bytes / (scale_up_rate_bytes_per_s(net, g.per_domain - 1) * flex_counted_nvlink_fraction) : 0;
  const double out = f.counted_node_bytes > 0 ? f.counted_node_bytes / (net.scale_out_bytes_per_s * flex_counted_rdma_fraction(nodes)) : 0;
  const bool cross = g.crosses_domains();
  f.time_s = collective_base_latency_s + (cross ? net.scale_out_latency_s : net.scale_up_latency_s) + std::max(up, out);
  return f;
}

}  // namespace napkin
