// Every file one napkin command writes and another reads, through the real binary, never with a
// hand-written file (issue 16, classes 2 and 11): calibrate --json -> plan --gemm-efficiency, and
// models import -> models show, train, memory, plan and calibrate. Both pairs once drifted apart while each
// side's own tests passed (time_per_call_s written, time_per_product_s read; import writing
// top-k above the expert count, which the TOML loader refused).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_signal.hpp"
#include "cli_helpers.hpp"

using napkin::test::CliResult;
using napkin::test::run_napkin;
using napkin::test::slurp;
using napkin::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }

// Every Hugging Face config the suite holds (tests/data/hf/README.md says where each is from).
std::vector<fs::path> hf_configs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(NAPKIN_SOURCE_DIR) / "tests/data/hf"))
    if (e.is_regular_file() && e.path().filename() == "config.json") out.push_back(e.path().parent_path());
  std::sort(out.begin(), out.end());
  return out;
}

// A command that read the file: 0, or 1 for "does not fit" (memory, plan). 2 is a refusal of
// the file itself, the failure this test exists for.
void check_read(const CliResult& r) {
  CAPTURE(r.err);
  CHECK((r.exit_code == 0 || r.exit_code == 1));
  CHECK(r.err.find("internal error") == std::string::npos);
}

}  // namespace

TEST_CASE("calibrate --json, then plan --gemm-efficiency reads that very file") {
  const TempDir tmp("napkin_roundtrip_calibrate");
  const std::string spec = (tmp / "tiny.toml").string();
  // 2 layers, d_model 256: the 27 products time on a CPU in well under a second.
  std::ofstream(spec) << "name = \"Tiny\"\nsource = \"test\"\nlayers = 2\nd_model = 256\nheads = 4\nd_ff = 1024\n"
                         "mlp = \"gelu\"\nvocab = 1000\ncontext = 256\ntied_embeddings = true\n"
                         "positions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";
  const std::string cal = (tmp / "cal.json").string();
  const auto c = run_napkin("calibrate --model " + q(spec) + " --device cpu --seq 16 --iters 1 --warmup 0 --json > " + q(cal));
  REQUIRE_MESSAGE(c.exit_code == 0, c.err);
  const auto j = nlohmann::json::parse(slurp(cal));
  // The per-product time is the batched call's over its batch (attention: one product per head).
  bool batched = false;
  for (const auto& p : j["products"]) {
    REQUIRE(p.contains("time_per_product_s"));
    const double batch = p["batch"].get<double>();
    batched |= batch > 1;
    CHECK(p["time_per_product_s"].get<double>() == doctest::Approx(p["time_per_call_s"].get<double>() / batch).epsilon(1e-12));
  }
  CHECK(batched);  // 4 heads: the attention products come in batches of 4

  const std::string plan = "plan --model " + q(spec) + " --hardware h100-sxm --gpus 8 --global-batch 64 --seq 16 --gemm-efficiency " + q(cal);
  const auto p = run_napkin(plan);
  CAPTURE(p.err);
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("measured by calibrate (" + cal + ")") != std::string::npos);

  // A --dry-run file holds no times: plan says so, naming what to run.
  const std::string dry = (tmp / "dry.json").string();
  REQUIRE(run_napkin("calibrate --model " + q(spec) + " --seq 16 --dry-run --json > " + q(dry)).exit_code == 0);
  const auto d = run_napkin("plan --model " + q(spec) + " --hardware h100-sxm --gpus 8 --global-batch 64 --seq 16 --gemm-efficiency " + q(dry));
  CHECK(d.exit_code == 2);
  CHECK(d.err.find("has no timed products (run 'napkin calibrate' without --dry-run)") != std::string::npos);
}

TEST_CASE("a calibration a real GPU wrote (the lent H200's llama3-8b) prices plan's products") {
  // docs/bench/NVIDIA_H200/calibrate_llama3-8b.json: napkin calibrate on an H200, micro-batch 1 ×
  // 2048 tokens. Its 2048×4096×4096 product took 99.36 µs (691.6 TFLOP/s, worked from the shape);
  // plan reads the file through the real binary and prices the step's products with it.
  const std::string cal = std::string(NAPKIN_SOURCE_DIR) + "/docs/bench/NVIDIA_H200/calibrate_llama3-8b.json";
  const auto j = nlohmann::json::parse(slurp(cal));
  REQUIRE(j["device"]["name"] == "NVIDIA H200");
  bool found = false;
  for (const auto& p : j["products"])
    if (p["m"] == 2048 && p["n"] == 4096 && p["k"] == 4096) {
      found = true;
      CHECK(p["time_per_product_s"].get<double>() == doctest::Approx(2.0 * 2048 * 4096 * 4096 / 691.6e12).epsilon(1e-3));
    }
  CHECK(found);
  const std::string base = "plan --model llama3-8b --hardware h200-sxm --gpus 8 --global-batch 128 --seq 2048 --tp 1 --cp 1 --pp 1 --micro-batch 1 --json";
  const auto measured = run_napkin(base + " --gemm-efficiency " + q(cal));
  const auto curve = run_napkin(base);
  REQUIRE_MESSAGE(measured.exit_code == 0, measured.err);
  REQUIRE(curve.exit_code == 0);
  const auto m = nlohmann::json::parse(measured.out), c = nlohmann::json::parse(curve.out);
  // The hot H200 ran these shapes faster than napkin's sustained curve (a minute of 8192³): the
  // measured plan's products take less time.
  CHECK(m["plans"][0]["breakdown"]["matmul_s"].get<double>() < c["plans"][0]["breakdown"]["matmul_s"].get<double>());
}

TEST_CASE("a calibration stopped by Ctrl-C is refused by plan, saying why") {
  const TempDir tmp("napkin_roundtrip_interrupted");
  // --iters 2e4 takes minutes (an hour, the most napkin allows, only at 180 ms a call): the run is
  // stopped while it times its first product.
  const auto r = napkin::test::interrupt_when_timing(
      {"calibrate", "--model", "gpt2", "--device", "cpu", "--seq", "16", "--iters", "2e4", "--warmup", "0", "--json"}, {}, "calls");
  REQUIRE(r.status == 130);
  const std::string cal = (tmp / "stopped.json").string();
  std::ofstream(cal) << r.out;  // what the user's redirect would have kept
  const auto p = run_napkin("plan --model gpt2 --hardware h100-sxm --gpus 8 --global-batch 64 --seq 1024 --gemm-efficiency " + q(cal));
  CHECK(p.exit_code == 2);
  CHECK_MESSAGE(p.err.find("is a calibration stopped by Ctrl-C") != std::string::npos, p.err);
}

TEST_CASE("models import of every config.json: each command reads the spec it wrote, with the same counts") {
  const TempDir tmp("napkin_roundtrip_import");
  const auto configs = hf_configs();
  REQUIRE(configs.size() >= 20);
  for (const fs::path& dir : configs) {
    CAPTURE(dir);
    const std::string spec = (tmp / (dir.filename().string() + ".toml")).string();
    const auto im = run_napkin("models import " + q(dir.string()) + " > " + q(spec));
    REQUIRE_MESSAGE(im.exit_code == 0, im.err);
    // The spec says the same model as the config: every count napkin derives from either agrees.
    const auto from_config = run_napkin("models show " + q(dir.string()) + " --json");
    const auto from_spec = run_napkin("models show " + q(spec) + " --json");
    REQUIRE_MESSAGE(from_spec.exit_code == 0, from_spec.err);
    REQUIRE(from_config.exit_code == 0);
    auto a = nlohmann::json::parse(from_config.out), b = nlohmann::json::parse(from_spec.out);
    CHECK(a["params"] == b["params"]);
    for (const char* key : {"layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab", "context"}) CHECK(a[key] == b[key]);
    check_read(run_napkin("models show " + q(spec)));
    check_read(run_napkin("train --model " + q(spec) + " --tokens 1T --gpus 1024 --hardware h100-sxm"));
    check_read(run_napkin("memory --model " + q(spec) + " --hardware h100-sxm --gpus 8"));
    check_read(run_napkin("plan --model " + q(spec) + " --hardware h100-sxm --gpus 64 --global-batch 64 --seq 1024"));
    check_read(run_napkin("calibrate --model " + q(spec) + " --seq 128 --dry-run"));
  }
}
