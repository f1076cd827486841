// libFuzzer target: a Hugging Face config.json's text. import_hf_config either returns a model
// napkin can compute with (every estimate from it finite) or throws napkin::Error; anything else
// (nlohmann's own exceptions leaking, a crash, a sanitizer report) is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/training.hpp"
#include "spec/hf_config.hpp"

#include "fuzz_require.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const napkin::HfImport hf = napkin::import_hf_config(text, "fuzz/config.json", "fuzz");
    const napkin::Model& m = hf.model;
    const napkin::ParamCount c = napkin::count_params(m);
    require(std::isfinite(c.total) && c.total > 0 && std::isfinite(c.active) && c.active > 0);
    require(c.active <= c.total * (1 + 1e-12));
    require(std::isfinite(napkin::attention_flops_per_token(m, static_cast<double>(m.context), true)));
  } catch (const napkin::Error&) {
  }
  return 0;
}
