// napkin calibrate, run as a user would. Expected numbers are hand arithmetic from
// models/gpt2.toml (12 layers, d_model 768, 12 heads, d_ff 3072, vocab 50257, tied).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "bench_signal.hpp"
#include "cli_checks.hpp"
#include "cli_helpers.hpp"

using napkin::test::run_napkin;

namespace {


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

TEST_CASE("a dry run whose largest product no accelerator holds says a timed run will be refused") {
  // llama3-8b at seq 1e9: attn.scores is 32 heads of 1e9 x 1e9 bf16 scores, 6.4e19 B (64 EB).
  const auto r = run_napkin("calibrate --model llama3-8b --seq 1e9 --dry-run");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("timing these would need 64.0 EB for the largest product") != std::string::npos);
  CHECK(r.err.find("a timed run will be refused") != std::string::npos);
  // At a length that fits, no such warning.
  CHECK(run_napkin("calibrate --model llama3-8b --seq 4096 --dry-run").err.find("timing these") == std::string::npos);
}

TEST_CASE("calibrate: bad input is one clear line and exit 2") {
  check_one_line_error(run_napkin("calibrate --model gpt2 --tp 5 --dry-run"), "--tp 5 does not divide the attention heads (12)");
  check_one_line_error(run_napkin("calibrate --model gtp2 --dry-run"), "gpt2");
  check_one_line_error(run_napkin("calibrate --model gpt2 --micro-batch 0 --dry-run"), "--micro-batch");
  check_one_line_error(run_napkin("calibrate --model gpt2 --micro-batch 1.5 --dry-run"), "--micro-batch");
  check_one_line_error(run_napkin("calibrate --model gpt2 --seq abc --dry-run"), "--seq");
  check_one_line_error(run_napkin("calibrate --model gpt2 --dtype bf17 --dry-run"), "--dtype");
  check_one_line_error(run_napkin("calibrate --model gpt2 --device tpu"), "--device");
  check_one_line_error(run_napkin("calibrate --model gpt2 --assumed-mfu 2"), "--assumed-mfu");
  check_one_line_error(run_napkin("calibrate --model gpt2 --tokens 1B"), "--tokens and --gpus");
  check_one_line_error(run_napkin("calibrate --model gpt2 --tokens 1B --gpus 1.5"), "--gpus must be a whole number");
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

// A 2-layer model small enough to time on a CPU in a fraction of a second: d_model 256,
// 4 heads of 64, d_ff 1024 (gelu), vocab 1000, tied, learned positions, biases, layernorm.
std::string tiny_spec(const napkin::test::TempDir& dir) {
  const std::string path = (dir / "tiny.toml").string();
  std::ofstream(path) << "name = \"Tiny\"\nsource = \"test\"\nlayers = 2\nd_model = 256\nheads = 4\nd_ff = 1024\n"
                         "mlp = \"gelu\"\nvocab = 1000\ncontext = 256\ntied_embeddings = true\n"
                         "positions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";
  return path;
}

// The CPU path end to end. Its times are this machine's, so only what does not depend on
// them is checked against hand arithmetic here; the arithmetic on times is checked through
// the CUDA stand-in, whose times are known (tests/fake_cuda/test_fake_cuda_cli.cpp).
TEST_CASE("calibrate times a model on the CPU end to end") {
  napkin::test::TempDir dir("napkin_calibrate_cpu");
  const auto r = run_napkin("calibrate --model " + tiny_spec(dir) + " --device cpu --seq 32 --iters 2 --warmup 0 --tokens 1B --gpus 8 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["dry_run"] == false);
  CHECK(j["dtype"] == "fp32");  // the CPU times bf16 requests in fp32, and says so
  CHECK(j["device"]["backend"] == "cpu");
  CHECK(j["seq_len"] == 32);
  CHECK(j["tokens"] == 1000000000);  // counts as integers
  CHECK(j["gpus"] == 8);
  const auto& products = j["products"];
  REQUIRE(products.size() == 27);
  double flops = 0;
  for (const auto& p : products) {
    CHECK(p["time_s"].get<double>() > 0);
    flops += p["flops"].get<double>();
  }
  // GEMM weights 2·(4·256² + 2·256·1024) + 1000·256 = 1,828,864; 6·that·32 = 351,141,888;
  // causal attention 3·2·4·32·(64 + 64) = 98,304 per token, ·32 = 3,145,728.
  CHECK(flops == doctest::Approx(351141888.0 + 3145728.0).epsilon(1e-12));
  CHECK(j["mfu_assumed"].get<double>() == 0.5);
  bool upper_bound_said = false;
  for (const auto& n : j["notes"]) upper_bound_said |= n.get<std::string>().find("upper bound") != std::string::npos;
  CHECK(upper_bound_said);
}

TEST_CASE("calibrate text on the CPU shows the table and the MFU comparison") {
  napkin::test::TempDir dir("napkin_calibrate_text");
  const auto r = run_napkin("calibrate --model " + tiny_spec(dir) + " --device cpu --seq 16 --iters 1 --warmup 0");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("lm_head.wgrad") != std::string::npos);
  CHECK(r.out.find("measured MFU") != std::string::npos);
  CHECK(r.out.find("assumed MFU") != std::string::npos);
  CHECK(r.out.find("tokens/s per device") != std::string::npos);
  CHECK(r.out.find("FLOP/s") != std::string::npos);
  CHECK(r.out.find("TFLOP/s  ") == std::string::npos);  // no fixed-unit column of 0.000x figures
}

TEST_CASE("calibrate: missing or empty values, and a zero tensor-parallel degree") {
  const auto r = run_napkin("calibrate --dry-run");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--model") != std::string::npos);
  check_one_line_error(run_napkin("calibrate --model gpt2 --seq '' --dry-run"), "--seq: empty value; expected T");
  check_one_line_error(run_napkin("calibrate --model gpt2 --tp 0 --dry-run"), "--tp must be at least 1");
  check_one_line_error(run_napkin("calibrate --model gpt2 --warmup -1"), "--warmup");
  check_one_line_error(run_napkin("calibrate --model gpt2 --iters 1.5"), "--iters must be a whole number");
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

TEST_CASE("Ctrl-C stops a calibration: the products timed so far, marked interrupted, no totals, exit 130") {
  // gpt2 at seq 16 has 12 distinct products (the 27 of the dry run, shared shapes merged: 16x768x768
  // serves q, k, v, o and their dgrads; 16x16x64 and 16x64x16 per head, batch 12; ...). --iters 2e4
  // takes minutes (milliseconds a call with the cache flush; under the hour napkin allows up to
  // 180 ms a call), so the run is stopped while it times the first one: 16x768x768.
  const auto r = napkin::test::interrupt_when_timing(
      {"calibrate", "--model", "gpt2", "--device", "cpu", "--seq", "16", "--iters", "2e4", "--warmup", "0", "--json"}, {}, "calls");
  CAPTURE(r.err);
  CHECK(r.status == 130);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["interrupted"] == true);
  CHECK(j["distinct_products"] == 12);
  REQUIRE(j["timed"].size() == 1);
  CHECK(j["timed"][0]["m"] == 16);
  CHECK(j["timed"][0]["n"] == 768);
  CHECK(j["timed"][0]["k"] == 768);
  CHECK(j["timed"][0]["calls"].get<long long>() >= 1);
  CHECK(j["timed"][0]["products"].dump().find("\"attn.q_proj\"") != std::string::npos);
  // One call is 2·16·768·768 = 18,874,368 FLOPs: FLOP/s and the median time agree.
  CHECK(j["timed"][0]["flops_per_s"].get<double>() * j["timed"][0]["time_per_call_s"].get<double>() == doctest::Approx(18874368.0));
  // Nothing extrapolated from products never timed.
  CHECK_FALSE(j.contains("mfu"));
  CHECK_FALSE(j.contains("step_matmul_time_s"));
  CHECK(r.err.find("napkin: error: interrupted by Ctrl-C: timed 1 of the step's 12 distinct products") != std::string::npos);
  // The text says so above the table.
  const auto t = napkin::test::interrupt_when_timing(
      {"calibrate", "--model", "gpt2", "--device", "cpu", "--seq", "16", "--iters", "2e4", "--warmup", "0"}, {}, "calls");
  CHECK(t.status == 130);
  CHECK(t.out.find("INTERRUPTED (Ctrl-C): 1 of the step's 12 distinct products timed") != std::string::npos);
  CHECK(t.out.find("16x768x768") != std::string::npos);
  CHECK(t.out.find("measured MFU") == std::string::npos);
}
