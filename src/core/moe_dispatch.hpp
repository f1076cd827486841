#pragma once
// How a MoE layer's tokens reach their experts over the expert-parallel group, and back.
//
// Megatron-Core ships two dispatchers (megatron/core/transformer/moe/token_dispatcher.py):
// - alltoall (MoEAlltoAllTokenDispatcher): each rank permutes its tokens into one copy per chosen
//   expert (dispatch_preprocess → permute) and sends every copy with an NCCL all-to-all, so a token
//   whose top-k experts share a rank crosses the link k times; with more than one local expert the
//   received chunks are re-sorted by expert after the all-to-all and before the combine
//   (dispatch_postprocess and combine_preprocess → sort_chunks_by_idxs).
// - flex (MoEFlexTokenDispatcher, backends DeepEP and HybridEP): fused kernels that send each token
//   once to every rank holding at least one of its experts; across nodes once to every node, over
//   RDMA to the same-index GPU there, which forwards it over NVLink to that node's ranks
//   (deepseek-ai/DeepEP README, "normal kernels with NVLink and RDMA forwarding"; HybridEP's
//   hierarchical design, DeepEP hybrid-ep branch). The combine returns one reduced vector a rank
//   (or a node) the same way.
// napkin prices even routing (the top-k experts of a token are k distinct experts, uniformly), the
// forced-balance routing of NVIDIA's published benchmarks, or a benchmark's contiguous routing
// (MoeRouting).
#include <string_view>

#include "core/comm.hpp"
#include "core/model.hpp"

namespace napkin {

enum class EpDispatcher { alltoall, flex };
std::string_view ep_dispatcher_name(EpDispatcher d);

// The flex kernels are timed as their benchmarks count them. Inside a node: the tokens a rank
// receives, its own included (DeepEP tests/test_intranode.py), 153 and 158 GB/s for dispatch and
// combine on H800's 200 GB/s-a-direction NVLink (DeepEP README): 0.78 of the link. Across nodes:
// each token once a node its experts sit on, the GPU's own node included (DeepEP
// tests/test_internode.py; HybridEP tests/test_hybrid_ep.py, count_rdma_send_from_routing_map, "to
// align with the implementation in the DeepEP"), over the time. HybridEP on H100 with a 400 Gb/s NIC
// a GPU (deepseek-ai/DeepEP branch hybrid-ep, docs/README_Hybrid-EP.md at 17cfb81; 4096 tokens of
// 7168 a rank, top-8, 8 experts a rank, BF16, the 16-SM rows), dispatch and combine through the PyTorch
// API: 54.5 and 53.4 GB/s on 16 ranks (2 nodes), 47.4 and 52.5 on 32 (4), 41.2 and 46.6 on 64 (8).
// As a fraction of the NIC's datasheet rate, the mean of the two: 1.078, 0.999 and 0.879 at 2, 4
// and 8 nodes (above 1 at two nodes: half the counted bytes stay on the node). Between node counts
// linear in log2(nodes); beyond them the nearest (extrapolated past 8 nodes). DeepEP's own kernels on
// H800 (its README: 43, 58 and 51 GB/s dispatch at EP 16, 32, 64) are in the same range.
inline constexpr double flex_counted_nvlink_fraction = (153.0 + 158.0) / 2 / 200;
double flex_counted_rdma_fraction(long long nodes);

// The chance that a token's k distinct experts, drawn uniformly from `experts`, include at least
// one of a given bucket's experts/buckets (a rank's, a node's): 1 − C(E − E/b, k) / C(E, k).
// Under group-limited routing (MoeSpec::routing_groups G, groups_per_token t; Megatron-Core's
// group_limited_topk, which force-balanced benchmarks run too, on random logits) a chosen group is
// chosen for its best experts, so each of the t chosen groups holds one of the k (a Monte-Carlo of
// the router: 0.496 for a DeepSeek-V3 node against t/G = 0.5) and the other k − t are drawn from
// the rest of the chosen groups' n = t·E/G experts. A bucket of c whole groups is then hit when one
// of them is chosen, 1 − C(G − c, t)/C(G, t); a bucket of e experts inside a group of s with
// (t/G)·(1 − (1 − e/s)·C(n − t − e, k − t)/C(n − t, k − t)). Buckets that cut across groups fall
// back to the even draw.
double group_hit_probability(long long experts, long long k, long long buckets, long long routing_groups = 0,
                             long long groups_per_token = 0);
// How a run routes its tokens. even: each token's k distinct experts drawn uniformly (Megatron-Core's
// moe_router_force_load_balancing, which NVIDIA's published benchmarks set: random logits through
// the router, its group limits included; group_hit_probability). contiguous: token t takes experts
// t·k … t·k + k − 1, modulo E (NeMo Automodel's FakeBalancedGate, nemo_automodel/components/moe/
// layers.py: arange(tokens · k).view(−1, k) % n_experts): as balanced over experts, but a token's
// experts are neighbours, so they sit on one or two ranks of one node.
enum class MoeRouting { even, contiguous };
std::string_view moe_routing_name(MoeRouting r);
// Contiguous routing: the chance that a given bucket of E/b consecutive experts (a rank's, a node's)
// holds one of a token's k experts, averaged over the tokens (one period of t·k mod E).
double contiguous_hit_probability(long long experts, long long k, long long buckets);

// What one flex dispatch (or combine) costs each GPU of an expert group placed as `g`: `tokens`
// tokens of `token_bytes` each, sent once to every rank of its node holding one of the token's
// experts and once to every node holding one (then forwarded over NVLink to that node's ranks: by
// symmetry each GPU forwards as much as it receives), counted as the benchmarks count them and
// timed at their rates (flex_counted_nvlink_fraction, flex_counted_rdma_fraction). The two streams
// are pipelined: the slower sets the time.
struct FlexDispatch {
  double scale_up_bytes = 0;       // NVLink: a token once a rank of its node hit, its own included
  double counted_node_bytes = 0;   // across nodes: a token once a node hit, its own node included
  double time_s = 0;
};
FlexDispatch flex_dispatch(double tokens, double token_bytes, const MoeSpec& moe, const GroupPlacement& g, const Network& net,
                           MoeRouting routing = MoeRouting::even);

}  // namespace napkin
