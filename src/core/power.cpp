#include "core/power.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace napkin {

double power_capped_compute_fraction(double limit_w, double tdp_w) {
  if (!(limit_w > 0) || !(tdp_w > 0) || !std::isfinite(limit_w) || !std::isfinite(tdp_w))
    throw Error("--power-limit: the limit and the part's TDP must be positive watts");
  return std::min(1.0, std::pow(limit_w / tdp_w, power_cap_exponent));
}

}  // namespace napkin
