// napkin bench --memory: the STREAM kernels on this CPU, the summary arithmetic against a
// backend with known times, and the command as a user runs it. Expected values are hand
// arithmetic or datasheet figures (named); nothing comes from napkin's own output.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "bench/cpu_stream.hpp"
#include "bench/memory_bench.hpp"
#include "cli_helpers.hpp"
#include "core/error.hpp"
#include "spec/registry.hpp"

using namespace napkin;
using napkin::test::run_napkin;

namespace {

// A backend whose memory measurement is given: only what run_memory_bench calls is real.
class Scripted final : public bench::Backend {
 public:
  bench::MemoryMeasurement m;
  std::string name = "Scripted Device";
  std::optional<double> llc;
  std::string key() const override { return "scripted"; }
  bench::Availability availability() override { return {true, name}; }
  std::string device_name() override { return name; }
  std::string device_description() override { return name; }
  std::vector<Dtype> dtypes() override { return {}; }
  bench::Shape default_shape(Dtype) const override { return {1, 1, 1}; }
  double default_warmup_s() const override { return 0; }
  void prepare(const bench::Shape&, Dtype, const bench::PrepareOptions&) override {}
  std::string algorithm() const override { return {}; }
  void warm_up(double, const std::function<bool()>&) override {}
  std::vector<double> time_iterations(int, int, bool) override { return {}; }
  bench::CorrectnessCheck check_correctness() override { return {}; }
  std::optional<double> last_level_cache_bytes() override { return llc; }
  bench::MemoryMeasurement measure_memory(std::size_t bytes, int, const std::function<bool()>&) override {
    bench::MemoryMeasurement out = m;
    out.array_bytes = bytes;
    return out;
  }
};

Scripted stream_like() {
  Scripted s;
  s.m.arrays = 3, s.m.threads = 2, s.m.check_ok = true;
  s.m.passes = {{"copy", 2e9, {0.1, 0.05, 0.2}}, {"triad", 3e9, {0.1, 0.12, 0.15, 0.3}}};
  return s;
}

void expect_error(const std::string& args, const std::string& fragment) {
  const auto r = run_napkin(args);
  INFO(args, " -> ", r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("napkin: error: ", 0) == 0);
  CHECK(r.err.find(fragment) != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

}  // namespace

TEST_CASE("the STREAM kernels: STREAM's byte counts, one time per run, results checked") {
  const auto m = bench::measure_cpu_stream(std::size_t(1) << 20, 2, 3, {});
  CHECK(m.array_bytes == 1048576);  // 131,072 doubles
  CHECK(m.arrays == 3);
  CHECK(m.threads == 2);
  CHECK(m.check_ok);
  REQUIRE(m.passes.size() == 2);
  CHECK(m.passes[0].kernel == "copy");
  CHECK(m.passes[0].bytes_per_call == 2.0 * 1048576);   // read a, write c
  CHECK(m.passes[1].kernel == "triad");
  CHECK(m.passes[1].bytes_per_call == 3.0 * 1048576);   // read a and c, write b
  CHECK(m.passes[0].times_s.size() == 3);
  for (double t : m.passes[1].times_s) CHECK(t > 0);
  // Odd sizes split over threads that do not divide them; one element per thread at least.
  CHECK(bench::measure_cpu_stream(8 * 1001, 3, 1, {}).check_ok);
  CHECK_THROWS_AS(bench::measure_cpu_stream(8, 2, 1, {}), Error);
  CHECK_THROWS_AS(bench::measure_cpu_stream(4096, 2, 0, {}), Error);
  // A stop before the first run: nothing timed, nothing claimed.
  CHECK(bench::measure_cpu_stream(4096, 1, 5, [] { return true; }).passes.empty());
}

TEST_CASE("summary: best and median bandwidth, the triad as headline, MBU against the peak given") {
  const SpecRegistry reg = SpecRegistry::builtin_only();
  Scripted s = stream_like();
  bench::MemoryBenchConfig cfg;
  cfg.array_bytes = 1000000000;
  cfg.peak_bytes_per_s = 60e9;
  const auto run = bench::run_memory_bench(s, reg, cfg);
  REQUIRE(run.kernels.size() == 2);
  // copy: 2e9 bytes, best 0.05 s -> 40 GB/s; median of {0.05, 0.1, 0.2} = 0.1 s -> 20 GB/s.
  CHECK(run.kernels[0].bytes_per_s_best == doctest::Approx(40e9));
  CHECK(run.kernels[0].bytes_per_s_median == doctest::Approx(20e9));
  // triad: 3e9 bytes, best 0.1 s -> 30 GB/s; median of four = (0.12 + 0.15) / 2 = 0.135 s.
  CHECK(run.kernels[1].bytes_per_s_best == doctest::Approx(30e9));
  CHECK(run.kernels[1].bytes_per_s_median == doctest::Approx(3e9 / 0.135));
  CHECK(run.headline == 1);
  CHECK(run.bytes_per_s == doctest::Approx(30e9));
  CHECK(*run.mbu == doctest::Approx(0.5));  // 30 / 60
  CHECK(run.peak_source == "--peak-bandwidth");
  CHECK(run.notes.empty());
}

TEST_CASE("peak bandwidth: --hardware, detected from the device name, or none with the reason") {
  const SpecRegistry reg = SpecRegistry::builtin_only();
  Scripted s = stream_like();
  bench::MemoryBenchConfig cfg;
  cfg.array_bytes = 1 << 30;
  cfg.hardware = reg.hardware("a100-sxm-80gb");  // 2.039 TB/s (NVIDIA A100 datasheet, 80GB SXM)
  CHECK(*bench::run_memory_bench(s, reg, cfg).peak_bytes_per_s == doctest::Approx(2.039e12));
  cfg.hardware.reset();
  s.name = "NVIDIA H100 80GB HBM3";  // h100-sxm's device name: 3.35 TB/s (NVIDIA H100 datasheet, SXM)
  const auto detected = bench::run_memory_bench(s, reg, cfg);
  CHECK(*detected.peak_bytes_per_s == doctest::Approx(3.35e12));
  CHECK(*detected.mbu == doctest::Approx(30e9 / 3.35e12));
  s.name = "Some CPU";
  const auto none = bench::run_memory_bench(s, reg, cfg);
  CHECK(!none.mbu);
  CHECK(none.peak_source.find("--peak-bandwidth") != std::string::npos);
}

TEST_CASE("what is refused: wrong results, broken timers, arrays that fit the cache are flagged") {
  const SpecRegistry reg = SpecRegistry::builtin_only();
  bench::MemoryBenchConfig cfg;
  cfg.array_bytes = 1 << 20;
  Scripted wrong = stream_like();
  wrong.m.check_ok = false;
  CHECK_THROWS_WITH_AS(bench::run_memory_bench(wrong, reg, cfg), doctest::Contains("results are wrong"), Error);
  Scripted zero = stream_like();
  zero.m.passes[0].times_s = {0.0};
  CHECK_THROWS_WITH_AS(bench::run_memory_bench(zero, reg, cfg), doctest::Contains("non-positive"), Error);
  cfg.repeats = 0;
  CHECK_THROWS_AS(bench::run_memory_bench(wrong, reg, cfg), Error);
  cfg.repeats = 10;
  Scripted cached = stream_like();
  cached.llc = 32.0 * 1048576;  // 1 MiB arrays against a 32 MiB cache: under STREAM's 4x rule
  const auto run = bench::run_memory_bench(cached, reg, cfg);
  REQUIRE(run.notes.size() == 1);
  CHECK(run.notes[0].find("4 times the 32 MiB last-level cache") != std::string::npos);
}

TEST_CASE("napkin bench --memory --device cpu as a user runs it") {
  auto r = run_napkin("bench --memory --device cpu --size 1MiB --iters 2 --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["device"]["backend"] == "cpu");
  CHECK(j["array_bytes"] == 1048576);
  CHECK(j["arrays"] == 3);
  CHECK(j["threads"].get<int>() >= 1);
  CHECK(j["kernels"].size() == 2);
  CHECK(j["kernels"][1]["kernel"] == "triad");
  CHECK(j["kernels"][1]["bytes_per_call"] == 3 * 1048576);
  // The headline is the triad's best: bytes / min time.
  CHECK(j["bytes_per_s"].get<double>() ==
        doctest::Approx(3.0 * 1048576 / j["kernels"][1]["time_s_min"].get<double>()));
  CHECK(j["mbu"].is_null());  // no spec names a CPU
  CHECK(j["check"]["ok"] == true);

  r = run_napkin("bench --memory --device cpu --size 1MiB --iters 2 --peak-bandwidth 1TB/s --json");
  REQUIRE(r.exit_code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["mbu"].get<double>() == doctest::Approx(j["bytes_per_s"].get<double>() / 1e12));
  CHECK(j["peak_bytes_per_s"].get<double>() == 1e12);

  r = run_napkin("bench --memory --device cpu --size 1MiB --iters 2 --csv");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("kernel,array_bytes,bytes_per_call,", 0) == 0);
  CHECK(r.out.find("\ncopy,1048576,2097152,2,") != std::string::npos);

  r = run_napkin("bench --memory --device cpu --size 1MiB --iters 2");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("memory bandwidth: ") != std::string::npos);
  CHECK(r.out.find("(triad, best of 2)") != std::string::npos);
}

TEST_CASE("bench --memory: bad values and flags that do not apply are one line, before any measurement") {
  expect_error("bench --memory --device cpu --dtype bf16", "--dtype does not apply to 'bench --memory'");
  expect_error("bench --memory --device cpu --shape 64", "--shape does not apply");
  expect_error("bench --memory --list-devices", "--memory does not apply to 'bench --list-devices'");
  expect_error("bench --memory --device cpu --size 0", "--size must be between 4KiB and 1TiB");
  expect_error("bench --memory --device cpu --size 2TiB", "--size must be between 4KiB and 1TiB");
  expect_error("bench --memory --device cpu --size lots", "--size");
  expect_error("bench --memory --device cpu --iters 0", "--iters must be at least 1");
  expect_error("bench --memory --device cpu --peak-bandwidth 100", "--peak-bandwidth");  // GB/s or Gb/s? a unit is required
  expect_error("bench --memory --device cpu --peak-bandwidth 1e-300GB/s", "--peak-bandwidth must be between");
  expect_error("bench --memory --device cpu --hardware h100-sxn", "h100-sxm");  // did you mean
  expect_error("bench --size 1GiB --device cpu", "--size applies only to 'bench --memory'");
}
