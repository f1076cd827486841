// Depth bombs for every parser napkin runs on a user's file (issue 16, classes 1 and 11): a
// config.json, a napkin TOML model, hardware or engine spec, and calibrate's JSON read back by plan.
// A value nested 100,000 levels deep (a 200 kB file, under every size cap) once overflowed the
// stack (SIGSEGV) while napkin built the error message. Each is refused through the real binary
// in one line naming the file and the depth bound, with exit status 2: never a crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "cli_helpers.hpp"

using napkin::test::CliResult;
using napkin::test::run_napkin;
using napkin::test::TempDir;

namespace {

constexpr int kBombDepth = 100000;

// Bounded, so a hang fails in 20 s rather than never.
CliResult run_bounded(const std::string& args) { return run_napkin(args, "timeout 20"); }

void check_refused(const CliResult& r, const std::string& file, const std::string& fragment) {
  check_one_line_error(r, fragment);  // a signal or a timeout would be exit -1 or 124
  CHECK(r.err.size() < 1024);  // the bomb is never quoted back whole
  CHECK(r.err.find(file) != std::string::npos);
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// A Llama config.json with one more key holding `bomb`.
std::string llama_config_with(const std::string& bomb) {
  return R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
             "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 256, "x": )" +
         bomb + "}";
}

const char* kModelToml =
    "name = \"Tiny\"\nsource = \"test\"\nlayers = 2\nd_model = 64\nheads = 4\nd_ff = 128\nmlp = \"gelu\"\n"
    "vocab = 1000\ncontext = 256\ntied_embeddings = true\npositions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";

}  // namespace

TEST_CASE("config.json: a depth bomb is refused by every command that reads one") {
  const TempDir tmp("napkin_depth_json");
  const std::vector<std::string> bombs = {repeat("[", kBombDepth) + repeat("]", kBombDepth),
                                          repeat("{\"a\":", kBombDepth) + "1" + repeat("}", kBombDepth),
                                          // unbalanced: the guard still stops at depth 65
                                          repeat("[", kBombDepth)};
  int i = 0;
  for (const std::string& bomb : bombs) {
    const std::string dir = (tmp / ("c" + std::to_string(++i))).string();
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/config.json") << llama_config_with(bomb);
    for (const std::string& cmd : {"models show " + dir, "models import " + dir, "models show " + dir + "/config.json --json",
                                   "train --model " + dir + " --tokens 1T --gpus 8 --hardware h100-sxm",
                                   "memory --model " + dir + " --hardware h100-sxm --gpus 8",
                                   "plan --model " + dir + " --hardware h100-sxm --gpus 8 --global-batch 64"}) {
      CAPTURE(cmd);
      check_refused(run_bounded(cmd), "config.json:2:", "JSON nested deeper than 64 levels");
    }
  }
}

TEST_CASE("config.json: 64 levels are read; the 65th is refused at its line and column") {
  const TempDir tmp("napkin_depth_json_edge");
  // The object itself is level 1, so a list 63 deep inside it is 64 levels.
  const std::string ok = (tmp / "ok.json").string();
  std::ofstream(ok) << llama_config_with(repeat("[", 63) + repeat("]", 63));
  CHECK(run_bounded("models show " + ok).exit_code == 0);
  const std::string deep = (tmp / "deep.json").string();
  std::ofstream(deep) << llama_config_with(repeat("[", 64) + repeat("]", 64));
  const auto r = run_bounded("models show " + deep);
  check_refused(r, "deep.json:2:", "nested deeper than 64");
  // Brackets inside strings do not count.
  const std::string quoted = (tmp / "quoted.json").string();
  std::ofstream(quoted) << llama_config_with("\"" + repeat("[{", kBombDepth) + "\"");
  CHECK(run_bounded("models show " + quoted).exit_code == 0);
}

TEST_CASE("config.json: a huge value is never quoted whole in an error") {
  const TempDir tmp("napkin_depth_json_long");
  const std::string f = (tmp / "long.json").string();
  // An unterminated 200 kB string: nlohmann's message quotes the token it read.
  std::ofstream(f) << R"({"model_type": "llama", "x": ")" + std::string(200000, 'a');
  check_refused(run_bounded("models show " + f), "long.json", "not valid JSON");
  const std::string t = (tmp / "type.json").string();
  std::ofstream(t) << R"({"model_type": ")" + std::string(200000, 'b') + "\"}";
  check_refused(run_bounded("models show " + t), "type.json", "model_type");
  const std::string l = (tmp / "list.json").string();
  std::string config = llama_config_with("1");
  config.replace(config.find("\"num_hidden_layers\": 2") + 21, 1, "[" + repeat("1,", 50000) + "1]");
  std::ofstream(l) << config;
  check_refused(run_bounded("models show " + l), "list.json", "num_hidden_layers: expected a whole number, found a list");
}

TEST_CASE("TOML specs: nested arrays, inline tables, dotted keys and headers are bounded") {
  const TempDir tmp("napkin_depth_toml");
  const std::vector<std::pair<std::string, std::string>> bombs = {
      {"arrays", std::string(kModelToml) + "notes = " + repeat("[", kBombDepth) + repeat("]", kBombDepth) + "\n"},
      {"inline", std::string(kModelToml) + "notes = " + repeat("{a=", kBombDepth) + "1" + repeat("}", kBombDepth) + "\n"},
      {"dotted", std::string(kModelToml) + repeat("a.", kBombDepth) + "a = 1\n"},
      {"header", std::string(kModelToml) + "[" + repeat("a.", kBombDepth) + "a]\nb = 1\n"},
      {"quoted", std::string(kModelToml) + repeat("\"a\".", kBombDepth) + "a = 1\n"}};
  for (const auto& [name, text] : bombs) {
    CAPTURE(name);
    const std::string f = (tmp / (name + ".toml")).string();
    std::ofstream(f) << text;
    for (const std::string& cmd : {"models show " + f, "train --model " + f + " --tokens 1T --gpus 8 --hardware h100-sxm",
                                   "memory --model " + f + " --hardware h100-sxm --gpus 8",
                                   "plan --model " + f + " --hardware h100-sxm --gpus 8 --global-batch 64", "hardware show " + f,
                                   "engines show " + f,
                                   "infer --model llama3-8b --hardware h100-sxm --gpus 1 --input 128 --output 16 --engine " + f}) {
      CAPTURE(cmd);
      check_refused(run_bounded(cmd), name + ".toml:14:", "than napkin reads (64)");
    }
    // The same file found in a --spec folder.
    const TempDir specs("napkin_depth_toml_folder");
    std::ofstream(specs / "bomb.toml") << text;
    check_refused(run_bounded("--spec " + specs.str() + " models show bomb"), "bomb.toml:14:", "than napkin reads (64)");
  }
  // The bound is generous: 64 parts of a dotted key still parse (and are then an unknown key).
  const std::string edge = (tmp / "edge.toml").string();
  std::ofstream(edge) << std::string(kModelToml) + repeat("a.", 63) + "a = 1\n";
  const auto r = run_bounded("models show " + edge);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("than napkin reads") == std::string::npos);
}

TEST_CASE("calibrate's JSON read back by plan --gemm-efficiency: a depth bomb is refused") {
  const TempDir tmp("napkin_depth_calibration");
  const std::string f = (tmp / "cal.json").string();
  std::ofstream(f) << R"({"products": [{"m": 8, "n": 8, "k": 8, "time_per_product_s": 1, "x": )" + repeat("[", kBombDepth) +
                          repeat("]", kBombDepth) + "}]}";
  check_refused(run_bounded("plan --model llama3-8b --hardware h100-sxm --gpus 8 --global-batch 64 --gemm-efficiency " + f), "cal.json",
                "nested deeper than 64");
}

TEST_CASE("config.json: bytes after a NUL, where the JSON parser stops, are never read as names") {
  // Found by tests/fuzz/fuzz_hf_config: a valid object, a NUL, then an escaped name holding a byte
  // that is not UTF-8. The parser ends at the NUL; the duplicate-key scan read on, decoded that name
  // and threw an exception nothing caught (terminate, SIGABRT). Now a one-line answer, never a signal.
  TempDir dir("napkin-nul-json");
  const std::string path = (dir.path / "config.json").string();
  {
    std::ofstream f(path, std::ios::binary);
    const std::string body = std::string(R"({"model_type": "llama"})") + std::string(3, '\0') + "{\"b\\u0041\xff\": 1, \"b\\u0041\xff\": 2}";
    f.write(body.data(), static_cast<std::streamsize>(body.size()));
  }
  const CliResult r = run_bounded("models show " + path);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("num_hidden_layers: missing") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
