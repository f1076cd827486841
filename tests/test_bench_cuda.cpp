// The CUDA backend on a real GPU, through the module this build made (on machines without
// one, skipped visibly; tests/fake_cuda runs the same code on the CPU stand-in).
#include <doctest/doctest.h>

#include <cstdlib>

#include "bench/backend.hpp"
#include "bench/harness.hpp"
#include "core/error.hpp"

using namespace napkin;
using namespace napkin::bench;

TEST_CASE("cuda backend: correct products in every dtype the device has") {
#ifdef NAPKIN_REAL_CUDA_MODULE
  setenv("NAPKIN_CUDA_MODULE", NAPKIN_REAL_CUDA_MODULE, 1);
#endif
  auto cuda = make_cuda_backend();
  const auto a = cuda->availability();
  if (!a.available) {
    MESSAGE("SKIPPED: cuda backend tests: " << a.detail);
    CHECK_FALSE(a.detail.empty());
    CHECK_THROWS_AS(open_backend("cuda"), Error);
    return;
  }
  for (Dtype d : cuda->dtypes())
    for (Shape s : {Shape{256, 512, 1024}, Shape{1024, 1024, 1024}, Shape{128, 128, 64, 12}}) {
      INFO(dtype_name(d), " ", shape_text(s));
      cuda->prepare(s, d, {});
      const auto t = cuda->time_iterations(2, 5, true);
      REQUIRE(t.size() == 5);
      for (double x : t) CHECK(x > 0);
      CHECK(cuda->check_correctness().ok);
      CHECK(cuda->algorithm().find("cuBLASLt") == 0);
    }
  CHECK_THROWS_AS(cuda->prepare({1 << 20, 1 << 20, 1 << 20}, Dtype::fp32, {}), Error);  // 8 TiB of operands
}
