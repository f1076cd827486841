// The harness with a fake backend that returns known times: statistics, FLOP/s, MFU, peak
// resolution and hardware matching, the correctness gate, and the JSON report.
#include <doctest/doctest.h>

#include "bench/harness.hpp"
#include "core/error.hpp"
#include "report/bench_report.hpp"

using namespace napkin;
using namespace napkin::bench;

namespace {

class FakeBackend final : public Backend {
 public:
  std::vector<double> times{1e-3, 5e-3, 2e-3, 4e-3, 3e-3};  // median 3 ms, min 1 ms, max 5 ms
  std::string name = "NVIDIA H100 80GB HBM3";
  bool correct = true;
  std::optional<double> own_peak;
  std::optional<Dtype> peak_as;  // peak_dtype(): the units the product runs on
  int prepared = 0;
  int warm_ups = 0;

  std::string key() const override { return "fake"; }
  Availability availability() override { return {true, "fake"}; }
  std::string device_name() override { return name; }
  std::string device_description() override { return name + " (fake)"; }
  std::vector<Dtype> dtypes() override { return {Dtype::bf16, Dtype::fp32, Dtype::fp64}; }
  Dtype peak_dtype(Dtype d) override { return peak_as.value_or(d); }
  void warm_up(double, const std::function<bool()>&) override { ++warm_ups; }
  Shape default_shape(Dtype) const override { return {1000, 1000, 1000}; }
  double default_warmup_s() const override { return 0; }
  void prepare(const Shape&, Dtype, const PrepareOptions&) override { ++prepared; }
  std::string algorithm() const override { return "fake-algo"; }
  std::vector<double> time_iterations(int, int iterations, bool) override {
    if (iterations == 1) return {times.front()};
    std::vector<double> out;
    for (int i = 0; i < iterations; ++i) out.push_back(times[static_cast<std::size_t>(i) % times.size()]);
    return out;
  }
  CorrectnessCheck check_correctness() override { return {correct, 64, correct ? 1e-4 : 0.5, 2e-2}; }
  std::optional<PeakInfo> measured_peak(Dtype) override {
    if (!own_peak) return std::nullopt;
    PeakInfo p;
    p.flops_per_s = own_peak;
    p.source = "measured: fake";
    return p;
  }
};

BenchConfig config(Dtype d = Dtype::bf16) {
  BenchConfig c;
  c.dtype = d;
  c.iterations = 5;
  c.warmup_s = 0;
  return c;
}

}  // namespace

TEST_CASE("summarize_times: median, min, max, mean") {
  const auto s = summarize_times({3, 1, 2});
  CHECK(s.median_s == 2);
  CHECK(s.min_s == 1);
  CHECK(s.max_s == 3);
  CHECK(s.mean_s == 2);
  CHECK(summarize_times({4, 1, 2, 3}).median_s == 2.5);  // even count: mean of 2 and 3
  CHECK_THROWS_AS(summarize_times({}), Error);
}

TEST_CASE("mfu arithmetic") {
  CHECK(*mfu(500e12, 1000e12) == doctest::Approx(0.5));
  CHECK_FALSE(mfu(500e12, std::nullopt).has_value());
  CHECK_FALSE(mfu(500e12, 0.0).has_value());
}

TEST_CASE("a known GPU name picks its spec; MFU = median throughput / dense peak") {
  FakeBackend fake;
  fake.times = {2e-3};  // every product 2 ms
  auto cfg = config();
  cfg.shapes = {{8192, 8192, 8192}};
  const auto reg = SpecRegistry::builtin_only();
  const BenchRun run = run_bench(fake, reg, cfg);
  REQUIRE(run.results.size() == 1);
  const auto& r = run.results[0];
  CHECK(run.peak.hardware_key == "h100-sxm");
  // 2 * 8192^3 = 1,099,511,627,776 FLOP in 2 ms = 549.76e12 FLOP/s; H100 SXM bf16 dense is
  // 989.5 TFLOP/s (NVIDIA datasheet: 1,979 with 2:4 sparsity, halved): MFU 0.555590.
  CHECK(r.flops_per_s_median == doctest::Approx(549.755813888e12));
  CHECK(*r.mfu == doctest::Approx(549.755813888 / 989.5));
}

TEST_CASE("statistics, --peak, --hardware, unknown devices") {
  FakeBackend fake;
  const auto reg = SpecRegistry::builtin_only();
  auto cfg = config();
  cfg.peak_flops_per_s = 1e12;
  auto run = run_bench(fake, reg, cfg);
  const auto& r = run.results.at(0);
  // Times 1,5,2,4,3 ms: median 3 ms, min 1 ms, max 5 ms. 1000^3 shape: 2e9 FLOP.
  CHECK(r.time.median_s == doctest::Approx(3e-3));
  CHECK(r.time.min_s == doctest::Approx(1e-3));
  CHECK(r.time.max_s == doctest::Approx(5e-3));
  CHECK(r.flops_per_s_median == doctest::Approx(2e9 / 3e-3));  // 666.7 GFLOP/s
  CHECK(r.flops_per_s_max == doctest::Approx(2e12));
  CHECK(*r.mfu == doctest::Approx(2e9 / 3e-3 / 1e12));         // 0.6667
  CHECK(run.peak.source == "--peak");

  cfg.peak_flops_per_s.reset();
  cfg.hardware = reg.hardware("a100-sxm-80gb");
  run = run_bench(fake, reg, cfg);
  CHECK(*run.results[0].mfu == doctest::Approx(2e9 / 3e-3 / 312e12));  // A100 bf16 dense 312 TFLOP/s (datasheet)

  cfg.hardware.reset();
  fake.name = "Some Future GPU";
  run = run_bench(fake, reg, cfg);
  CHECK_FALSE(run.results[0].mfu.has_value());
  CHECK(run.peak.source.find("--hardware") != std::string::npos);
  CHECK(bench_json(run)["results"][0]["mfu"].is_null());
}

TEST_CASE("a measured peak a product beats is raised to the product: MFU never above 1") {
  FakeBackend fake;
  fake.own_peak = 1e12;  // the best product runs 2e9 FLOP / 1 ms = 2e12 FLOP/s
  const auto run = run_bench(fake, SpecRegistry::builtin_only(), config());
  CHECK(*run.peak.flops_per_s == doctest::Approx(2e12));
  CHECK(*run.results[0].mfu_max == doctest::Approx(1.0));
  CHECK(*run.results[0].mfu == doctest::Approx(2e9 / 3e-3 / 2e12));  // 0.3333
}

TEST_CASE("sweeps pick the best shape; wrong results and bad settings are errors") {
  FakeBackend fake;
  const auto reg = SpecRegistry::builtin_only();
  auto cfg = config();
  cfg.shapes = {{100, 100, 100}, {1000, 1000, 1000}, {500, 500, 500}};
  std::size_t finished = 0;
  RunControl control;
  control.progress = [&](const BenchProgress& p) {
    CHECK(p.shapes == 3);
    if (p.total > 0 && p.done == p.total) ++finished;
  };
  const auto run = run_bench(fake, reg, cfg, control);
  CHECK(finished == 3);
  CHECK(fake.warm_ups == 1);  // once, before the first shape
  CHECK(fake.prepared == 3);
  CHECK(run.best == 1u);  // same times, most FLOPs

  fake.correct = false;
  try {
    run_bench(fake, reg, cfg);
    FAIL("a wrong product must not be reported");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::failure);
    CHECK(std::string(e.what()).find("wrong result") != std::string::npos);
  }
  fake.correct = true;
  CHECK_THROWS_AS(run_bench(fake, reg, config(Dtype::fp8)), Error);  // the fake has no fp8
  auto bad = config();
  bad.iterations = 0;
  CHECK_THROWS_AS(run_bench(fake, reg, bad), Error);
  fake.times = {0.0};
  CHECK_THROWS_AS(run_bench(fake, reg, config()), Error);  // a zero time would print inf
}

TEST_CASE("JSON: device, hardware, results with the documented fields") {
  FakeBackend fake;
  auto cfg = config();
  cfg.peak_flops_per_s = 1e12;
  const auto j = bench_json(run_bench(fake, SpecRegistry::builtin_only(), cfg));
  CHECK(j["device"]["backend"] == "fake");
  CHECK(j["device"]["name"] == "NVIDIA H100 80GB HBM3");
  CHECK(j["device"]["description"] == "NVIDIA H100 80GB HBM3 (fake)");
  CHECK(j["interrupted"] == false);
  CHECK(j["peak_flops_per_s"] == 1e12);
  const auto& r = j["results"][0];
  for (const char* key : {"m", "n", "k", "dtype", "time_s_median", "flops_per_s_median", "flops_per_s_max", "mfu"})
    CHECK_MESSAGE(r.contains(key), key);
  CHECK(r["m"] == 1000);
  CHECK(r["dtype"] == "bf16");
  CHECK(r["time_s_median"].get<double>() == doctest::Approx(3e-3));
}

TEST_CASE("timed products run in chunks; a stop request between chunks keeps what was measured") {
  FakeBackend fake;
  fake.times = {1e-3};
  auto cfg = config();
  cfg.iterations = 5000;  // at most 1000 a chunk: at least 5 chunks
  cfg.shapes = {{1000, 1000, 1000}, {500, 500, 500}};
  long long stopped_at = 0;
  RunControl control;
  control.progress = [&](const BenchProgress& p) {
    if (p.done > 0 && !stopped_at) stopped_at = p.done;
  };
  control.stop_requested = [&] { return stopped_at > 0; };
  const auto run = run_bench(fake, SpecRegistry::builtin_only(), cfg, control);
  CHECK(run.interrupted);
  REQUIRE(run.results.size() == 1);  // the second shape never started
  CHECK(stopped_at >= 1);
  CHECK(stopped_at <= 1000);
  CHECK(run.results[0].time.count == stopped_at);  // the first chunk, and nothing after the stop
  CHECK(run.results[0].check.ok);
  // 2e9 FLOP per 1000^3 product / 1 ms
  CHECK(run.results[0].flops_per_s_median == doctest::Approx(2e12));
}

TEST_CASE("TimeSamples: exact count, min, max and mean; the median from a bounded sample") {
  TimeSamples few;
  for (double t : {3.0, 1.0, 2.0}) few.add(t);
  CHECK(few.stats().median_s == 2);
  CHECK_FALSE(few.sampled());
  TimeSamples many(8);  // keeps 8 of them
  for (int i = 1; i <= 1000; ++i) many.add(i);
  const auto s = many.stats();
  CHECK(many.sampled());
  CHECK(s.count == 1000);
  CHECK(s.min_s == 1);
  CHECK(s.max_s == 1000);
  CHECK(s.mean_s == doctest::Approx(500.5));  // (1 + 1000) / 2
  CHECK(s.median_s >= 1);
  CHECK(s.median_s <= 1000);
  CHECK_THROWS_AS(TimeSamples().stats(), Error);
}

TEST_CASE("a backend that runs fp64 on other units is measured against their peak") {
  FakeBackend fake;  // "NVIDIA H100 80GB HBM3": h100-sxm lists fp64 34 and fp64_tensor 67 TFLOP/s
  fake.peak_as = Dtype::fp64_tensor;
  auto run = run_bench(fake, SpecRegistry::builtin_only(), config(Dtype::fp64));
  CHECK(*run.peak.flops_per_s == 67e12);
  CHECK(run.peak.source.find("fp64_tensor") != std::string::npos);
  fake.peak_as.reset();
  run = run_bench(fake, SpecRegistry::builtin_only(), config(Dtype::fp64));
  CHECK(*run.peak.flops_per_s == 34e12);
}
