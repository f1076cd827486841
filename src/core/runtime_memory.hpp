#pragma once
// Memory a real training process holds beyond the model states and the activations napkin
// itemises: the CUDA context, NCCL's buffers, library workspaces, the 16-bit and fp32 copies
// the loss makes of the logits, and what the caching allocator reserves beyond what it hands
// out. Each term priced from a cited measurement (docs/METHODOLOGY.md §3.11). On NVIDIA GPUs,
// unless --reserve is given, these are the memory held back on every GPU.
#include <string>
#include <string_view>
#include <vector>


namespace napkin {

// The CUDA context of a PyTorch process with lazy module loading (CUDA ≥ 11.7, PyTorch's
// default): "around 400MB" (ptrblck, pytorch/pytorch#109888; ~300 MB on a small GPU,
// pytorch/pytorch#107667). Not in torch.cuda.max_memory_reserved().
inline constexpr double cuda_context_bytes = 400e6;

// NCCL: every channel of a ring connection holds the three protocols' FIFOs. On 8×H100 NCCL's
// ALLOC log shows a 10 MiB (10485760 B) buffer and a 2 MiB (2097152 B) one per channel per peer
// (NVIDIA/nccl#1685: Simple 4 MiB NCCL_BUFFSIZE + LL128 ~4.7 MiB + LL 0.5 MiB, rounded up to the
// cuMem granularity, and the sender's side), with 32 channels on H100 NVLink (same issue). A ring
// has 2 connections whatever the scale (sjeaugey, NVIDIA/nccl#986): one peer each way.
inline constexpr double nccl_buffer_bytes_per_channel_peer = 10485760.0 + 2097152.0;
inline constexpr double nccl_channels = 32;
inline constexpr double nccl_ring_peers = 1;  // the receiving buffer is on the receiver: one per channel

// cuBLAS workspace: PyTorch sets CUBLAS_WORKSPACE_CONFIG ":4096:8" on Hopper, 8 × 4 MiB = 32 MiB
// per handle and stream (aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize), and
// cuBLASLt its own 32 MiB on sm90 (same file, getCUDABlasLtWorkspaceSize); Transformer Engine
// another 32 MiB (transformer_engine/pytorch/module/base.py, get_cublas_workspace_size_bytes).
inline constexpr double library_workspace_bytes = 3 * 32.0 * 1048576.0;

// The caching allocator reserves more than it hands out (block rounding, segments that cannot be
// split or merged). Measured as the slope of reserved memory in allocated memory: torchtitan's
// Llama 3.1 8B, FSDP, same batch, 8 vs 128 H100s (docs/performance.md Tables 1 and 3): the peak
// reserved falls by 82.4 − 67.0 = 15.4 GiB (16.54 GB) when the sharded states fall by
// 16 B × 8.03e9 × (1/8 − 1/128) = 15.06 GB: 16.54 / 15.06 − 1 = 9.8%.
inline constexpr double allocator_overhead_fraction = 0.098;

// How the loss is computed from the logits: what exists beside the fp32 copy the activation
// model already counts (EdgeActivations::logits_bytes, 4·s·b·v/t).
enum class CrossEntropy {
  // Megatron-core's vocab-parallel cross-entropy (tensor_parallel/cross_entropy.py,
  // VocabParallelCrossEntropy): the fp32 softmax is computed and its gradient formed in place; the
  // LM head's 16-bit logits (forward) or their 16-bit gradient (backward) exist beside it: 2·s·b·v/t.
  fused,
  // F.cross_entropy on logits.float() (torchtitan's cross_entropy_loss, Hugging Face models):
  // log-softmax keeps its fp32 output (the 4·s·b·v counted); its backward holds the incoming fp32
  // gradient and makes the outgoing one, 8·s·b·v more at the peak (the 16-bit gradient is made
  // after the saved output is freed).
  eager,
  // Transformer Engine's parallel cross entropy (Megatron-Core's cross_entropy_fusion_impl 'te',
  // which Megatron-Bridge's benchmarks set: scripts/performance/utils/overrides.py): a Triton kernel
  // computes the loss from the LM head's 16-bit logits and writes their gradient into them in place,
  // keeping only them for the backward (TE transformer_engine/pytorch/cross_entropy.py,
  // CrossEntropyFunction.forward: save_for_backward(inp) after cross_entropy_forward). No fp32 copy:
  // 2·s·b·v/t in all, where the other two keep the 4·s·b·v/t fp32 copy and more.
  te,
};
std::string_view cross_entropy_name(CrossEntropy c);           // "fused", "eager", "te"
CrossEntropy cross_entropy_from_name(std::string_view name);   // throws Error naming --cross-entropy
double cross_entropy_extra_bytes_per_logit(CrossEntropy c);    // 2 (fused), 8 (eager) or 0 (te)
// What the loss keeps of each logit in the activations: 4 (the fp32 copy: fused, eager) or 2 (te).
double cross_entropy_kept_bytes_per_logit(CrossEntropy c);

struct RuntimeSetup {
  long long communicators = 1;  // NCCL communicators this GPU runs collectives on (world + each group > 1)
  double logits = 0;            // s·b·v/t logits of one micro-batch on this GPU (last stage), 0 if none
  CrossEntropy cross_entropy = CrossEntropy::fused;
  double allocated_bytes = 0;   // what the allocator hands out at the peak (states + activations + the loss copies)
  // The card's memory, if known: the allocator cannot fragment more than it holds, so its overhead
  // is a share of at most this (a layout far past the card is short by its excess, not by 9.8% of it).
  double capacity_bytes = 0;
};

struct RuntimeTerm {
  std::string_view name;
  double bytes = 0;
  std::string_view source;
};

struct RuntimeMemory {
  std::vector<RuntimeTerm> terms;  // every term, zero ones included, in a fixed order
  double loss_copies_bytes = 0;    // allocated by PyTorch (counted in the allocator's peak)
  double allocator_overhead_bytes = 0;
  double outside_allocator_bytes = 0;  // context + NCCL + workspaces: not in max_memory_reserved
  double total_bytes = 0;
};

RuntimeMemory runtime_memory(const RuntimeSetup& s);

// One sentence for the assumptions: the terms and their constants.
std::string runtime_reserve_assumption(CrossEntropy c);

// NCCL communicators a GPU of this layout runs collectives on: the world group plus one per
// parallel dimension larger than 1 (Megatron-LM's parallel_state.py builds tp, pp, dp, cp and ep
// groups; PyTorch makes one NCCL communicator per process group and device, on its first
// collective). None on one GPU.
long long communicators_for(long long tp, long long cp, long long pp, long long dp, long long ep);

}  // namespace napkin
