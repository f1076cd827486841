#include "core/framework.hpp"

namespace napkin {

std::string_view selective_recompute_name(SelectiveRecompute s) {
  return s == SelectiveRecompute::attention_core ? "attention-core" : "every-other-matmul";
}

std::string_view attention_kernel_name(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::fa1: return "fa1";
    case AttentionKernel::fa2: return "fa2";
    case AttentionKernel::fa3: break;
  }
  return "fa3";
}

}  // namespace napkin
