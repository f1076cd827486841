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
#include "spec/registry.hpp"
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
