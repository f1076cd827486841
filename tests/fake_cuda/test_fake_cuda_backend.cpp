// napkin's CUDA backend, in process, against the CPU stand-in: the defects of issue 8 §3
// that a run of the binary cannot show by its output alone (half-made state, how the host
// synchronises, the sampler's stop).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench/backend.hpp"
#include "bench/cuda/nvml.hpp"
#include "core/error.hpp"
#include "fake_cuda.h"

namespace napkin::bench::cuda {
Backend* new_backend();  // cuda_backend.cpp
}

using namespace napkin;
using namespace napkin::bench;

namespace {

std::unique_ptr<Backend> backend() { return std::unique_ptr<Backend>(cuda::new_backend()); }

std::string violations() {
  std::string out;
  for (int i = 0; i < napkin_fake_cuda_violation_count(); ++i) out += std::string(napkin_fake_cuda_violation(i)) + "\n";
  return out;
}

long live_total() {
  const auto l = napkin_fake_cuda_live_objects();
  return l.allocations + l.streams + l.events + l.lt_handles + l.matmul_descs + l.layouts + l.preferences + l.nvml_inits;
}

const PrepareOptions quick{2, false};  // two candidates, no L2 flush buffer

}  // namespace

TEST_CASE("initialisation is all or nothing: a failure leaves no handle, stream or buffer, and a retry works") {
  // The first cudaMalloc is init's (the FP8 scale), after cublasLtCreate and the stream.
  for (const char* fault : {"malloc_fail=1", "stream_create_fails"}) {
    CAPTURE(fault);
    napkin_fake_cuda_reset(fault);
    auto b = backend();
    REQUIRE(b->availability().available);
    CHECK_THROWS_AS(b->prepare({64, 48, 80}, Dtype::bf16, quick), Error);
    const auto l = napkin_fake_cuda_live_objects();
    CHECK(l.lt_handles == 0);
    CHECK(l.streams == 0);
    CHECK(l.allocations == 0);
    if (std::string(fault) == "malloc_fail=1") {  // only the first allocation fails: a retry succeeds
      b->prepare({64, 48, 80}, Dtype::bf16, quick);
      CHECK(b->time_iterations(1, 3, false).size() == 3);
      CHECK(b->check_correctness().ok);
    }
    b.reset();
    CHECK(violations() == "");
    CHECK(live_total() == 0);
  }
}

TEST_CASE("uploads, the scale and the NaN fill go on the bench stream: no race, no legacy-stream copies") {
  napkin_fake_cuda_reset(nullptr);
  auto b = backend();
  b->prepare({64, 48, 80}, Dtype::fp8, quick);  // fp8 reads the scale buffer too
  CHECK(napkin_fake_cuda_calls("cudaMemcpy") == 0);  // no synchronous copies on the legacy stream
  CHECK(napkin_fake_cuda_calls("cudaMemset") == 0);
  CHECK(napkin_fake_cuda_calls("cudaMemcpyAsync") >= 3);  // A, B and the scale
  const auto t = b->time_iterations(2, 4, true);
  CHECK(t.size() == 4);
  CHECK(b->check_correctness().ok);
  b.reset();
  CHECK(violations() == "");
  CHECK(live_total() == 0);
}

TEST_CASE("unusable heuristic candidates and failing products are skipped; none working is one error") {
  struct Case {
    const char* faults;
    const char* algorithm;  // the chosen candidate
  };
  for (const Case c : {Case{"bad_state=2", "cuBLASLt #3 of 4"}, Case{"matmul_fail=3", "cuBLASLt #4 of 4"}}) {
    CAPTURE(c.faults);
    napkin_fake_cuda_reset(c.faults);
    auto b = backend();
    b->prepare({64, 48, 80}, Dtype::bf16, {4, false});
    CHECK(b->algorithm().rfind(c.algorithm, 0) == 0);
    CHECK(b->algorithm().find("skipped") != std::string::npos);
    CHECK(b->check_correctness().ok);
  }
  napkin_fake_cuda_reset("bad_state=2,matmul_fail=4");
  {
    auto b = backend();
    try {
      b->prepare({64, 48, 80}, Dtype::bf16, {4, false});
      FAIL("expected an error");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.rfind("cuBLASLt: none of the 4 candidate algorithms for 64x48x80 bf16 ran (#1: state ", 0) == 0);
      CHECK(what.find("#4: cuBLASLt error in cublasLtMatmul") != std::string::npos);
      CHECK(e.code() == ExitCode::failure);
    }
  }
  CHECK(live_total() == 0);
}

TEST_CASE("warm-up keeps the device busy: the bench stream is never run dry and refilled while it lasts") {
  napkin_fake_cuda_reset(nullptr);
  auto b = backend();
  b->prepare({64, 48, 80}, Dtype::bf16, quick);
  const long before = napkin_fake_cuda_refills();
  b->warm_up(0.05, [] { return false; });
  const long short_warmup = napkin_fake_cuda_refills() - before;
  b->warm_up(0.3, [] { return false; });
  const long long_warmup = napkin_fake_cuda_refills() - before - short_warmup;
  // One refill each (its first batch, after prepare's or the last warm-up's drain), however long.
  CHECK(short_warmup <= 1);
  CHECK(long_warmup == short_warmup);
  // A stop request ends it at once.
  const auto t0 = std::chrono::steady_clock::now();
  b->warm_up(3600, [] { return true; });
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::minutes(10));  // would hang for an hour otherwise
  b.reset();
  CHECK(live_total() == 0);
}

TEST_CASE("the NVML sampler stops at once, whatever its period") {
  napkin_fake_cuda_reset(nullptr);
  {
    cuda::NvmlSampler s("00000000:18:00.0", std::chrono::hours(1));
    REQUIRE(s.available());
    for (int i = 0; i < 2; ++i) {
      s.start();
      const Telemetry t = s.stop();  // a sleeping sampler would hold this for an hour
      REQUIRE(t.sm_clock_mhz);
      CHECK(*t.sm_clock_mhz == 1980);
      CHECK(*t.power_watts == 650);
      CHECK(*t.temperature_c == 55);
    }
    CHECK(napkin_fake_cuda_live_objects().nvml_inits == 1);
  }
  CHECK(napkin_fake_cuda_live_objects().nvml_inits == 0);
  napkin_fake_cuda_reset("no_nvml");
  cuda::NvmlSampler none("00000000:18:00.0");
  CHECK_FALSE(none.available());
}

TEST_CASE("fp64 is measured against the FP64 tensor cores from compute capability 8.0") {
  napkin_fake_cuda_reset(nullptr);
  CHECK(backend()->peak_dtype(Dtype::fp64) == Dtype::fp64_tensor);  // H100: 9.0
  CHECK(backend()->peak_dtype(Dtype::bf16) == Dtype::bf16);
  setenv("NAPKIN_FAKE_CUDA_CC", "7.0", 1);
  setenv("NAPKIN_FAKE_CUDA_NAME", "Tesla V100-SXM2-32GB", 1);
  napkin_fake_cuda_reset(nullptr);
  auto volta = backend();
  CHECK(volta->peak_dtype(Dtype::fp64) == Dtype::fp64);
  const auto ds = volta->dtypes();
  CHECK(std::find(ds.begin(), ds.end(), Dtype::bf16) == ds.end());  // no bf16 before Ampere
  CHECK(std::find(ds.begin(), ds.end(), Dtype::fp16) != ds.end());
  volta.reset();
  unsetenv("NAPKIN_FAKE_CUDA_CC");
  unsetenv("NAPKIN_FAKE_CUDA_NAME");
  napkin_fake_cuda_reset(nullptr);
}

TEST_CASE("strided-batched and int8 products are correct in every member") {
  napkin_fake_cuda_reset(nullptr);
  auto b = backend();
  for (Dtype d : {Dtype::bf16, Dtype::fp32, Dtype::int8}) {
    CAPTURE(dtype_name(d));
    b->prepare({32, 24, 40, 5}, d, quick);  // 5 members: samples in the first, last and between
    CHECK(b->time_iterations(0, 2, false).size() == 2);
    const auto c = b->check_correctness();
    CHECK(c.ok);
    if (d == Dtype::int8) CHECK(c.max_error == 0);  // integer products are exact
  }
  b.reset();
  CHECK(violations() == "");
  CHECK(live_total() == 0);
}
