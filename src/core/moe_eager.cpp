#include "core/moe_eager.hpp"

#include <algorithm>

namespace napkin {

bool has_moe_eager_ops(const Model& m) {
  if (!m.moe) return false;
  return has_mlp_bias(m.bias) || (m.activation_clamp > 0 && is_gated(m.mlp));
}

MoeEagerCost moe_eager_cost(const Model& m, const MoeEagerShape& x, double bw, double floor_s) {
  MoeEagerCost c;
  if (!m.moe || x.rows <= 0 || bw <= 0) return c;
  // One kernel moving `bytes`: its bandwidth time, or the launch floor when that is longer.
  const auto kernel = [&](double bytes) { return std::max(bytes / bw, floor_s); };
  const double B = x.value_bytes;
  if (has_mlp_bias(m.bias)) {
    // _apply_bias: U, the fc2 output [rows, hidden]; u, one local expert's share of it.
    const double E = std::max(1.0, x.local_experts);
    const double U = x.rows * x.hidden * B, u = U / E;
    // Forward, per expert b·p (writes u; b and p are a row and a column) and t + b·p (reads 2u,
    // writes u); then the cat (reads U, writes U).
    c.fwd_s += E * (kernel(u) + kernel(3 * u)) + kernel(2 * U);
    c.fwd_bytes += E * (u + 3 * u) + 2 * U;
    // Backward, per expert g·p (2u) and its sum over the rows (u) for the bias, g·b (2u) and its
    // sum over the width (u) for the router weight; the split's cat of the gradients (2U).
    c.bwd_s += E * 2 * (kernel(2 * u) + kernel(u)) + kernel(2 * U);
    c.bwd_bytes += E * 6 * u + 2 * U;
    c.bias_loop_experts = E;
    c.kernels += 6 * E + 2;
  }
  if (m.activation_clamp > 0 && is_gated(m.mlp)) {
    // V: one half of the fc1 output [rows, fc1_half]; the masks are one byte a value.
    const double V = x.rows * x.fc1_half;
    // Forward: clamp(max) and clamp(-c, c) read and write a half each, the cat reads and writes both.
    const double fwd = kernel(2 * V * B) + kernel(2 * V * B) + kernel(4 * V * B);
    c.fwd_s += fwd;
    c.fwd_bytes += 8 * V * B;
    // Backward (clamp_backward: where(mask, grad, 0)): the gate's mask self <= c (reads B, writes
    // 1) and where (reads 1 + B, writes B); the linear half's two comparisons, their and (reads 2,
    // writes 1) and where; the chunk's cat of the two gradients (reads 2VB, writes 2VB).
    c.bwd_s += kernel(V * (B + 1)) + kernel(V * (2 * B + 1)) + 2 * kernel(V * (B + 1)) + kernel(3 * V) + kernel(V * (2 * B + 1)) +
               kernel(4 * V * B);
    c.bwd_bytes += V * (11 * B + 8);
    c.kernels += 3 + 7;
    c.clamp = true;
    c.replay_s = fwd;
    c.replay_bytes = 8 * V * B;
  }
  return c;
}

}  // namespace napkin
