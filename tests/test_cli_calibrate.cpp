// napkin calibrate, run as a user would. Expected numbers are hand arithmetic from
// models/gpt2.toml (12 layers, d_model 768, 12 heads, d_ff 3072, vocab 50257, tied).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "cli_helpers.hpp"

using napkin::test::run_napkin;

namespace {

// A bad input is one line on stderr, "napkin: error: ...", and exit status 2.
void check_one_line_error(const napkin::test::CliResult& r, const std::string& fragment) {
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("napkin: error: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
  CHECK_MESSAGE(r.err.find(fragment) != std::string::npos, r.err);
}

}  // namespace

TEST_CASE("calibrate --dry-run --json lists gpt2's 27 products and their FLOPs") {
  const auto r = run_napkin("calibrate --model gpt2 --seq 128 --dry-run --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["dry_run"] == true);
  CHECK(j["tokens_per_step"] == 128);
  const auto& products = j["products"];
  // 9 forward products (q, k, v, scores, context, o, up, down, lm_head), 2 backward each.
  REQUIRE(products.size() == 27);
  double sum = 0;
  for (const auto& p : products) {
    for (const char* key : {"name", "m", "n", "k", "batch", "count", "flops", "time_s"}) CHECK(p.contains(key));
    CHECK(p["time_s"].is_null());
    sum += p["flops"].get<double>();
  }
  // GEMM weights 123,532,032 (4·768² + 2·768·3072 = 7,077,888 per layer ×12, + the LM head
  // 50257·768 = 38,597,376); 6·N·128 tokens + causal attention 3·12·12·128·128 = 7,077,888
  // per token ·128: 94,872,600,576 + 905,969,664 = 95,778,570,240.
  CHECK(sum == doctest::Approx(95778570240.0).epsilon(1e-12));
  CHECK(j["gemm_flops_per_step"].get<double>() == doctest::Approx(95778570240.0).epsilon(1e-12));
  // The first product: Q projection, 128 tokens × 768 × 768, once per layer.
  CHECK(products[0]["name"] == "attn.q_proj");
  CHECK(products[0]["m"] == 128);
  CHECK(products[0]["count"] == 12);
  CHECK(products[0]["flops"].get<double>() == doctest::Approx(2.0 * 128 * 768 * 768 * 12));
}

TEST_CASE("calibrate --dry-run prints a table and the caveats") {
  const auto r = run_napkin("calibrate --model mixtral-8x7b --seq 128 --tp 2 --dry-run");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("moe.expert.up") != std::string::npos);
  CHECK(r.out.find("even routing") != std::string::npos);
  CHECK(r.out.find("upper bound") != std::string::npos);
  CHECK(r.out.find("tensor parallelism 2") != std::string::npos);
}

TEST_CASE("calibrate --help has examples") {
  const auto r = run_napkin("calibrate --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Examples:") != std::string::npos);
  CHECK(r.out.find("--micro-batch") != std::string::npos);
}

TEST_CASE("a sequence longer than the context warns and goes on") {
  const auto r = run_napkin("calibrate --model gpt2 --seq 2048 --dry-run --json");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("napkin: warning: --seq 2048 is longer than gpt2's context of 1024") != std::string::npos);
}

TEST_CASE("calibrate: bad input is one clear line and exit 2") {
  check_one_line_error(run_napkin("calibrate --model gpt2 --tp 5 --dry-run"), "--tp 5 does not divide the attention heads (12)");
  check_one_line_error(run_napkin("calibrate --model gtp2 --dry-run"), "gpt2");
  check_one_line_error(run_napkin("calibrate --model gpt2 --micro-batch 0 --dry-run"), "--micro-batch");
  check_one_line_error(run_napkin("calibrate --model gpt2 --micro-batch 1.5 --dry-run"), "--micro-batch");
  check_one_line_error(run_napkin("calibrate --model gpt2 --seq abc --dry-run"), "--seq");
  check_one_line_error(run_napkin("calibrate --model gpt2 --dtype bf17 --dry-run"), "--dtype");
  check_one_line_error(run_napkin("calibrate --model gpt2 --device tpu --dry-run"), "--device");
  check_one_line_error(run_napkin("calibrate --model gpt2 --assumed-mfu 2 --dry-run"), "--assumed-mfu");
  check_one_line_error(run_napkin("calibrate --model gpt2 --tokens 1B --dry-run"), "--tokens and --gpus");
  check_one_line_error(run_napkin("calibrate --model gpt2 --tokens 1B --gpus 1.5 --dry-run"), "--gpus must be a whole number");
  check_one_line_error(run_napkin("calibrate --model gpt2 --micro-batch 1M --seq 1M --dry-run"), "2^31-1");
}

TEST_CASE("calibrate: a --tp that does not divide d_ff") {
  // gpt2 with d_ff 3001: 12 heads split 3 ways, 3001 = 3·1000 + 1 does not.
  const napkin::test::TempDir tmp("napkin_calibrate_odd");
  const std::string path = (tmp / "odd.toml").string();
  std::ofstream(path) << "name = \"odd\"\nsource = \"test\"\nlayers = 2\nd_model = 768\nheads = 12\nd_ff = 3001\nmlp = \"gelu\"\n"
                         "vocab = 1000\ncontext = 512\ntied_embeddings = true\npositions = \"learned\"\n"
                         "bias = \"all\"\nnorm = \"layernorm\"\n";
  check_one_line_error(run_napkin("calibrate --model " + path + " --tp 3 --dry-run"), "does not divide d_ff (3001)");
}

TEST_CASE("calibrate times gpt2 on the CPU end to end") {
  const auto r = run_napkin("calibrate --model gpt2 --device cpu --seq 32 --iters 2 --warmup 0 --tokens 1B --gpus 8 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["dry_run"] == false);
  CHECK(j["dtype"] == "fp32");  // the CPU times bf16 requests in fp32, and says so
  const auto& products = j["products"];
  REQUIRE(products.size() == 27);
  double flops = 0, time = 0;
  for (const auto& p : products) {
    CHECK(p["time_s"].get<double>() > 0);
    flops += p["flops"].get<double>();
    time += p["time_s"].get<double>();
  }
  // 6·123,532,032·32 + (3·12·12·32·128 = 1,769,472)·32 = 23,718,150,144 + 56,623,104.
  CHECK(flops == doctest::Approx(23774773248.0).epsilon(1e-12));
  const double step = j["step_matmul_time_s"].get<double>();
  CHECK(step == doctest::Approx(time));
  // 32 tokens per step, one GPU per step (no tp).
  const double tokens_per_s = j["tokens_per_s"].get<double>();
  CHECK(tokens_per_s == doctest::Approx(32 / step));
  // napkin train's FLOPs per token for gpt2 at seq 32: 6·124,439,808 (the published exact
  // count, models/gpt2.toml) + 1,769,472 = 748,408,320.
  const double peak = j["peak_flops_per_s"].get<double>();
  CHECK(j["mfu_measured"].get<double>() == doctest::Approx(748408320.0 * tokens_per_s / peak));
  CHECK(j["mfu_assumed"].get<double>() == 0.5);
  CHECK(j["mfu_measured"].get<double>() > 0);
  CHECK(j["mfu_measured"].get<double>() <= 1);
  // Days: 1e9 tokens over 8 GPUs at the measured rate; and at MFU 0.5.
  CHECK(j["days_measured"].get<double>() == doctest::Approx(1e9 / (8 * tokens_per_s) / 86400));
  CHECK(j["days_assumed"].get<double>() == doctest::Approx(1e9 * 748408320.0 / (8 * peak * 0.5) / 86400));
  bool upper_bound_said = false;
  for (const auto& n : j["notes"]) upper_bound_said |= n.get<std::string>().find("upper bound") != std::string::npos;
  CHECK(upper_bound_said);
}

TEST_CASE("calibrate text on the CPU shows the table and the MFU comparison") {
  const auto r = run_napkin("calibrate --model gpt2 --device cpu --seq 16 --iters 1 --warmup 0");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("lm_head.wgrad") != std::string::npos);
  CHECK(r.out.find("measured MFU") != std::string::npos);
  CHECK(r.out.find("assumed MFU") != std::string::npos);
  CHECK(r.out.find("tokens/s per device") != std::string::npos);
}

TEST_CASE("calibrate: a layer too big for the device says how much it needs") {
  // 100,000 × 1024 tokens through gpt2's LM head: C alone is 102,400,000 × 50257 fp32
  // values, about 2.06e13 bytes, more than any machine's RAM.
  check_one_line_error(run_napkin("calibrate --model gpt2 --device cpu --micro-batch 100000 --seq 1024"),
                       "lower --micro-batch or --seq, or split the layer with --tp");
  const auto r = run_napkin("calibrate --model gpt2 --device cpu --micro-batch 100000 --seq 1024");
  CHECK(r.err.find("lm_head") != std::string::npos);
  check_one_line_error(run_napkin("calibrate --model gpt2 --device cpu --iters 0"), "--iters must be at least 1");
  check_one_line_error(run_napkin("calibrate --model gpt2 --device cpu --hardware h100-sxn"), "h100-sxm");
}
