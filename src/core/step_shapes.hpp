#pragma once
// Small shape helpers the step-time modules share (core/step_time.cpp, core/layer_cost.cpp):
// not part of napkin's interface.
#include "core/model.hpp"

namespace napkin::step_shapes {

inline double d(long long v) { return static_cast<double>(v); }

// KV heads on one tensor-parallel rank: split while tp divides them, else one replicated.
inline double kv_heads_local(const Model& m, long long tp) {
  if (m.mla) return d(m.heads / tp);  // MLA materializes K and V per head
  return m.kv_heads % tp == 0 ? d(m.kv_heads / tp) : 1.0;
}

inline double qk_head_dim(const Model& m) { return m.mla ? d(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim) : d(m.head_dim); }
inline double v_head_dim(const Model& m) { return m.mla ? d(m.mla->v_head_dim) : d(m.head_dim); }

inline long long moe_layer_count(const Model& m) { return m.moe ? m.layers - m.moe->dense_layers : 0; }

}  // namespace napkin::step_shapes
