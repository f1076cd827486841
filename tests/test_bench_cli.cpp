// napkin bench as a user runs it: output formats and every bad-input path.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "bench_signal.hpp"
#include "cli_helpers.hpp"

using napkin::test::run_napkin;

namespace {
void expect_error(const std::string& args, const std::string& fragment) {
  const auto r = run_napkin(args);
  INFO(args, " -> ", r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("napkin: error: ", 0) == 0);
  CHECK(r.err.find(fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("bench --device cpu --json") {
  const auto r = run_napkin("bench --device cpu --shape 64x96x128 --iters 3 --warmup 0 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["device"]["backend"] == "cpu");
  const auto& x = j["results"].at(0);
  CHECK(x["m"] == 64);
  CHECK(x["n"] == 96);
  CHECK(x["k"] == 128);
  CHECK(x["dtype"] == "fp32");
  CHECK(x["iterations"] == 3);
  // 2*64*96*128 = 1,572,864 FLOP per product
  CHECK(x["flops_per_s_median"].get<double>() == doctest::Approx(1572864.0 / x["time_s_median"].get<double>()));
  CHECK(x["mfu"].get<double>() > 0);
  CHECK(x["mfu"].get<double>() <= 1.0);
  CHECK(x["check"]["ok"] == true);
}

TEST_CASE("bench --csv, a sweep, and --list-devices") {
  auto r = run_napkin("bench --device cpu --dtype fp64 --sweep m=16:48:16,n=32,k=8 --iters 2 --warmup 0 --csv");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("m,n,k,batch,dtype,", 0) == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 4);  // header + m = 16, 32, 48
  CHECK(r.out.find("\n48,32,8,1,fp64,cpu,") != std::string::npos);
  r = run_napkin("bench --device cpu --shape 32 --iters 2 --warmup 0 --peak 1T");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("--peak") != std::string::npos);
  r = run_napkin("bench --list-devices --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.size() == 2);
  CHECK(j[1]["key"] == "cpu");
  CHECK(j[1]["available"] == true);
  // CSV: a header and one quoted row per device, the same facts.
  r = run_napkin("bench --list-devices --csv");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("device,available,description,detail\ncuda,", 0) == 0);
  CHECK(r.out.find("\ncpu,yes,\"CPU: OpenBLAS sgemm/dgemm on every core\",\"") != std::string::npos);
}

TEST_CASE("bench: bad input is one line and a non-zero exit") {
  expect_error("bench --device cpu --shape 0x64x64", "at least 1");
  expect_error("bench --device cpu --shape -5x64x64", "--shape");
  expect_error("bench --device cpu --shape 64x64", "MxNxK");
  expect_error("bench --device cpu --sweep m=1:4", "--sweep");
  expect_error("bench --device cpu --sweep m=8:4:1,n=1,k=1", "starts after it stops");
  expect_error("bench --device cpu --dtype fp9", "unknown dtype");
  expect_error("bench --device cpu --dtype int8", "has no int8 matmul in napkin's cpu backend (it has fp32, fp64)");
  expect_error("bench --device cpu --dtype fp4", "napkin bench times");
  expect_error("bench --device cpu --dtype bf16 --shape 32", "no bf16 matmul");
  expect_error("bench --device tpu", "unknown device");
  expect_error("bench --device cpu --iters -1 --shape 32", "--iters");
  expect_error("bench --device cpu --warmup soon", "--warmup");
  expect_error("bench --device cpu --peak fast", "--peak");
  expect_error("bench --device cpu --hardware h900", "unknown hardware");
  expect_error("bench --device cpu --json --csv", "excludes");
  // A product that runs for days is refused before its memory is judged (test_bench_cpu: memory).
  expect_error("bench --device cpu --shape 2000000x2000000x2000000", "napkin refuses a product over 60 s on the CPU");
  // A sweep is counted before it is listed: a billion shapes are refused, not allocated.
  expect_error("bench --device cpu --sweep m=1:1000000000:1,n=8,k=8", "--sweep: 1000000000 shapes is too many (at most 10000)");
  expect_error("bench --device cpu --iters 0 --shape 32", "--iters must be at least 1");
  expect_error("bench --device cpu --iters 1.5 --shape 32", "--iters must be a whole number");
  expect_error("bench --device cpu --iters '' --shape 32", "--iters: empty value; expected N");
  expect_error("bench --device cpu --algos 0 --shape 32", "--algos must be at least 1");
  expect_error("bench --device cpu --warmup -1 --shape 32", "--warmup must be between 0 and 3600 seconds, found");
  expect_error("bench --device cpu --peak 0 --shape 32", "--peak must be a positive FLOP/s figure");
  // An MFU over a peak of 1e308 FLOP/s (1e-296%) or of 1 FLOP/s (6e10) means nothing.
  expect_error("bench --device cpu --peak 1e308 --shape 32", "between 1 MFLOP/s and 10 EFLOP/s");
  expect_error("bench --device cpu --peak 1 --shape 32", "between 1 MFLOP/s and 10 EFLOP/s");
  expect_error("bench --device cpu --batch 0 --shape 32", "--batch must be at least 1");
}

TEST_CASE("bench --device cuda without a device says so") {
  const auto list = nlohmann::json::parse(run_napkin("bench --list-devices --json").out);
  if (list[0]["available"] == true) {
    MESSAGE("SKIPPED: a CUDA device is present");
    return;
  }
  // The same one-line reason --list-devices gives (no module, no driver, old driver, no device).
  expect_error("bench --device cuda", list[0]["detail"].get<std::string>());
}

TEST_CASE("bench --batch on the CPU: one call of B products, B times the FLOPs") {
  const auto r = run_napkin("bench --device cpu --shape 16x24x8 --batch 3 --iters 2 --warmup 0 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto x = nlohmann::json::parse(r.out)["results"].at(0);
  CHECK(x["batch"] == 3);
  CHECK(x["flops"].get<double>() == 3 * 2.0 * 16 * 24 * 8);  // 18,432
  CHECK(x["check"]["ok"] == true);
}

TEST_CASE("Ctrl-C stops a CPU bench of --iters 1e8: what was measured, then exit 130") {
  // Tens of seconds at a microsecond a product; napkin allows an hour, 36 µs a product.
  const auto r = napkin::test::interrupt_when_timing(
      {"bench", "--device", "cpu", "--shape", "16", "--iters", "1e8", "--warmup", "0", "--no-flush", "--json"});
  CAPTURE(r.err);
  CHECK(r.status == 130);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["interrupted"] == true);
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["iterations"].get<long long>() >= 1);
  CHECK(j["results"][0]["check"]["ok"] == true);
  CHECK(r.err.find("napkin: error: interrupted by Ctrl-C: 1 of 1 shapes measured") != std::string::npos);
}
