// The CPU backend end to end on small shapes, and its measured peak.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <unistd.h>

#include "bench/backend.hpp"
#include "bench/cpu_peak.hpp"
#include "core/error.hpp"

using namespace napkin;
using namespace napkin::bench;

TEST_CASE("cpu backend: odd small shapes multiply correctly in fp32 and fp64") {
  auto cpu = make_cpu_backend();
  REQUIRE(cpu->availability().available);
  for (Dtype d : {Dtype::fp32, Dtype::fp64})
    for (Shape s : {Shape{1, 1, 1}, Shape{37, 53, 29}, Shape{128, 64, 256}}) {
      cpu->prepare(s, d, {});
      const auto t = cpu->time_iterations(1, 3, true);
      REQUIRE(t.size() == 3);
      for (double x : t) CHECK(x > 0);
      const auto c = cpu->check_correctness();  // 64 sampled entries vs a long double reference
      CHECK(c.ok);
      CHECK(c.samples == 64);
    }
}

TEST_CASE("cpu backend: no 16-bit matmul, and a shape too large for memory is a clear error") {
  auto cpu = make_cpu_backend();
  const auto ds = cpu->dtypes();
  CHECK(std::find(ds.begin(), ds.end(), Dtype::bf16) == ds.end());
  // m x n x 1 holding twice this machine's memory in its output: few FLOPs (2mn, a second or so),
  // so the memory check, not the time one, refuses it.
  const double ram = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  const auto side = static_cast<std::int64_t>(std::sqrt(2 * ram / 4));
  try {
    cpu->prepare({side, side, 1}, Dtype::fp32, {});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("needs") != std::string::npos);
  }
  // A product that runs for days at the CPU's nominal peak: refused before any memory is judged.
  try {
    cpu->prepare({2000000, 2000000, 2000000}, Dtype::fp32, {});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("napkin refuses a product over 60 s on the CPU: give a smaller --shape") != std::string::npos);
  }
}

// Only that a figure comes out: how fast this machine is depends on its load, and tests
// check arithmetic, never timing (the fp32/fp64 ratio is the bench's to report).
TEST_CASE("cpu peak: measured, positive and finite") {
  for (Dtype d : {Dtype::fp32, Dtype::fp64}) {
    const double f = measure_cpu_peak_flops(d, 1, 0.02);
    CHECK(f > 0);
    CHECK(std::isfinite(f));
  }
  CHECK(cpu_info().threads >= 1);
}
