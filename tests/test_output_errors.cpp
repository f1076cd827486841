// A write that fails is an error (issue 16, classes 7 and 11): stdout on a full disk (/dev/full)
// or closed exits non-zero with one line saying so, for napkin's own output and for what CLI11
// prints (help), so `napkin models import x > spec.toml` never leaves a truncated spec behind
// with exit 0.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using napkin::test::CliResult;
using napkin::test::run_napkin;

namespace {

void check_write_failed(const CliResult& r, const std::string& why) {
  CAPTURE(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("napkin: error: cannot write to standard output: " + why, 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

const std::string kConfig = std::string(NAPKIN_SOURCE_DIR) + "/tests/data/hf/llama-3.2-3b";

}  // namespace

TEST_CASE("stdout on a full disk: exit 1 and one line, for every kind of output") {
  for (const std::string& cmd : std::vector<std::string>{"models import " + kConfig, "plan --model llama3-8b --hardware h100-sxm --gpus 8 --global-batch 64 --json",
                                 "models list", "memory --model llama3-8b --hardware h100-sxm --gpus 8",
                                 "train --model llama3-8b --tokens 1T --gpus 8 --hardware h100-sxm --json", "hardware list",
                                 "completion bash"}) {
    CAPTURE(cmd);
    check_write_failed(run_napkin(cmd + " >/dev/full"), "No space left on device");
  }
}

TEST_CASE("help and version on a full disk fail too") {
  CHECK(run_napkin("--help >/dev/full").exit_code == 1);
  CHECK(run_napkin("plan --help >/dev/full").exit_code == 1);
  CHECK(run_napkin("--version >/dev/full").exit_code == 1);
}

TEST_CASE("a closed stdout: exit 1, not 0") {
  check_write_failed(run_napkin("models import " + kConfig + " >&-"), "Bad file descriptor");
  check_write_failed(run_napkin("models show llama3-8b --json >&-"), "Bad file descriptor");
}

TEST_CASE("an error already on its way keeps its own status") {
  // Bad input is exit 2 whether or not stdout works.
  CHECK(run_napkin("models show no-such-model >/dev/full").exit_code == 2);
}
