#include "core/framework.hpp"

namespace napkin {

std::string_view selective_recompute_name(SelectiveRecompute s) {
  return s == SelectiveRecompute::attention_core ? "attention-core" : "every-other-matmul";
}

}  // namespace napkin
