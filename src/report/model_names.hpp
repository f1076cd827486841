#pragma once
// The spec-file names of a model's enumerated fields, for every report that prints them
// (models show, models import); the loader (spec/spec_loader.cpp) reads the same names.
#include "core/model.hpp"

namespace napkin {

inline const char* mlp_name(MlpKind k) { return k == MlpKind::swiglu ? "swiglu" : k == MlpKind::geglu ? "geglu" : "gelu"; }
inline const char* positions_name(Positions p) {
  return p == Positions::learned ? "learned" : p == Positions::rotary ? "rotary" : p == Positions::relative ? "relative" : "alibi";
}
inline const char* bias_name(BiasKind b) {
  return b == BiasKind::none ? "none" : b == BiasKind::qkv ? "qkv" : b == BiasKind::attention ? "attention" : b == BiasKind::mlp ? "mlp" : "all";
}
inline const char* norm_name(NormKind n) {
  return n == NormKind::layernorm ? "layernorm" : n == NormKind::rmsnorm ? "rmsnorm" : "nonparametric";
}
inline const char* block_name(BlockKind b) { return b == BlockKind::parallel ? "parallel" : "sequential"; }
inline const char* qk_norm_name(QkNorm q) { return q == QkNorm::per_head ? "per_head" : q == QkNorm::full ? "full" : "none"; }

}  // namespace napkin
