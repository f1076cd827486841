// libFuzzer target: a spec file's text. parse_spec either returns a spec whose numbers napkin can
// compute with (every estimate from it finite) or throws napkin::Error; anything else (another
// exception, a crash, a sanitizer report, a hang, unbounded memory) is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "core/activations.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "core/step_gemms.hpp"
#include "core/training.hpp"
#include "spec/spec_loader.hpp"

#include "fuzz_require.hpp"

namespace {


void check_model(const napkin::Model& m) {
  const napkin::ParamCount c = napkin::count_params(m);
  require(std::isfinite(c.total) && c.total > 0 && std::isfinite(c.active) && c.active > 0);
  require(c.active <= c.total * (1 + 1e-12));
  const double seq = static_cast<double>(m.context);
  require(std::isfinite(napkin::attention_flops_per_token(m, seq, true)));
  require(std::isfinite(napkin::attention_flops_per_token(m, seq, false)));
  try {
    napkin::ActivationConfig a;
    a.seq = seq;
    const napkin::ActivationEstimate e = napkin::estimate_activations(m, a);
    (void)e;
  } catch (const napkin::Error&) {
  }
  try {
    napkin::StepConfig s;
    s.seq = std::min<long long>(m.context, 4096);
    require(std::isfinite(napkin::total_flops(napkin::step_gemms(m, s))));
  } catch (const napkin::Error&) {
  }
}

void check_hardware(const napkin::Hardware& h) {
  require(std::isfinite(h.memory_bytes) && h.memory_bytes > 0);
  require(std::isfinite(h.memory_bandwidth_bytes_per_s) && h.memory_bandwidth_bytes_per_s > 0);
  require(!h.dense_peak_flops_per_s.empty());
  for (const auto& [dtype, flops] : h.dense_peak_flops_per_s) require(std::isfinite(flops) && flops > 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const napkin::Spec spec = napkin::parse_spec(text, "fuzz.toml", "fuzz");
    if (const auto* m = std::get_if<napkin::Model>(&spec)) check_model(*m);
    if (const auto* h = std::get_if<napkin::Hardware>(&spec)) check_hardware(*h);
  } catch (const napkin::Error&) {
    // Bad input, reported as one: the expected outcome for most inputs.
  }
  return 0;
}
