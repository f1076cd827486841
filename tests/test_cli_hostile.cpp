// Hostile input through the real binary, one class per test case: special files, size limits,
// huge counts, control characters, long arguments, parse errors, empty values. Each answer is one
// line on stderr naming what was wrong, nothing on stdout, and exit status 2: never a hang, a
// crash, an exception trace or exit 0.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "cli_helpers.hpp"

using napkin::test::CliResult;
using napkin::test::run_napkin;
using napkin::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Every hostile run is bounded: if napkin ever blocks again, the test fails in 20 s, not never.
CliResult run_bounded(const std::string& args, const std::string& env = {}) {
  return run_napkin(args, env + (env.empty() ? "" : " ") + "timeout 20");
}


const char* kCard =
    "name = \"My Card\"\nvendor = \"Me\"\nmemory_bytes = 16e9\nmemory_bandwidth_bytes_per_s = 1e12\n"
    "tensor_figures_quoted_sparse = false\nsource = \"test\"\n[dense_tflops]\nbf16 = 100\n";

std::string tiny_model(const std::string& name, const std::string& layers = "2") {
  return "name = \"" + name + "\"\nsource = \"test\"\nlayers = " + layers +
         "\nd_model = 64\nheads = 8\nd_ff = 256\nmlp = \"gelu\"\nvocab = 1000\ncontext = 128\n"
         "tied_embeddings = true\npositions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";
}

}  // namespace

TEST_CASE("special files: only regular files are read, and a FIFO is never waited on") {
  const TempDir tmp("napkin_hostile_files");
  check_one_line_error(run_bounded("train --hardware /dev/zero --params 1B --tokens 1T --gpus 1"),
                 "/dev/zero: is a character device, expected a spec file");
  check_one_line_error(run_bounded("models show /dev/zero"), "/dev/zero: is a character device");
  check_one_line_error(run_bounded("models show /dev/urandom"), "/dev/urandom: is a character device");
  check_one_line_error(run_bounded("memory --hardware /dev/stdin --gpus 8 </dev/zero"), "/dev/stdin: is a character device");
  const std::string fifo = (tmp / "fifo.toml").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  check_one_line_error(run_bounded("models show " + fifo), fifo + ": is a FIFO (named pipe)");
  check_one_line_error(run_bounded("train --model " + tmp.str() + "/ --tokens 1T --gpus 8"), ": a folder given as a model must hold a Hugging Face config.json");
  check_one_line_error(run_bounded("models show " + (tmp / "none.toml").string()), "none.toml: no such spec file");
}

TEST_CASE("size limit: a spec file over 1 MiB is refused, not read") {
  const TempDir tmp("napkin_hostile_size");
  const std::string big = (tmp / "big.toml").string();
  {
    std::ofstream f(big);
    f << tiny_model("Big") << "notes = \"" << std::string(2 << 20, 'x') << "\"\n";
  }
  check_one_line_error(run_bounded("models show " + big), big + ": larger than the 1 MiB a spec file may be");
}

TEST_CASE("spec folders: a symlink loop or a missing path is bad input naming the path") {
  const TempDir tmp("napkin_hostile_folders");
  fs::create_symlink(tmp / "b", tmp / "a");
  fs::create_symlink(tmp / "a", tmp / "b");
  const std::string loop = (tmp / "a").string();
  check_one_line_error(run_bounded("--spec " + loop + " models list"), loop + ": too many levels of symbolic links");
  check_one_line_error(run_bounded("models list", "NAPKIN_SPEC_PATH=" + loop), loop + ": too many levels of symbolic links");
  fs::create_directories(tmp / "d");
  fs::create_symlink(tmp / "d" / "y.toml", tmp / "d" / "x.toml");
  fs::create_symlink(tmp / "d" / "x.toml", tmp / "d" / "y.toml");
  check_one_line_error(run_bounded("--spec " + (tmp / "d").string() + " hardware list"), "symbolic links");
  check_one_line_error(run_bounded("--spec " + (tmp / "nowhere").string() + " hardware list"), "nowhere: no such spec file or folder");
}

TEST_CASE("lazy loading: a broken user spec does not stop an estimate that does not use it") {
  const TempDir tmp("napkin_hostile_lazy");
  std::ofstream(tmp / "my-card.toml") << kCard;
  std::ofstream(tmp / "broken.toml") << "name = \"Broken\"\nsource = \"t\"\nlayers = -1\n";
  const std::string spec = "--spec " + tmp.str() + " ";
  const auto r = run_napkin(spec + "train --params 1B --tokens 1T --gpus 1 --hardware my-card --json");
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  // Used, or listed: reported with file:line:col.
  check_one_line_error(run_napkin(spec + "models show broken"), "broken.toml:3:10: layers: must not be negative, found -1");
  check_one_line_error(run_napkin(spec + "hardware list"), "broken.toml:3:10: layers: must not be negative");
  check_one_line_error(run_napkin(spec + "models list"), "broken.toml:3:10: layers: must not be negative");
}

TEST_CASE("huge counts and peaks in a spec are refused at load time with the bound") {
  const TempDir tmp("napkin_hostile_counts");
  const std::string deep = (tmp / "deep.toml").string();
  std::ofstream(deep) << tiny_model("Deep", "9223372036854775807");
  check_one_line_error(run_bounded("train --model " + deep + " --tokens 1T --gpus 8"),
                 "deep.toml:3:10: layers: must be at most 65536, found 9223372036854775807");
  const std::string hot = (tmp / "hot.toml").string();
  std::ofstream(hot) << std::string(kCard).replace(std::string(kCard).find("bf16 = 100"), 10, "bf16 = 1e308");
  check_one_line_error(run_bounded("hardware show " + hot), "hot.toml:8:8: dense_tflops.bf16: must be at most 1e7 TFLOP/s, found 1e308");
}

TEST_CASE("control characters from arguments and spec strings are escaped in every output") {
  // An argument: ESC [2J clears the screen, ESC [31m turns it red.
  // (popen runs /bin/sh, which has no $'...': printf writes the bytes.)
  auto r = run_napkin("models show \"$(printf '\\033[2J\\033[31mX')\"");
  check_one_line_error(r, "unknown model '\\x1b[2J\\x1b[31mX'");
  CHECK(r.err.find('\x1b') == std::string::npos);
  // A newline in an argument cannot make a message two lines.
  check_one_line_error(run_napkin("hardware show \"$(printf 'a\\nb')\""), "unknown hardware 'a\\x0ab'");
  // A C1 control (U+009B, CSI on some terminals) and a right-to-left override (U+202E), in UTF-8.
  r = run_napkin("models show \"$(printf '\\302\\23331m\\342\\200\\256gpt2')\"");
  check_one_line_error(r, "\\u009b31m\\u202egpt2");
  // A spec string, on stdout: the name is shown, its escape is not executed.
  const TempDir tmp("napkin_hostile_ctrl");
  const std::string path = (tmp / "evil.toml").string();
  std::ofstream(path) << tiny_model("Evil\\u001b[2J\\u0007Model");
  r = run_napkin("models show " + path);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Evil\\x1b[2J\\x07Model") != std::string::npos);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find('\x07') == std::string::npos);
  // In JSON the string is escaped by the JSON writer, and stays exact for a program.
  r = run_napkin("models show " + path + " --json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Evil\\u001b[2J\\u0007Model") != std::string::npos);
}

TEST_CASE("a file name that is not UTF-8 still gives valid JSON") {
  // JSON strings must be UTF-8; the byte 0xFF in a spec's file name becomes U+FFFD in its key.
  const TempDir tmp("napkin_hostile_utf8");
  const std::string path = (tmp / "x\xff.toml").string();
  std::ofstream(path) << tiny_model("Tiny");
  const auto r = run_napkin("train --model '" + path + "' --tokens 1T --gpus 8 --json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["model"] == "x\xef\xbf\xbd");
  const auto shown = run_napkin("models show '" + path + "' --json");
  REQUIRE(shown.exit_code == 0);
  CHECK(nlohmann::json::parse(shown.out)["display_name"] == "Tiny");
}

TEST_CASE("long arguments are shortened when echoed") {
  const std::string huge(100000, 'x');
  const auto r = run_napkin("train --model " + huge + " --tokens 1T --gpus 8");
  check_one_line_error(r, "unknown model 'xxxx");
  CHECK(r.err.find("bytes left out") != std::string::npos);
  CHECK(r.err.size() < 1100);
}

TEST_CASE("parse errors: one line in napkin's words, naming the flag or command") {
  check_one_line_error(run_napkin("train --params 1B --tokens 1T --gpus 8 --price 1 --price 2"), "--price: given twice; give it once");
  check_one_line_error(run_napkin("train --params"), "--params: needs a value (P)");
  check_one_line_error(run_napkin("train --flops-modl 6pd"), "napkin train: unknown option '--flops-modl'; did you mean '--flops-model'?");
  check_one_line_error(run_napkin("hardware shwo"), "napkin hardware: unknown command 'shwo'; did you mean 'show'?");
  check_one_line_error(run_napkin("models bogus"), "napkin models: unknown command 'bogus' (commands: list, show");
  check_one_line_error(run_napkin("hardware"), "napkin hardware: give a command: list or show");
  check_one_line_error(run_napkin("hardware list extra"), "napkin hardware list: unexpected argument 'extra'");
  check_one_line_error(run_napkin("traim"), "unknown command 'traim'; did you mean 'train'?");
  // models show with no name says what to give.
  check_one_line_error(run_napkin("models show"), "napkin models show: give NAME (a name from 'list', or a path to a .toml spec, a config.json or a folder holding one)");
  check_one_line_error(run_napkin("hardware show"), "napkin hardware show: give NAME");
  check_one_line_error(run_napkin("bench --device cpu --json --csv"), "--json excludes --csv");
}

TEST_CASE("counts: one syntax for every count flag, integer-typed or not") {
  // --iters is an int inside bench; it reads 1e9 and 2k like --gpus does, and fails the same way.
  check_one_line_error(run_napkin("bench --iters 1e9.5"), "--iters: '1e9.5': unknown suffix '.5'");
  check_one_line_error(run_napkin("train --params 1B --tokens 1T --gpus 1e9.5"), "--gpus: '1e9.5': unknown suffix '.5'");
  check_one_line_error(run_napkin("bench --iters 1e9x"), "--iters: '1e9x': unknown suffix 'x'");
  check_one_line_error(run_napkin("bench --iters 1.5"), "--iters must be a whole number, found '1.5'");
  check_one_line_error(run_napkin("bench --iters 1e12"), "--iters must be at most 2147483647, found '1e12'");
}

TEST_CASE("an empty value is an error naming the flag, for every option of every command") {
  // Walk the binary's own help so that a new option cannot be missed.
  std::vector<std::string> todo = {""};
  std::size_t checked = 0;
  const std::regex option(R"(^\s+(?:-\w,)?(--[a-z][a-z0-9-]*) ([A-Za-z]\S*))");
  while (!todo.empty()) {
    const std::string sub = todo.back();
    todo.pop_back();
    const std::string help = run_napkin(sub + " --help").out;
    std::istringstream lines(help);
    std::string line;
    bool in_subcommands = false;
    while (std::getline(lines, line)) {
      if (line == "Subcommands:") in_subcommands = true;
      else if (line.empty() || line[0] != ' ') in_subcommands = false;
      else if (in_subcommands) todo.push_back((sub.empty() ? "" : sub + " ") + line.substr(2, line.find(' ', 2) - 2));
      std::smatch m;
      if (!in_subcommands && std::regex_search(line, m, option) && m[2] != "Excludes:") {
        const std::string flag = m[1];
        CAPTURE(sub);
        CAPTURE(flag);
        const std::string args = sub.empty() ? flag + " '' train" : sub + " " + flag + " ''";
        check_one_line_error(run_napkin(args), flag + ": empty value");
        ++checked;
      }
    }
  }
  CHECK(checked >= 40);
  check_one_line_error(run_napkin("models show ''"), "napkin models show: empty NAME");
}

TEST_CASE("a mode refuses every flag it would ignore: memory --table, bench --list-devices") {
  // Walk the command's own help so that a flag added later cannot be silently ignored either.
  // Each flag is given with a harmless value where it takes one; the refusal names it.
  auto walk = [](const std::string& command, const std::string& mode, const std::set<std::string>& applies) {
    const std::regex option(R"(^\s+(--[a-z][a-z0-9-]*)(,(--no-[a-z0-9-]+)\{false\})?( (\S+))?)");
    std::istringstream lines(run_napkin(command + " --help").out);
    std::string line;
    std::size_t refused = 0;
    while (std::getline(lines, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, option)) continue;
      std::vector<std::string> given = {m[1].str() + (m[5].matched && m[5] != "Excludes:" ? " 1" : "")};
      if (m[3].matched) given.push_back(m[3].str());
      if (applies.count(m[1].str())) continue;
      for (const auto& g : given) {
        CAPTURE(g);
        const CliResult r = run_napkin(command + " " + mode + " " + g);
        check_one_line_error(r, "does not apply to '" + command + " " + mode + "'");
        CHECK(r.err.find(g.substr(0, g.find(' '))) != std::string::npos);
        ++refused;
      }
    }
    return refused;
  };
  // memory: 22 options besides --table and --json (two of them with a --no- spelling, both tried).
  CHECK(walk("memory", "--table", {"--table", "--json"}) >= 22);
  CHECK(walk("bench", "--list-devices", {"--list-devices", "--json", "--csv"}) >= 10);
  // What does apply still works.
  CHECK(run_napkin("memory --table --json").exit_code == 0);
  CHECK(run_napkin("bench --list-devices --csv").exit_code == 0);
}

TEST_CASE("an unreadable spec folder is bad input, also when the suite runs as root") {
  // test_spec_loading.cpp covers this as an ordinary user and skips as root (root reads anything),
  // which is how CI runs. Here, as root, napkin runs as nobody (uid 65534) through setpriv against a
  // 0700 folder root owns: the real binary's answer, one line, exit 2.
  if (::geteuid() != 0) {
    MESSAGE("not root: test_spec_loading.cpp's permission test covers this");
    return;
  }
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) {
    MESSAGE("setpriv (util-linux) not found: skipped");
    return;
  }
  const TempDir tmp("napkin_hostile_unreadable");
  fs::permissions(tmp.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                                fs::perms::others_exec);
  // The build tree may sit where nobody cannot reach it: run a copy (it links only system libraries).
  const fs::path binary = tmp / "napkin";
  fs::copy_file(NAPKIN_BINARY, binary);
  fs::permissions(binary, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  const fs::path locked = tmp / "locked";
  fs::create_directories(locked);
  std::ofstream(locked / "card.toml") << kCard;
  fs::permissions(locked, fs::perms::owner_all);
  const fs::path err = tmp / "stderr.txt";
  const std::string cmd = "timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups '" + binary.string() + "' --spec '" +
                          locked.string() + "' hardware list 2>'" + err.string() + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  CliResult r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = napkin::test::slurp(err.string());
  check_one_line_error(r, locked.string() + ": cannot list the spec folder: Permission denied");
}
