// Defects found reading napkin's answers at their edges (a count of one, a non-NVIDIA card, a
// scale-up domain a tensor-parallel group does not divide): each is a check here, through the
// real binary.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "cli_checks.hpp"
#include "cli_helpers.hpp"

using napkin::test::CliResult;
using napkin::test::run_napkin;
using napkin::test::TempDir;

namespace {

std::string source_text(const std::string& path) { return napkin::test::slurp(std::string(NAPKIN_SOURCE_DIR) + "/" + path); }

// `text` with `line` replaced by `to` (once).
std::string vllm_with(std::string text, const std::string& line, const std::string& to) {
  const std::size_t at = text.find(line);
  REQUIRE(at != std::string::npos);
  return text.replace(at, line.size(), to);
}

bool has(const std::string& text, const std::string& fragment) {
  CAPTURE(fragment);
  return text.find(fragment) != std::string::npos;
}

}  // namespace

TEST_CASE("a count of one is singular: '1 token', '1 sequence', never '1 tokens'") {
  // An engine with one-token KV blocks, one sequence and one-token prefill chunks printed "KV
  // blocks of 1 tokens, at most 1 sequences", "a chunk of 1 tokens and the logits of 1
  // sequences", "mean of the 1 steps", "1 replica(s)"; models show deepseek-v2 "1 dense layers".
  const TempDir dir("napkin_plural");
  std::string engine = source_text("engines/vllm.toml");
  engine = vllm_with(engine, "kv_block_tokens = 16", "kv_block_tokens = 1");
  engine = vllm_with(engine, "max_num_seqs = 256", "max_num_seqs = 1");
  engine = vllm_with(engine, "prefill_chunk_tokens = 2048", "prefill_chunk_tokens = 1");
  // and the H100's own limits ([large_gpu]) too
  engine = vllm_with(engine, "max_num_seqs = 1024", "max_num_seqs = 1");
  engine = vllm_with(engine, "prefill_chunk_tokens = 8192", "prefill_chunk_tokens = 1");
  const std::string spec = (dir / "one.toml").string();
  std::ofstream(spec) << engine;
  const CliResult r = run_napkin("infer --model llama3-8b --hardware h100-sxm --engine " + spec + " --input 1 --output 2 --explain", "timeout 20");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(has(r.out, "KV blocks of 1 token, at most 1 sequence, CUDA graphs"));
  CHECK(has(r.out, "a chunk of 1 token and the logits of 1 sequence\n"));
  CHECK(has(r.out, "workspace = 1 token × per-token activations + logits of 1 sequence = "));
  CHECK(has(r.out, "TPOT = mean of the 1 step = "));
  CHECK(has(r.out, "output = 1 replica × 1 × 2 tokens / ("));
  CHECK(has(r.out, "passes of at most 1 token (the engine's prefill_chunk_tokens)"));
  CHECK_FALSE(has(r.out, "1 tokens"));
  CHECK_FALSE(has(r.out, "1 sequences"));
  // Many stay plural.
  const CliResult many = run_napkin("infer --model llama3-8b --hardware h100-sxm --explain", "timeout 20");
  REQUIRE_MESSAGE(many.exit_code == 0, many.err);
  CHECK(has(many.out, "KV blocks of 16 tokens, at most 1024 sequences"));
  const CliResult shown = run_napkin("engines show " + spec, "timeout 20");
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.err);
  CHECK(has(shown.out, "KV block           1 token\n"));
  CHECK(has(shown.out, "prefill chunk      1 token\n"));
  const CliResult v2 = run_napkin("models show deepseek-v2", "timeout 20");
  REQUIRE_MESSAGE(v2.exit_code == 0, v2.err);
  CHECK(has(v2.out, "d_ff_expert 1536, 1 dense layer, routed within 3 of 8 groups\n"));
  CHECK(has(run_napkin("models show deepseek-v3", "timeout 20").out, ", 3 dense layers, router bias"));
}

TEST_CASE("infer names the engine reserve by the part's vendor, never CUDA on a TPU or a Gaudi") {
  // vLLM on tpu-v5e or gaudi3 printed "engine reserve ... CUDA graphs, NCCL and cuBLAS buffers".
  // (int4: bf16 Llama 3 8B leaves a 16 GB TPU v5e no room for a sequence, exit 1.)
  const auto line_of = [](const std::string& out, const std::string& start) {
    const std::size_t at = out.find(start);
    REQUIRE_MESSAGE(at != std::string::npos, out);
    return out.substr(at, out.find('\n', at) - at);
  };
  for (const char* hw : {"tpu-v5e", "gaudi3"}) {
    CAPTURE(hw);
    const CliResult r = run_napkin(std::string("infer --model llama3-8b --weights int4 --engine vllm --hardware ") + hw, "timeout 20");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(line_of(r.out, "  engine reserve") == "  engine reserve     1.07 GB   graphs, collective and math-library buffers");
    CHECK(has(line_of(r.out, "engine: "), ", captured graphs, "));
    CHECK_FALSE(has(r.out, "NCCL and cuBLAS"));
  }
  const CliResult amd = run_napkin("infer --model llama3-8b --engine vllm --hardware mi300x", "timeout 20");
  REQUIRE_MESSAGE(amd.exit_code == 0, amd.err);
  CHECK(line_of(amd.out, "  engine reserve") == "  engine reserve     1.07 GB   HIP graphs, RCCL and hipBLASLt buffers");
  CHECK(has(line_of(amd.out, "engine: "), ", HIP graphs, "));
  const CliResult nv = run_napkin("infer --model llama3-8b --engine vllm --hardware h100-sxm", "timeout 20");
  REQUIRE_MESSAGE(nv.exit_code == 0, nv.err);
  CHECK(line_of(nv.out, "  engine reserve") == "  engine reserve     1.07 GB   CUDA graphs, NCCL and cuBLAS buffers");
  CHECK(has(line_of(nv.out, "engine: "), ", CUDA graphs, "));
}

TEST_CASE("plan --node-gpus that tp does not divide: the straddling groups said, not passed over") {
  // --node-gpus 3 --tp 2 was accepted without a word: ranks fill domains tensor-fastest, so the
  // groups {2,3} and {8,9} of 12 ranks straddle two domains while every group is priced inside one.
  const std::string warning =
      "napkin: warning: tp 2 does not divide the 3-GPU scale-up domain: ranks fill domains tensor-fastest (Megatron's order), so 2 of the 6 "
      "tensor-parallel groups (1 of every 3) straddle two domains, yet every group is priced inside one: plan 1's tensor-parallel "
      "communication is optimistic (a tp that divides 3, or a --node-gpus that tp divides, places every group whole)\n";
  const std::string base = "plan --model llama3-8b --hardware h100-sxm --gpus 12 --global-batch 48 --top 1 ";
  const CliResult r = run_napkin(base + "--node-gpus 3 --tp 2", "timeout 60");
  CHECK(r.exit_code == 0);
  CHECK(r.err == warning);
  // Searched, not given: plan 1 takes tp 2 here too, and says the same.
  const CliResult searched = run_napkin(base + "--node-gpus 3", "timeout 60");
  CHECK(searched.exit_code == 0);
  CHECK(searched.err == warning);
  // A domain tp divides: no word.
  const CliResult whole = run_napkin(base + "--node-gpus 4 --tp 2", "timeout 60");
  CHECK(whole.exit_code == 0);
  CHECK(whole.err.empty());
}
