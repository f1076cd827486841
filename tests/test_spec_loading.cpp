// Spec files as the user hands them over: only regular files are read, with a size limit, and a
// registry parses only the specs a command asks for, yet still reports a broken one when used.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_helpers.hpp"
#include "core/error.hpp"
#include "spec/hf_config.hpp"
#include "spec/registry.hpp"
#include "spec/spec_loader.hpp"
#include "spec/toml_reader.hpp"
#include "spec/spec_file.hpp"

using namespace napkin;
namespace fs = std::filesystem;

namespace {

const char* kTinyModel =
    "name = \"Tiny\"\nsource = \"a test\"\nlayers = 2\nd_model = 64\nheads = 8\nd_ff = 256\nmlp = \"gelu\"\n"
    "vocab = 1000\ncontext = 128\ntied_embeddings = true\npositions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";
const char* kCard =
    "name = \"My Card\"\nvendor = \"Me\"\nmemory_bytes = 16e9\nmemory_bandwidth_bytes_per_s = 1e12\n"
    "tensor_figures_quoted_sparse = false\nsource = \"test\"\n[dense_tflops]\nbf16 = 100\n";

std::string error_of_read(const std::string& path, std::size_t max_bytes = kMaxSpecFileBytes) {
  try {
    read_spec_file(path, max_bytes);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  FAIL("no error reading " << path);
  return {};
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  FAIL("no error");
  return {};
}

}  // namespace

TEST_CASE("read_spec_file reads regular files only") {
  const test::TempDir tmp("napkin_spec_files");
  std::ofstream(tmp / "ok.toml") << "a = 1\n";
  CHECK(read_spec_file((tmp / "ok.toml").string()) == "a = 1\n");
  std::ofstream(tmp / "empty.toml").flush();
  CHECK(read_spec_file((tmp / "empty.toml").string()).empty());

  // A FIFO with no writer: refused at once (opening it for reading would block forever).
  const std::string fifo = (tmp / "fifo.toml").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of_read(fifo) == fifo + ": is a FIFO (named pipe), expected a spec file (a regular file)");
  // Devices that never end, or never start.
  CHECK(error_of_read("/dev/zero") == "/dev/zero: is a character device, expected a spec file (a regular file)");
  CHECK(error_of_read("/dev/urandom").find("/dev/urandom: is a character device") == 0);
  CHECK(error_of_read(tmp.str()) == tmp.str() + ": is a folder, expected a spec file (a regular file)");
  CHECK(error_of_read((tmp / "missing.toml").string()) == (tmp / "missing.toml").string() + ": no such spec file");

  // A symlink loop.
  fs::create_symlink(tmp / "b.toml", tmp / "a.toml");
  fs::create_symlink(tmp / "a.toml", tmp / "b.toml");
  CHECK(error_of_read((tmp / "a.toml").string()).find("a.toml: too many levels of symbolic links") != std::string::npos);
}

TEST_CASE("read_spec_file stops at the size limit") {
  const test::TempDir tmp("napkin_spec_size");
  const std::string path = (tmp / "big.toml").string();
  std::ofstream(path) << std::string(100, '#');
  CHECK(read_spec_file(path, 100).size() == 100);  // exactly the limit is fine
  CHECK(error_of_read(path, 99) == path + ": larger than the 99 bytes a spec file may be");
  // The default: 1 MiB = 1048576 bytes; one byte more is refused.
  std::ofstream(path) << std::string(kMaxSpecFileBytes + 1, '#');
  CHECK(error_of_read(path) == path + ": larger than the 1 MiB a spec file may be");
}

TEST_CASE("the registry parses only what is asked for, and reports a broken spec when it is used") {
  const test::TempDir tmp("napkin_spec_lazy");
  std::ofstream(tmp / "tiny.toml") << kTinyModel;
  std::ofstream(tmp / "my-card.toml") << kCard;
  std::ofstream(tmp / "broken.toml") << "name = \"Broken\"\nsource = \"t\"\nlayers = -1\n";
  const SpecRegistry specs = SpecRegistry::load({tmp.str()});
  // broken.toml is never read by these.
  CHECK(specs.model("tiny").layers == 2);
  CHECK(specs.hardware("my-card").name == "My Card");
  CHECK(specs.model("llama3-8b").layers == 32);
  // Used by name: its own error, with file:line:col.
  const std::string broken = (tmp / "broken.toml").string();
  CHECK(error_of([&] { specs.model("broken"); }) == broken + ":3:10: layers: must not be negative, found -1");
  // Listing reads every file, so it reports the broken one too.
  CHECK(error_of([&] { specs.all_models(); }) == broken + ":3:10: layers: must not be negative, found -1");
  CHECK(error_of([&] { specs.all_hardware(); }) == broken + ":3:10: layers: must not be negative, found -1");
  // A mistyped name still gets suggestions from user files.
  CHECK(error_of([&] { specs.model("tinny"); }).find("did you mean 'tiny'") != std::string::npos);
}

TEST_CASE("a user spec of the other kind does not hide a built-in one of the same name") {
  const test::TempDir tmp("napkin_spec_kinds");
  std::ofstream(tmp / "h100-sxm.toml") << kTinyModel;  // a model called h100-sxm
  const SpecRegistry specs = SpecRegistry::load({tmp.str()});
  CHECK(specs.model("h100-sxm").d_model == 64);
  CHECK(specs.hardware("h100-sxm").name.find("H100") != std::string::npos);
  CHECK(specs.all_models().count("h100-sxm") == 1);
  CHECK(specs.all_hardware().count("h100-sxm") == 1);
}

TEST_CASE("a spec folder with a symlink loop, a FIFO or no read permission") {
  const test::TempDir tmp("napkin_spec_folders");
  // --spec naming a symlink loop itself.
  fs::create_symlink(tmp / "loop2", tmp / "loop1");
  fs::create_symlink(tmp / "loop1", tmp / "loop2");
  const std::string loop = (tmp / "loop1").string();
  CHECK(error_of([&] { SpecRegistry::load({loop}); }) == loop + ": too many levels of symbolic links (a symlink loop?)");

  // A folder holding a looping x.toml: reported when the folder is indexed.
  fs::create_directories(tmp / "d");
  fs::create_symlink(tmp / "d" / "y.toml", tmp / "d" / "x.toml");
  fs::create_symlink(tmp / "d" / "x.toml", tmp / "d" / "y.toml");
  CHECK(error_of([&] { SpecRegistry::load({(tmp / "d").string()}); }).find("symbolic links") != std::string::npos);

  // A FIFO in a folder: indexed by name, refused when used or listed, never waited on.
  fs::create_directories(tmp / "f");
  REQUIRE(::mkfifo((tmp / "f" / "pipe.toml").c_str(), 0600) == 0);
  const SpecRegistry specs = SpecRegistry::load({(tmp / "f").string()});
  CHECK(specs.model("gpt2").layers == 12);
  CHECK(error_of([&] { specs.model("pipe"); }).find("pipe.toml: is a FIFO") != std::string::npos);
  CHECK(error_of([&] { specs.all_models(); }).find("pipe.toml: is a FIFO") != std::string::npos);

  fs::create_directories(tmp / "closed");
  fs::permissions(tmp / "closed", fs::perms::none);
  if (::geteuid() == 0) {
    MESSAGE("running as root, which reads any folder: the unreadable-folder check is skipped");
  } else {
    const std::string closed = (tmp / "closed").string();
    CHECK(error_of([&] { SpecRegistry::load({closed}); }) ==
          closed + ": cannot list the spec folder: Permission denied");
  }
  fs::permissions(tmp / "closed", fs::perms::owner_all);
}

namespace {

const char* kCardFull = R"(name = "Test Card"
vendor = "Acme"
memory_bytes = 24e9
memory_bandwidth_bytes_per_s = 1e12
tdp_watts = 300
tensor_figures_quoted_sparse = true
source = "made up for a test"
device_names = ["Acme Test Card"]
notes = "n"

[dense_tflops]
bf16 = 100
)";

const char* kMoeModel = R"(name = "Tiny MoE"
source = "a test"
layers = 4
d_model = 64
heads = 8
d_ff = 256
mlp = "swiglu"
vocab = 1000
context = 128
tied_embeddings = false
positions = "rotary"
bias = "none"
norm = "rmsnorm"

[moe]
experts = 8
experts_per_token = 2
d_ff_expert = 128
dense_layers = 1
)";

std::string with(std::string s, const std::string& from, const std::string& to) {
  const auto i = s.find(from);
  REQUIRE(i != std::string::npos);
  return s.replace(i, from.size(), to);
}

std::string spec_error(const std::string& text) {
  return error_of([&] { parse_spec(text, "x.toml", "x"); });
}

}  // namespace

TEST_CASE("good specs for the bounds tests load") {
  CHECK(std::get<Hardware>(parse_spec(kCardFull, "x.toml", "x")).dense_peak(Dtype::bf16).value() == 100e12);
  CHECK(std::get<Model>(parse_spec(kMoeModel, "x.toml", "x")).moe->experts == 8);
}

TEST_CASE("hardware values out of range: file:line:col, the bound and what was found") {
  // bf16 sits on line 12, column 8, of kCardFull.
  CHECK(spec_error(with(kCardFull, "bf16 = 100", "bf16 = 1e308")) ==
        "x.toml:12:8: dense_tflops.bf16: must be at most 1e7 TFLOP/s, found 1e308");
  CHECK(spec_error(with(kCardFull, "bf16 = 100", "bf16 = inf")) ==
        "x.toml:12:8: dense_tflops.bf16: must be a finite number, found inf");
  CHECK(spec_error(with(kCardFull, "bf16 = 100", "bf16 = nan")) ==
        "x.toml:12:8: dense_tflops.bf16: must be a finite number, found nan");
  CHECK(spec_error(with(kCardFull, "bf16 = 100", "bf16 = 1e-300")) ==
        "x.toml:12:8: dense_tflops.bf16: must be at least 1e-6 TFLOP/s, found 1e-300");
  CHECK(spec_error(with(kCardFull, "memory_bytes = 24e9", "memory_bytes = 1e308")) ==
        "x.toml:3:16: memory_bytes: must be at most 1e15 bytes, found 1e308");
  CHECK(spec_error(with(kCardFull, "memory_bytes = 24e9", "memory_bytes = \"1e300GB\"")) ==
        "x.toml:3:16: memory_bytes: '1e300GB' overflows");
  CHECK(spec_error(with(kCardFull, "memory_bytes = 24e9", "memory_bytes = \"1e10GB\"")) ==
        "x.toml:3:16: memory_bytes: must be at most 1e15 bytes, found 1e19");
  CHECK(spec_error(with(kCardFull, "memory_bytes = 24e9", "memory_bytes = -inf")) ==
        "x.toml:3:16: memory_bytes: must be a finite number, found -inf");
  CHECK(spec_error(with(kCardFull, "memory_bandwidth_bytes_per_s = 1e12", "memory_bandwidth_bytes_per_s = 1e18")) ==
        "x.toml:4:32: memory_bandwidth_bytes_per_s: must be at most 1e17 bytes/s, found 1e18");
  CHECK(spec_error(with(kCardFull, "tdp_watts = 300", "tdp_watts = 1e9")) ==
        "x.toml:5:13: tdp_watts: must be at most 1e6 W, found 1e9");
  // An empty [dense_tflops] table.
  CHECK(spec_error(with(kCardFull, "bf16 = 100\n", "")).find(
            "dense_tflops: lists no dtype; give at least one (bf16 = 989.5)") != std::string::npos);
}

TEST_CASE("hardware strings: never empty, device_names an array of non-empty strings") {
  CHECK(spec_error(with(kCardFull, "name = \"Test Card\"", "name = \"\"")) == "x.toml:1:8: name: must not be empty");
  CHECK(spec_error(with(kCardFull, "notes = \"n\"", "notes = \"\"")) == "x.toml:9:9: notes: must not be empty");
  CHECK(spec_error(with(kCardFull, "name = \"Test Card\"", "name = 5")) ==
        "x.toml:1:8: name: expected a string, found an integer");
  CHECK(spec_error(with(kCardFull, "[\"Acme Test Card\"]", "\"Acme Test Card\"")) ==
        "x.toml:8:16: device_names: expected an array of strings, found a string");
  CHECK(spec_error(with(kCardFull, "[\"Acme Test Card\"]", "[\"A\", 3]")) ==
        "x.toml:8:22: device_names: expected strings only, found an integer");
  CHECK(spec_error(with(kCardFull, "[\"Acme Test Card\"]", "[\"\"]")) ==
        "x.toml:8:17: device_names: must not hold an empty string");
}

TEST_CASE("model counts out of range: every count has a bound, stated in the error") {
  // layers is on line 3, column 10; d_model on line 4, column 11.
  CHECK(spec_error(with(kMoeModel, "layers = 4", "layers = 9223372036854775807")) ==
        "x.toml:3:10: layers: must be at most 65536, found 9223372036854775807");
  CHECK(spec_error(with(kMoeModel, "layers = 4", "layers = -9223372036854775808")) ==
        "x.toml:3:10: layers: must not be negative, found -9223372036854775808");
  CHECK(spec_error(with(kMoeModel, "d_model = 64", "d_model = 2147483648")) ==
        "x.toml:4:11: d_model: must be at most 1048576, found 2147483648");
  CHECK(spec_error(with(kMoeModel, "heads = 8", "heads = 65537")).find("heads: must be at most 65536") != std::string::npos);
  CHECK(spec_error(with(kMoeModel, "d_ff = 256", "d_ff = 4194305")).find("d_ff: must be at most 4194304") != std::string::npos);
  CHECK(spec_error(with(kMoeModel, "vocab = 1000", "vocab = 16777217")).find("vocab: must be at most 16777216") != std::string::npos);
  CHECK(spec_error(with(kMoeModel, "context = 128", "context = 1073741825")).find("context: must be at most 1073741824") != std::string::npos);
  CHECK(spec_error(with(kMoeModel, "experts = 8", "experts = 65537")).find("moe.experts: must be at most 65536") != std::string::npos);
  CHECK(spec_error(with(kMoeModel, "d_ff_expert = 128", "d_ff_expert = 1e3")).find("moe.d_ff_expert: expected an integer, found a number") != std::string::npos);
  CHECK(spec_error(with(kMoeModel, "context = 128", "context = inf")).find("context: expected an integer, found a number") != std::string::npos);
  // At the bound itself it loads.
  CHECK(std::get<Model>(parse_spec(with(kMoeModel, "layers = 4", "layers = 65536"), "x.toml", "x")).layers == 65536);
}

TEST_CASE("model structure: moe a table, top-k within experts, dense layers fewer than layers") {
  CHECK(spec_error(with(kMoeModel, "[moe]\nexperts = 8\nexperts_per_token = 2\nd_ff_expert = 128\ndense_layers = 1\n", "moe = 3\n")) ==
        "x.toml:15:7: moe: expected a table, found an integer");
  CHECK(spec_error(with(kMoeModel, "experts_per_token = 2", "experts_per_token = 9")) ==
        "x.toml:17:21: moe.experts_per_token: exceeds experts (8)");
  CHECK(spec_error(with(kMoeModel, "dense_layers = 1", "dense_layers = 4")) ==
        "x.toml:19:16: moe.dense_layers: must be fewer than layers (4)");
  CHECK(spec_error(with(kMoeModel, "name = \"Tiny MoE\"", "name = \"\"")) == "x.toml:1:8: name: must not be empty");
  CHECK(spec_error(with(kMoeModel, "mlp = \"swiglu\"", "mlp = \"\"")) == "x.toml:7:7: mlp: must not be empty");
  CHECK(spec_error(with(kMoeModel, "source = \"a test\"", "source = [\"a\"]")) ==
        "x.toml:2:10: source: expected a string, found an array");
}

TEST_CASE("non-ASCII text: fine in strings and comments, a syntax error elsewhere (toml++ 3.3.0 guard)") {
  // Accepted: UTF-8 in a comment and in strings, including multi-line ones.
  const std::string good = with(kCardFull, "name = \"Test Card\"", "# Über · card\nname = \"Test · Card ®\"");
  CHECK(std::get<Hardware>(parse_spec(good, "x.toml", "x")).name == "Test · Card ®");
  const std::string ml = with(kCardFull, "notes = \"n\"", "notes = \"\"\"line one ·\nline § two\"\"\"");
  CHECK(std::get<Hardware>(parse_spec(ml, "x.toml", "x")).notes == "line one ·\nline § two");
  // Only notes may span lines: a line break in a name would forge a line of the report.
  CHECK(spec_error(with(kCardFull, "name = \"Test Card\"", "name = \"Card\\n  verdict fits\"")) ==
        "x.toml:1:8: name: a line break in a one-line text; only notes may span lines");
  // Refused with file:line:col before toml++ 3.3.0 reaches __builtin_unreachable()
  // (marzer/tomlplusplus#295: the two bytes CC AA, U+032A).
  CHECK(spec_error("\xcc\xaa") == "x.toml:1:1: syntax error: non-ASCII character outside a string or comment");
  CHECK(spec_error("name = \"a\" \xc2\xa7\n") == "x.toml:1:12: syntax error: non-ASCII character outside a string or comment");
  // marzer/tomlplusplus#190: a line-ending backslash, then U+00A7 first on the next line.
  CHECK(spec_error("s = \"\"\"\\\n\xc2\xa7\"\"\"\n").find(
            "x.toml:2:1: syntax error: a non-ASCII character right after a line-ending backslash") == 0);
  // Found by fuzz_spec: after `+` toml++ reads `"NVI…` as a bare value, not a string, and tests
  // U+FEFD for whitespace. A quote opens a string only where a key or value starts.
  CHECK(spec_error("m2 =+\"NVI\xef\xbb\xbd" "A10o\n") == "x.toml:1:10: syntax error: non-ASCII character outside a string or comment");
  // Found by the long fuzzing run: after `2.` (a value, not a dotted key) the quote is not a string.
  CHECK(spec_error("tes = 2...\".tf\xcd\x99\"\n") == "x.toml:1:15: syntax error: non-ASCII character outside a string or comment");
  // And inside a bare token (`+z[["NV…`) brackets and quotes are part of the token.
  CHECK(spec_error("me =+z[[\"NV\xef\xbb\xaf\n") == "x.toml:1:12: syntax error: non-ASCII character outside a string or comment");
  // Dotted keys, table headers and arrays of tables still take quoted non-ASCII keys.
  CHECK(error_of([] { parse_toml("a.\"\xc3\xa9\" = 1\n[t.\"\xc3\xa9\"]\n[[u.\"\xc3\xa9\"]]\nv = { w.\"\xc3\xa9\" = [\"\xc3\xa9\"] }\n", "x.toml"); throw Error("parsed"); }) == "parsed");
  CHECK(spec_error("s = \"\"\"\\\xc2\xa7\"\"\"\n") == "x.toml:1:9: syntax error: non-ASCII character after a backslash in a multi-line string");
}

TEST_CASE("config.json: a number too large for a double is bad input, not a leaked exception") {
  // Found by tests/fuzz/fuzz_hf_config: nlohmann throws out_of_range (not parse_error) for it.
  CHECK(error_of([] { import_hf_config("{\"model_type\": \"llama\", \"bos_token_id\": 1e3081}", "m/config.json", "m"); }) ==
        "m/config.json:1:41: not valid JSON for napkin (number overflow parsing '1e3081')");
}
