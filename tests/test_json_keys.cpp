// One vocabulary across every command's --json: the same concept under the same key (hardware
// is the spec's key, the measured MFU is `mfu`, bytes held per GPU end in _bytes) and counts
// as integers, so that a script reading train's output reads bench's and infer's too.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using napkin::test::run_napkin;
using nlohmann::json;

namespace {

json run_json(const std::string& args) {
  CAPTURE(args);
  const auto r = run_napkin(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(r.out);
}

// Every key, at any depth, that names a concept another command names differently.
void check_no_drifted_keys(const json& j, const std::string& where) {
  if (j.is_array()) {
    for (const auto& e : j) check_no_drifted_keys(e, where);
    return;
  }
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    CAPTURE(where);
    CAPTURE(k);
    CHECK(k != "mfu_measured");
    CHECK(k != "seq");
    CHECK(k != "hardware_key");
    check_no_drifted_keys(*it, where);
  }
}

}  // namespace

TEST_CASE("every command gives `hardware` as the spec's key, a string") {
  const std::vector<std::string> commands = {
      "train --model llama3-8b --tokens 1T --hardware h100-sxm --gpus 64 --json",
      "memory --model llama3-8b --hardware h100-sxm --gpus 8 --zero 3 --json",
      "plan --model llama3-8b --hardware h100-sxm --gpus 64 --global-batch 512 --json",
      "infer --model llama3-8b --hardware h100-sxm --json",
      "bench --device cpu --dtype fp32 --shape 64x64x64 --iters 2 --warmup 0 --hardware h100-sxm --json",
      "bench --memory --device cpu --size 1MiB --iters 2 --hardware h100-sxm --json",
  };
  for (const auto& c : commands) {
    CAPTURE(c);
    const json j = run_json(c);
    REQUIRE(j.contains("hardware"));
    CHECK(j["hardware"].is_string());
    CHECK(j["hardware"] == "h100-sxm");
    check_no_drifted_keys(j, c);
  }
}

TEST_CASE("bench: the peak beside hardware, top-level as calibrate gives it; null hardware on a CPU without a spec") {
  const json b = run_json("bench --device cpu --dtype fp32 --shape 64x64x64 --iters 2 --warmup 0 --peak 1e12 --json");
  CHECK(b["hardware"].is_null());
  CHECK(b["peak_flops_per_s"].get<double>() == 1e12);
  CHECK(b["peak_source"].is_string());
  CHECK(b.contains("nominal_peak_flops_per_s"));
  const json m = run_json("bench --memory --device cpu --size 1MiB --iters 2 --peak-bandwidth 1TB/s --json");
  CHECK(m["hardware"].is_null());
  CHECK(m["peak_bytes_per_s"].get<double>() == 1e12);
  CHECK(m["peak_source"].is_string());
}

TEST_CASE("calibrate's measured MFU is `mfu`, as train and plan name it") {
  napkin::test::TempDir dir("napkin_json_keys_calibrate");
  const std::string spec = (dir / "tiny.toml").string();
  std::ofstream(spec) << "name = \"Tiny\"\nsource = \"test\"\nlayers = 2\nd_model = 256\nheads = 4\nd_ff = 1024\n"
                         "mlp = \"gelu\"\nvocab = 1000\ncontext = 256\ntied_embeddings = true\n"
                         "positions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";
  const json j = run_json("calibrate --model " + spec + " --device cpu --seq 32 --iters 2 --warmup 0 --json");
  REQUIRE(j.contains("mfu"));
  CHECK_FALSE(j.contains("mfu_measured"));
  // mfu = model FLOPs per token · tokens/s / peak, the definition train's --mfu measured uses.
  CHECK(j["mfu"].get<double>() ==
        doctest::Approx(j["model_flops_per_token"].get<double>() * j["tokens_per_s"].get<double>() / j["peak_flops_per_s"].get<double>())
            .epsilon(1e-9));
  check_no_drifted_keys(j, "calibrate");
}

TEST_CASE("infer: the per-GPU bytes under issue 18's contract key and its siblings, integers; the expert count is an integer") {
  const json j = run_json("infer --model llama3-8b --hardware h100-sxm --json");
  // vLLM's engine file reserves 1 GiB a GPU; llama3-8b's bf16 weights are 8,030,261,248 · 2 bytes.
  CHECK(j["reserve_bytes_per_gpu"] == 1073741824);
  CHECK(j["weights_bytes_per_gpu"] == 16060522496LL);
  CHECK(j["kv_pool_bytes_per_gpu"].is_number_integer());
  CHECK(j["workspace_bytes_per_gpu"].is_number_integer());

  const json moe = run_json("infer --model mixtral-8x7b --hardware h100-sxm --tp 2 --json");
  REQUIRE(moe.contains("moe"));
  CHECK(moe["moe"]["experts"].is_number_integer());
  CHECK(moe["moe"]["experts"] == 8);
  CHECK(moe.dump().find("\"experts\":8.0") == std::string::npos);
}
