// `napkin train`, `napkin hardware` and `napkin models` as a user runs them: exit statuses,
// one-line errors, and JSON that scripts can rely on.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using napkin::test::run_napkin;
using nlohmann::json;

namespace {
// Exit 2, one line on stderr that starts "napkin: error:" and contains `needle`.
void check_bad_input(const std::string& args, const std::string& needle) {
  CAPTURE(args);
  const auto r = run_napkin(args);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("napkin: error: ", 0) == 0);
  CHECK(r.err.find(needle) != std::string::npos);
  CAPTURE(r.err);
  CHECK(r.err.find("terminate") == std::string::npos);
  CHECK(r.out.find("inf") == std::string::npos);
  CHECK(r.out.find("nan") == std::string::npos);
}
}  // namespace

TEST_CASE("the README's estimate: 70B on 15T tokens on 1024 H100s") {
  const auto r = run_napkin("train --params 70B --tokens 15T --hardware h100-sxm --gpus 1024 --json");
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  // 6 · 70e9 · 15e12 = 6.3e24 FLOP; 1024 · 989.5e12 · 0.5 = 5.06624e17 FLOP/s -> 143.93 days
  CHECK(j["total_flops"].get<double>() == doctest::Approx(6.3e24));
  CHECK(j["flops_per_token"].get<double>() == doctest::Approx(4.2e11));
  CHECK(j["days"].get<double>() == doctest::Approx(143.9266).epsilon(1e-5));
  CHECK(j["gpu_hours"].get<double>() == doctest::Approx(3537140).epsilon(1e-5));
  CHECK(j["params"].get<double>() == 70e9);
  CHECK(j["tokens"].get<double>() == 15e12);
  CHECK(j["gpus"].get<double>() == 1024);
  CHECK(j["mfu"].get<double>() == 0.5);
  CHECK(j["peak_flops_per_s"].get<double>() == 989.5e12);
  CHECK(j["hardware"] == "h100-sxm");
  CHECK(j["dtype"] == "bf16");
  // energy: 3,537,140 GPU-h · 700 W / 1e6 = 2,476.0 MWh (PUE 1)
  CHECK(j["energy_mwh"].get<double>() == doctest::Approx(2475.998).epsilon(1e-5));
  CHECK_FALSE(j.contains("cost_usd"));
}

TEST_CASE("text output states its assumptions") {
  const auto r = run_napkin("train --model llama3-70b --tokens 15T --hardware h100-sxm --gpus 1024");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("MFU 0.5 (default") != std::string::npos);
  CHECK(r.out.find("dense bf16 peak 989.5 TFLOP/s") != std::string::npos);
  CHECK(r.out.find("6·P (6pd)") != std::string::npos);
  CHECK(r.out.find("145.1 days") != std::string::npos);  // 6·70.5537e9·15e12 / 5.06624e17 s
  const auto e = run_napkin("train --model llama3-70b --tokens 15T --hardware h100-sxm --gpus 1024 --explain");
  REQUIRE(e.exit_code == 0);
  CHECK(e.out.find("4.233e11 × 1.500e13 = 6.350e24 FLOP") != std::string::npos);
}

TEST_CASE("solve for the missing one, Chinchilla, budget, cost, attention") {
  json j = json::parse(run_napkin("train --params 70B --gpus 1024 --days 90 --json").out);
  CHECK(j["tokens"].get<double>() == doctest::Approx(9.379781e12).epsilon(1e-6));  // see test_training
  CHECK(j["solved_for"] == "tokens");
  j = json::parse(run_napkin("train --params 70B --tokens 15T --days 90 --json").out);
  CHECK(j["gpus"].get<double>() == 1638);  // 1637.56 rounded up
  j = json::parse(run_napkin("train --params 1B --tokens chinchilla --gpus 8 --json").out);
  CHECK(j["tokens"].get<double>() == 20e9);
  j = json::parse(run_napkin("train --budget 5.88e23 --gpus 1024 --json").out);
  CHECK(j["params"].get<double>() == doctest::Approx(70e9));  // sqrt(5.88e23/120)
  CHECK(j["tokens"].get<double>() == doctest::Approx(1.4e12));
  j = json::parse(run_napkin("train --params 70B --tokens 15T --gpus 1024 --price 2 --pue 1.2 --grid-intensity 400 --json").out);
  CHECK(j["cost_usd"].get<double>() == doctest::Approx(7074280).epsilon(1e-5));
  CHECK(j["energy_mwh"].get<double>() == doctest::Approx(2971.198).epsilon(1e-5));
  CHECK(j["co2_tonnes"].get<double>() == doctest::Approx(1188.479).epsilon(1e-5));
  j = json::parse(run_napkin("train --model llama3-70b --tokens 15T --gpus 1024 --seq 8192 --flops-model 6pd+attn --json").out);
  // (6 · 70,553,706,496 + 64,424,509,440) · 15e12
  CHECK(j["total_flops"].get<double>() == doctest::Approx((6 * 70553706496.0 + 64424509440.0) * 15e12));
  CHECK(j["flops_model"] == "6pd+attn");
  j = json::parse(run_napkin("train --params 70B --tokens 15T --gpus 1024 --dtype fp8 --mfu 40% --json").out);
  CHECK(j["peak_flops_per_s"].get<double>() == 1979e12);
  CHECK(j["mfu"].get<double>() == doctest::Approx(0.4));
  const auto sparse = run_napkin("train --params 70B --tokens 15T --gpus 1024 --sparse --json");
  CHECK(json::parse(sparse.out)["peak_flops_per_s"].get<double>() == 2 * 989.5e12);
}

TEST_CASE("MoE trains on its active parameters") {
  const json j = json::parse(run_napkin("train --model mixtral-8x7b --tokens 1T --gpus 64 --json").out);
  CHECK(j["params"].get<double>() == doctest::Approx(12.9e9).epsilon(0.005));  // Mistral AI: 12.9B active
  CHECK(j["total_params"].get<double>() == doctest::Approx(46.7e9).epsilon(0.005));
}

TEST_CASE("bad input: one line, exit 2") {
  check_bad_input("train --model llama3-8 --tokens 1T --gpus 8", "did you mean 'llama3-8b'");
  check_bad_input("train --params 70B --tokens 15T --hardware h100 --gpus 8", "did you mean");
  check_bad_input("train --params 70B --tokens 15T --gpus 0", "--gpus");
  check_bad_input("train --params 70B --tokens 15T --gpus 1.5", "--gpus");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --mfu 1.5", "--mfu");
  check_bad_input("train --params 70B --tokens abc --gpus 8", "--tokens");
  check_bad_input("train --params 70B --tokens 1e400 --gpus 8", "--tokens");
  check_bad_input("train --params -70B --tokens 1T --gpus 8", "--params");
  check_bad_input("train --params 70B --tokens 15T", "give three of");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --days 3", "leave one out");
  check_bad_input("train --model llama3-8b --params 8B --tokens 1T --gpus 8", "--model and --params");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --hardware a100-sxm-80gb --dtype fp8", "has no fp8");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --dtype fp9", "--dtype");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --dtype bf61", "did you mean 'bf16'");
  check_bad_input("train --model llama3-8b --tokens 15T --gpus 8 --seq 0", "--seq must be at least 1");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --hardware tpu-v4 --sparse", "no 2:4");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --flops-model 6pd+attn", "needs --model");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --flops-model magic", "--flops-model");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --pue 0.5", "--pue");
  check_bad_input("train --params 1e300 --tokens 1e300 --gpus 1", "overflow");
  check_bad_input("train --budget 1e24", "--gpus");
  check_bad_input("train --params 70B --tokens 15T --gpus 8 --hardware tpu-v4 --grid-intensity 300", "no TDP");
  check_bad_input("train --bogus", "--bogus");
  check_bad_input("frobnicate", "frobnicate");
  check_bad_input("trian --params 1B", "did you mean 'train'");
}

TEST_CASE("hardware and models commands") {
  auto r = run_napkin("hardware list");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("h100-sxm") != std::string::npos);
  r = run_napkin("hardware show h100-sxm --json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["dense_peak_flops_per_s"]["bf16"].get<double>() == 989.5e12);  // H100 datasheet 1,979 sparse / 2
  CHECK(j["memory_bytes"].get<double>() == 80e9);
  r = run_napkin("models show llama3-8b --json");
  REQUIRE(r.exit_code == 0);
  j = json::parse(r.out);
  CHECK(j["params"].get<double>() == 8030261248.0);  // HF safetensors total
  CHECK(j["active_params"].get<double>() == 8030261248.0);
  CHECK(json::parse(run_napkin("models list --json").out).size() >= 15);
  check_bad_input("hardware show h1OO-sxm", "did you mean 'h100-sxm'");
  check_bad_input("models show gpt-2", "did you mean 'gpt2'");
}

TEST_CASE("user specs: --spec, NAPKIN_SPEC_PATH and paths") {
  const napkin::test::TempDir tmp("napkin_cli_specs");
  const auto dir = tmp.path;
  std::ofstream(dir / "my-card.toml") << "name = \"My Card\"\nvendor = \"Me\"\nmemory_bytes = 16e9\n"
                                         "memory_bandwidth_bytes_per_s = 1e12\ntensor_figures_quoted_sparse = false\n"
                                         "source = \"test\"\n[dense_tflops]\nbf16 = 100\n";
  std::ofstream(dir / "broken.toml") << "name = \"Broken\"\nsource = \"t\"\nlayers = -1\n";
  const std::string d = dir.string();
  auto r = run_napkin("--spec " + d + "/my-card.toml train --params 1B --tokens 1T --gpus 1 --hardware my-card --json");
  REQUIRE(r.exit_code == 0);
  // 6e21 FLOP / (100e12 · 0.5) = 1.2e8 s
  CHECK(json::parse(r.out)["time_s"].get<double>() == doctest::Approx(1.2e8));
  r = run_napkin("train --params 1B --tokens 1T --gpus 1 --hardware my-card --json", "NAPKIN_SPEC_PATH=" + d + "/my-card.toml");
  CHECK(r.exit_code == 0);
  r = run_napkin("train --params 1B --tokens 1T --gpus 1 --hardware " + d + "/my-card.toml --json");
  CHECK(r.exit_code == 0);
  r = run_napkin("--spec " + d + "/broken.toml models list");
  CHECK(r.exit_code == 2);
  CAPTURE(r.err);
  CHECK(r.err.find("broken.toml:3:10: layers: must not be negative") != std::string::npos);
}

TEST_CASE("--version and --help exit 0") {
  CHECK(run_napkin("--version").exit_code == 0);
  const auto h = run_napkin("train --help");
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("Examples:") != std::string::npos);
}

TEST_CASE("--mfu measured and --mfu calibrated use this machine's measurement") {
  auto r = run_napkin("train --params 7B --tokens 1T --gpus 8 --hardware h100-sxm --mfu measured --iters 2 --json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["mfu"].get<double>() > 0);
  CHECK(j["mfu"].get<double>() <= 1);
  CHECK(j["mfu_source"].get<std::string>().rfind("measured: ", 0) == 0);
  // days follow from the measured MFU by the same arithmetic: 6 · 7e9 · 1e12 / (8 · 989.5e12 · mfu)
  CHECK(j["time_s"].get<double>() == doctest::Approx(4.2e22 / (8 * 989.5e12 * j["mfu"].get<double>())));

  const napkin::test::TempDir tmp("napkin_cli_tiny");
  const auto dir = tmp.path;
  std::ofstream(dir / "tiny.toml") << "name = \"Tiny\"\nsource = \"test\"\nlayers = 2\nd_model = 256\nheads = 4\nd_ff = 1024\n"
                                      "mlp = \"gelu\"\nvocab = 1000\ncontext = 256\ntied_embeddings = true\n"
                                      "positions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";
  r = run_napkin("train --model " + (dir / "tiny.toml").string() + " --tokens 1B --gpus 1 --mfu calibrated --seq 128 --iters 2 --json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  j = json::parse(r.out);
  CHECK(j["mfu"].get<double>() > 0);
  CHECK(j["mfu"].get<double>() <= 1);
  CHECK(j["mfu_source"].get<std::string>().rfind("calibrated: tiny", 0) == 0);
  check_bad_input("train --params 7B --tokens 1T --gpus 8 --mfu calibrated", "needs --model");
  check_bad_input("train --params 7B --tokens 1T --gpus 8 --mfu measurd", "--mfu");
}
