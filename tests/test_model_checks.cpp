// core/model_checks: one structural check for a Model however it arrives (issue 16, class 3).
// Unit cases on hand-built models, then both front doors through the real binary: a config.json
// and a napkin TOML spec with the same contradiction get the same refusal, naming file and field.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>

#include "cli_checks.hpp"
#include "cli_helpers.hpp"
#include "core/model_checks.hpp"

using napkin::Model;
using napkin::model_problem;
using napkin::test::CliResult;
using napkin::test::run_napkin;
using napkin::test::slurp;
using napkin::test::TempDir;

namespace {

// Llama-3-8B's shape (meta-llama/Meta-Llama-3-8B config.json): 32 layers, 32 heads of 128, 8 KV heads.
Model llama() {
  Model m;
  m.layers = 32, m.d_model = 4096, m.heads = 32, m.kv_heads = 8, m.head_dim = 128, m.d_ff = 14336;
  m.vocab = 128256, m.context = 8192, m.positions = napkin::Positions::rotary, m.mlp = napkin::MlpKind::swiglu;
  return m;
}

std::string field_of(const Model& m) {
  const auto p = model_problem(m);
  return p ? p->field + ": " + p->message : "";
}


// A config from tests/data/hf with `change` applied, written to `dir`/config.json.
std::string changed_config(const TempDir& tmp, const std::string& name, const nlohmann::json& change) {
  auto j = nlohmann::json::parse(slurp(std::string(NAPKIN_SOURCE_DIR) + "/tests/data/hf/" + name + "/config.json"));
  j.merge_patch(change);
  const std::string dir = (tmp / name).string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << j.dump(2);
  return dir;
}

}  // namespace

TEST_CASE("model_problem: a consistent model has none") { CHECK(field_of(llama()).empty()); }

TEST_CASE("model_problem: each contradiction names the field a TOML spec spells") {
  Model m = llama();
  m.kv_heads = 5;  // 32 heads in groups of 5: no
  CHECK(field_of(m) == "kv_heads: must divide heads (32), found 5");
  m = llama();
  m.seq_len = 100000;  // issue 16: seq_len 100000 with context 8192
  CHECK(field_of(m) == "seq_len: exceeds context (8192): the positions support no longer sequence");
  m = llama();
  m.sliding_window = 4096, m.windowed_layers = 100;  // issue 16: 100 sliding layers of 32
  CHECK(field_of(m) == "sliding_window_layers: exceeds layers (32)");
  m = llama();
  m.windowed_layers = 4;
  CHECK(field_of(m) == "sliding_window_layers: given without sliding_window");
  m = llama();
  m.rotary_fraction = 1e-320;  // issue 16: rotary_pct 1e-320
  CHECK(field_of(m).rfind("rotary_fraction: 1e-320 of head_dim 128 rotates fewer than 2 dimensions", 0) == 0);
  m.rotary_fraction = 2.0 / 128;  // one pair: the least a rotary embedding rotates
  CHECK(field_of(m).empty());
  m.rotary_fraction = 1.5;
  CHECK(field_of(m) == "rotary_fraction: must lie in (0, 1]");
  m = llama();
  m.moe = napkin::MoeSpec{8, 9, 0, 14336, 0};  // issue 16: Mixtral top-k 9 of 8 experts
  CHECK(field_of(m) == "moe.experts_per_token: exceeds experts (8)");
  m.moe = napkin::MoeSpec{8, 2, 0, 14336, 32};
  CHECK(field_of(m) == "moe.dense_layers: must be fewer than layers (32)");
  m = llama();
  m.mla = napkin::MlaSpec{1536, 512, 128, 64, 128};  // DeepSeek-V3's ranks
  CHECK(field_of(m).rfind("kv_heads: contradicts [mla]", 0) == 0);  // 8 KV heads beside latent attention
  m.kv_heads = m.heads;
  CHECK(field_of(m).empty());
  m = llama();
  m.linear_attention = napkin::LinearAttentionSpec{24, 16, 32, 128, 128, 4};  // Qwen3-Next's Gated DeltaNet
  CHECK(field_of(m).empty());
  m.linear_attention->layers = 40;
  CHECK(field_of(m) == "linear_attention.layers: exceeds layers (32)");
  m.linear_attention = napkin::LinearAttentionSpec{24, 16, 24, 128, 128, 4};
  CHECK(field_of(m).rfind("linear_attention.value_heads: must be a multiple of key_heads (16)", 0) == 0);
}

TEST_CASE("config.json: the contradictions the TOML loader refuses are refused here too, at the key's line and column") {
  const TempDir tmp("napkin_model_checks_hf");
  // Mixtral 8x7B with top-k 9: printed "active 52.34B of total 46.70B" before.
  const std::string mixtral = changed_config(tmp, "dolphin-2.5-mixtral-8x7b", {{"num_experts_per_tok", 9}});
  for (const std::string& cmd : {"models show " + mixtral, "models import " + mixtral, "train --model " + mixtral + " --tokens 1T --gpus 8"})
    check_one_line_error(run_napkin(cmd), "config.json:16:3: moe.experts_per_token (from num_experts_per_tok): exceeds experts (8) (mixtral)");
  // layer_types names one attention kind per layer (transformers' layer_type_validation).
  const std::string types = changed_config(tmp, "mistral-7b-kamila",
                                           {{"sliding_window", 4096}, {"layer_types", std::vector<std::string>(100, "sliding_attention")}});
  check_one_line_error(run_napkin("models import " + types), "config.json:12:3: layer_types: lists 100 layers; num_hidden_layers is 32");
  // GPT-NeoX rotary_pct 1e-320: a denormal, accepted before and written to a spec the loader refused.
  const std::string neox = changed_config(tmp, "redpajama-incite-7b-base", {{"rotary_pct", 1e-320}});
  check_one_line_error(run_napkin("models import " + neox), "config.json:18:3: rotary_fraction (from rotary_pct): 1e-320 of head_dim 128");
}

TEST_CASE("config.json: Qwen2 with use_sliding_window and max_window_layers 0 windows every layer") {
  // Qwen2Config (transformers, configuration_qwen2.py) makes layer i "sliding_attention" when
  // use_sliding_window and i >= max_window_layers: with 0, all 48 layers.
  const TempDir tmp("napkin_model_checks_qwen");
  const std::string qwen = changed_config(tmp, "cogito-v1-preview-qwen-14b", {{"use_sliding_window", true}, {"max_window_layers", 0},
                                                                                {"sliding_window", 4096}});
  const auto r = run_napkin("models show " + qwen + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["sliding_window"] == 4096);
  CHECK(j["windowed_layers"] == 48);
  // max_window_layers 40 of 48: layers 40..47 windowed.
  const std::string part = changed_config(tmp, "cogito-v1-preview-qwen-14b", {{"use_sliding_window", true}, {"max_window_layers", 40},
                                                                                {"sliding_window", 4096}});
  const auto p = run_napkin("models show " + part + " --json");
  REQUIRE_MESSAGE(p.exit_code == 0, p.err);
  CHECK(nlohmann::json::parse(p.out)["windowed_layers"] == 8);
  // use_sliding_window with sliding_window null: Qwen2Config's layer_types are all full_attention.
  const std::string none = changed_config(tmp, "cogito-v1-preview-qwen-14b", {{"use_sliding_window", true}, {"sliding_window", nullptr}});
  const auto n = run_napkin("models show " + none + " --json");
  REQUIRE_MESSAGE(n.exit_code == 0, n.err);
  CHECK(nlohmann::json::parse(n.out)["sliding_window"].is_null());
}

TEST_CASE("TOML: contradictions load no more silently, at the key's line and column") {
  const TempDir tmp("napkin_model_checks_toml");
  const std::string base =
      "name = \"T\"\nsource = \"test\"\nlayers = 2\nd_model = 64\nheads = 4\nd_ff = 128\nmlp = \"gelu\"\nvocab = 1000\n"
      "context = 8192\ntied_embeddings = true\npositions = \"rotary\"\nbias = \"none\"\nnorm = \"rmsnorm\"\n";
  const std::string long_seq = (tmp / "seq.toml").string();
  std::ofstream(long_seq) << base + "seq_len = 100000\nseq_len_source = \"test\"\n";
  check_one_line_error(run_napkin("models show " + long_seq), "seq.toml:14:11: seq_len: exceeds context (8192)");
  const std::string mla = (tmp / "mla.toml").string();
  std::ofstream(mla) << base + "kv_heads = 2\n[mla]\nq_lora_rank = 0\nkv_lora_rank = 32\nqk_nope_head_dim = 16\n"
                               "qk_rope_head_dim = 8\nv_head_dim = 16\n";
  check_one_line_error(run_napkin("models show " + mla), "mla.toml:14:12: kv_heads: has no meaning beside [mla]");
  const std::string rot = (tmp / "rot.toml").string();
  std::ofstream(rot) << base + "rotary_fraction = 0.01\n";  // 0.16 of head_dim 16's dimensions
  check_one_line_error(run_napkin("models show " + rot), "rot.toml:14:19: rotary_fraction: 0.01 of head_dim 16 rotates fewer than 2");
  const std::string lin = (tmp / "lin.toml").string();
  const std::string la = "[linear_attention]\nlayers = 1\nkey_heads = 2\nvalue_heads = 4\nkey_head_dim = 16\nvalue_head_dim = 16\nconv_kernel = 4\n";
  std::ofstream(lin) << base + la;
  CHECK(run_napkin("models show " + lin).exit_code == 0);
  std::ofstream(lin) << base + la + "state = 3\n";  // an unknown key in the table
  check_one_line_error(run_napkin("models show " + lin), "lin.toml:21:1: linear_attention.state");
  std::ofstream(lin, std::ios::trunc) << base + "[linear_attention]\nlayers = 3\nkey_heads = 2\nvalue_heads = 4\nkey_head_dim = 16\nvalue_head_dim = 16\nconv_kernel = 4\n";
  check_one_line_error(run_napkin("models show " + lin), "lin.toml:15:10: linear_attention.layers: exceeds layers (2)");
}
