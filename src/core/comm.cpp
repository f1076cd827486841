#include "core/comm.hpp"

#include <algorithm>
#include <numeric>

namespace napkin {

std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all-reduce";
    case Collective::reduce_scatter: return "reduce-scatter";
    case Collective::all_gather: return "all-gather";
    case Collective::all_to_all: return "all-to-all";
    case Collective::send_recv: return "send/recv";
  }
  return "?";
}

GroupPlacement place_group(long long stride, long long size, long long domain_gpus) {
  GroupPlacement g;
  g.size = std::max(1LL, size);
  stride = std::max(1LL, stride);
  domain_gpus = std::max(1LL, domain_gpus);
  // Members stride apart: a domain of D GPUs holds D/stride of them (all, if the group is
  // shorter), one when the stride is a domain or more.
  const long long fit = stride >= domain_gpus ? 1 : domain_gpus / stride;
  g.per_domain = std::gcd(g.size, std::min(fit, g.size));
  return g;
}

double ramped_bytes(double bytes) { return bytes * (1 + collective_half_bandwidth_bytes / (bytes + collective_half_bandwidth_bytes)); }

double bus_bandwidth_bytes_per_s(const Network& net, const GroupPlacement& g) {
  double bw = net.scale_up_bytes_per_s;
  if (g.crosses_domains()) bw = std::min(bw, static_cast<double>(g.per_domain) * net.scale_out_bytes_per_s);
  return bw * collective_bus_efficiency;
}

double collective_time_s(Collective c, double bytes, const GroupPlacement& g, const Network& net) {
  const double n = static_cast<double>(g.size);
  if (g.size <= 1 || bytes <= 0) return 0;
  const bool cross = g.crosses_domains();
  const double domains = static_cast<double>(g.size / g.per_domain);
  const double up_lat = net.scale_up_latency_s, out_lat = net.scale_out_latency_s;
  switch (c) {
    case Collective::all_reduce:
    case Collective::reduce_scatter:
    case Collective::all_gather: {
      const double factor = c == Collective::all_reduce ? 2 * (n - 1) / n : (n - 1) / n;
      // NCCL ring: 2(n−1) steps for all-reduce, n−1 otherwise; the steps that leave a
      // domain pay the network's latency (tuning.cc: nsteps − nInterSteps intra, nInterSteps inter).
      const double steps = c == Collective::all_reduce ? 2 * (n - 1) : n - 1;
      const double inter = cross ? (c == Collective::all_reduce ? 2 * (domains - 1) : domains - 1) : 0;
      const double latency = collective_base_latency_s + (steps - inter) * up_lat + inter * out_lat;
      return latency + factor * ramped_bytes(bytes) / bus_bandwidth_bytes_per_s(net, g);
    }
    case Collective::all_to_all: {
      // Each rank keeps 1/n of its data and sends the rest, all pairs at once: the part for
      // its own domain over the scale-up link, the part for other domains over its own NIC.
      const double k = static_cast<double>(g.per_domain);
      const double sized = ramped_bytes(bytes);
      const double inside = sized * (k - 1) / n / (net.scale_up_bytes_per_s * collective_bus_efficiency);
      const double outside = cross ? sized * (n - k) / n / (net.scale_out_bytes_per_s * collective_bus_efficiency) : 0;
      return collective_base_latency_s + (cross ? out_lat : up_lat) + std::max(inside, outside);
    }
    case Collective::send_recv: {
      const double bw = cross ? net.scale_out_bytes_per_s : net.scale_up_bytes_per_s;
      return collective_base_latency_s + (cross ? out_lat : up_lat) +
             ramped_bytes(bytes) / (bw * collective_bus_efficiency);
    }
  }
  return 0;
}

}  // namespace napkin
