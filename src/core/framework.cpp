#include "core/framework.hpp"

namespace napkin {

std::string_view selective_recompute_name(SelectiveRecompute s) {
  return s == SelectiveRecompute::attention_core ? "attention-core" : "every-other-matmul";
}

std::string_view attention_kernel_name(AttentionKernel k) { return k == AttentionKernel::fa2 ? "fa2" : "fa3"; }

}  // namespace napkin
