// napkin bench as a user runs it: output formats and every bad-input path.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

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
  expect_error("bench --device cpu --shape 2000000x2000000x2000000", "needs");
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
