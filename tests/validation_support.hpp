#pragma once
// Shared by the validation tests: a measured row, its live prediction, and the check that
// core/validation_rows.inc (the recorded errors the error bars come from) is not stale.
// NAPKIN_VALIDATION_TABLE=1 prints the Markdown table the docs carry; =rows prints the .inc lines.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/validation.hpp"

namespace napkin::test {

struct Row {
  std::string name;
  std::string source;
  std::string layout;    // as published
  std::string unit;      // what was measured
  double measured = 0;
  double predicted = 0;
  // For the error bars: what the run is (core/validation.hpp).
  std::string gpu = "a100", framework = "megatron";
  double params = 0;
  long long tp = 1, pp = 1, cp = 1, ep = 1, dp = 1;
  int zero = 0;
  double expert_width = 0;  // MeasuredRun::expert_width
  double error() const { return predicted / measured - 1; }
};

inline bool table_wanted(const char* what) {
  const char* v = std::getenv("NAPKIN_VALIDATION_TABLE");
  return v && std::strcmp(v, what) == 0;
}

// Every row's recorded error in core/validation_rows.inc matches the live prediction (0.2 points).
inline void check_recorded(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    const MeasuredRun* found = nullptr;
    for (const MeasuredRun& m : measured_runs())
      if (m.name == r.name && m.source == r.source) found = &m;
    INFO(r.name << " (" << r.source << "): live error " << r.error());
    REQUIRE(found != nullptr);
    CHECK(std::fabs(found->error - r.error()) < 0.002);
    CHECK(found->gpu == r.gpu);
    CHECK(found->framework == r.framework);
    CHECK(found->tp == r.tp);
    CHECK(found->pp == r.pp);
    CHECK(found->cp == r.cp);
    CHECK(found->ep == r.ep);
    CHECK(found->dp == r.dp);
    CHECK(found->zero == r.zero);
    CHECK(found->expert_width == doctest::Approx(r.expert_width).epsilon(0.001));
  }
}

inline void print_rows(const std::vector<Row>& rows) {
  if (table_wanted("1")) {
    std::printf("| run | layout | measured | napkin | error | source |\n|---|---|---|---|---|---|\n");
    for (const Row& r : rows)
      std::printf("| %s | %s | %.4g %s | %.4g | %+.1f%% | %s |\n", r.name.c_str(), r.layout.c_str(), r.measured, r.unit.c_str(), r.predicted,
                  100 * r.error(), r.source.c_str());
  }
  if (table_wanted("rows"))
    for (const Row& r : rows)
      std::printf("    {\"%s\", \"%s\", \"%s\", \"%s\", %.4g, %lld, %lld, %lld, %lld, %lld, %d, %.4f, %.4g},\n", r.name.c_str(), r.source.c_str(),
                  r.gpu.c_str(), r.framework.c_str(), r.params, r.tp, r.pp, r.cp, r.ep, r.dp, r.zero, r.error(), r.expert_width);
}

}  // namespace napkin::test
