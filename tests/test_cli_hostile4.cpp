// A hostile-input run of 2026-12 (extreme numbers, flag combinations, TOML and config.json edge
// cases, nccl-tests files): each answer it found wrong or unclear is a check here, through the
// real binary.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_checks.hpp"
#include "cli_helpers.hpp"

using napkin::test::CliResult;
using napkin::test::run_napkin;
using napkin::test::TempDir;

namespace {

void refused(const std::string& args, const std::string& fragment) {
  CAPTURE(args);
  napkin::test::check_one_line_error(run_napkin(args, "timeout 20"), fragment);
}

std::string source_text(const std::string& path) { return napkin::test::slurp(std::string(NAPKIN_SOURCE_DIR) + "/" + path); }

}  // namespace

TEST_CASE("a TOML spec saved with a UTF-8 byte-order mark is read, as a config.json with one is") {
  // Windows editors write one; it used to be "1:1: syntax error: non-ASCII character outside a
  // string or comment", while a config.json with the same three bytes loaded.
  const TempDir dir("napkin_bom");
  const std::string spec = (dir / "bom-llama.toml").string();
  std::ofstream(spec) << "\xEF\xBB\xBF" << source_text("models/llama3-8b.toml");
  const CliResult r = run_napkin("models show " + spec, "timeout 20");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("8030261248 exactly") != std::string::npos);
  // Hardware too, and a mark is the only non-ASCII byte let through outside a string: positions
  // after it are counted as in the file without it.
  const std::string part = (dir / "bom-card.toml").string();
  std::ofstream(part) << "\xEF\xBB\xBF" << source_text("hardware/h100-sxm.toml");
  CHECK(run_napkin("hardware show " + part, "timeout 20").exit_code == 0);
  const std::string bad = (dir / "bad.toml").string();
  std::ofstream(bad) << "\xEF\xBB\xBFname = \xC3\xA9\n";
  refused("models show " + bad, "bad.toml:1:8: syntax error: non-ASCII character outside a string or comment");
}
