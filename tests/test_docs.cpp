// The man page renders without warnings and documents every flag the binary accepts.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>
#include <string>

#include "cli_helpers.hpp"

using napkin::test::run_napkin;
using napkin::test::slurp;

namespace {
const std::string kManPage = NAPKIN_SOURCE_DIR "/man/napkin.1";

// Subcommand names from a help text's "Subcommands:" block.
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> out;
  const auto start = help.find("Subcommands:\n");
  if (start == std::string::npos) return out;
  std::istringstream lines(help.substr(start + 13));
  std::string line;
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    if (line.rfind("   ", 0) == 0) continue;  // a wrapped description's continuation line
    std::istringstream words(line);
    std::string name;
    words >> name;
    out.push_back(name);
  }
  return out;
}

std::set<std::string> long_flags(const std::string& help) {
  std::set<std::string> flags;
  const std::regex flag(R"((^|[\s,])(--[a-z][a-z0-9-]*))");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator(); ++it)
    flags.insert((*it)[2]);
  return flags;
}
}  // namespace

TEST_CASE("man page renders cleanly") {
  if (std::system("command -v groff >/dev/null 2>&1") != 0) {
    MESSAGE("SKIPPED: groff is not installed (.ci/install-deps.sh installs groff-base)");
    return;
  }
  const std::string cmd = "groff -man -Tutf8 -ww -z '" + kManPage + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string warnings;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) warnings += buf;
  CHECK(pclose(p) == 0);
  CHECK_MESSAGE(warnings.empty(), warnings);
}

TEST_CASE("every flag of every subcommand is in the man page") {
  const std::string man = slurp(kManPage);
  REQUIRE_FALSE(man.empty());
  // roff escapes hyphens in flags as \-; undo that before searching.
  const std::string text = std::regex_replace(man, std::regex(R"(\\-)"), "-");
  // Walk the command tree from the binary's own help, so a new command cannot be missed.
  std::vector<std::string> todo = {""};
  std::size_t seen = 0;
  while (!todo.empty()) {
    const std::string sub = todo.back();
    todo.pop_back();
    ++seen;
    const auto help = run_napkin(sub + " --help");
    REQUIRE(help.exit_code == 0);
    for (const auto& flag : long_flags(help.out)) {
      if (flag == "--help") continue;
      CAPTURE(sub);
      CHECK_MESSAGE(text.find(flag) != std::string::npos, "man page lacks " << flag);
    }
    if (!sub.empty()) CHECK_MESSAGE(text.find(sub) != std::string::npos, "man page lacks subcommand " << sub);
    for (const auto& child : subcommands(help.out)) todo.push_back(sub.empty() ? child : sub + " " + child);
  }
  CHECK(seen >= 7);  // napkin, train, hardware (+list, show), models (+list, show)
}

TEST_CASE("help: a meaningful value name for every option, and it fits the terminal") {
  // Walk every command's help, as above, with an 80-column terminal.
  std::vector<std::string> todo = {""};
  std::size_t seen = 0;
  const std::regex generic(R"(\b(TEXT|INT|UINT|FLOAT|BOOLEAN)\b)");
  while (!todo.empty()) {
    const std::string sub = todo.back();
    todo.pop_back();
    ++seen;
    CAPTURE(sub);
    const auto help = run_napkin(sub + " --help", "COLUMNS=80");
    REQUIRE(help.exit_code == 0);
    std::smatch m;
    CHECK_MESSAGE(!std::regex_search(help.out, m, generic), "a generic value name: " << m.str());
    // CLI11's leftovers: the descriptions say these in words.
    CHECK(help.out.find("Excludes:") == std::string::npos);
    CHECK(help.out.find("Needs:") == std::string::npos);
    CHECK(help.out.find("{false}") == std::string::npos);
    // napkin's own examples belong to napkin --help, not to every subcommand's.
    if (!sub.empty()) CHECK(help.out.find("See 'napkin SUBCOMMAND --help'") == std::string::npos);
    std::istringstream lines(help.out);
    std::string line;
    while (std::getline(lines, line)) {
      std::size_t columns = 0;  // code points, as a terminal counts them here
      for (const char c : line) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      CHECK_MESSAGE(columns <= 80, "wider than 80 columns: " << line);
    }
    for (const auto& child : subcommands(help.out)) todo.push_back(sub.empty() ? child : sub + " " + child);
  }
  CHECK(seen >= 7);
  // An example that does not fit wraps as the shell continues a line, so that copied it still
  // runs: " \" at the end, never a break inside a word ("bf16-" / "mixed"). At 60 columns the
  // memory example (84 wide) wraps.
  const auto narrow = run_napkin("--help", "COLUMNS=60");
  CHECK(narrow.out.find("--precision bf16-mixed") != std::string::npos);
  std::string joined;  // the examples, their continuation lines joined as the shell joins them
  {
    std::istringstream lines(narrow.out);
    std::string line;
    bool continued = false;
    while (std::getline(lines, line)) {
      const bool starts = line.rfind("  napkin ", 0) == 0;
      if (starts || continued) {
        const std::size_t text = line.find_first_not_of(' ');
        joined += continued ? ' ' : '\n';
        joined += line.substr(text);
        continued = line.size() >= 2 && line.compare(line.size() - 2, 2, " \\") == 0;
        if (continued) joined.erase(joined.size() - 2);
      }
    }
  }
  CHECK(joined.find("\nnapkin memory --hardware h100-sxm --gpus 8 --optimizer adamw --precision bf16-mixed\n") != std::string::npos);
  CHECK(joined.find("\nnapkin train --model llama3-70b --tokens 15T --hardware h100-sxm --gpus 1024\n") != std::string::npos);
  // --model takes a Hugging Face config.json too, and says so.
  CHECK(run_napkin("train --help", "COLUMNS=200").out.find("a Hugging Face config.json") != std::string::npos);
  // --wide, or output into a pipe with no COLUMNS, is never wrapped: the long option
  // description stays on one line.
  const auto wide = run_napkin("--wide memory --help", "COLUMNS=80");
  const auto piped = run_napkin("memory --help");
  for (const auto* r : {&wide, &piped}) {
    CHECK(r->out.find("--precision R               fp32, bf16, fp16, bf16-mixed, fp16-mixed, bf16-mixed-fp32-grads") !=
          std::string::npos);
  }
}

namespace {

// Runs `script` (shell source) with `shell`, returning what it prints.
std::string run_shell(const std::string& shell, const std::string& script) {
  const napkin::test::TempDir tmp("napkin_completion");
  const std::string path = (tmp / "t.sh").string();
  std::ofstream(path) << script;
  const std::string cmd = shell + " '" + path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  if (p) pclose(p);
  return out;
}

}  // namespace

TEST_CASE("shell completion: generated from the CLI, it completes commands, flags and values") {
  const napkin::test::TempDir tmp("napkin_completion_scripts");
  const auto bash = run_napkin("completion bash");
  REQUIRE(bash.exit_code == 0);
  std::ofstream(tmp / "napkin.bash") << bash.out;
  // Every long flag of every command (from the help walk's regex) is in the script.
  for (const std::string sub : {"", "train", "memory", "bench", "calibrate", "hardware show", "models list"})
    for (const auto& flag : long_flags(run_napkin(sub + " --help").out)) {
      CAPTURE(sub);
      CHECK_MESSAGE(bash.out.find(" " + flag) != std::string::npos, "completion lacks " << flag);
    }
  const std::string out = run_shell("bash", "source '" + (tmp / "napkin.bash").string() + "'\n" + R"sh(
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _napkin; echo "${COMPREPLY[*]}"; }
t napkin tr
t napkin train --flops-m
t napkin train --dtype b
t napkin hardware show h100-pc
t napkin models s
t napkin memory --zero ""
)sh");
  CHECK(out == "train\n--flops-model\nbf16\nh100-pcie\nshow\n0 1 2 3\n");
  CHECK(run_napkin("completion fish").err.find("completion: bash or zsh, not 'fish'") != std::string::npos);

  if (std::system("command -v zsh >/dev/null 2>&1") != 0) {
    MESSAGE("SKIPPED: zsh is not installed (.ci/install-deps.sh installs it): the zsh script is untested");
    return;
  }
  const auto zsh = run_napkin("completion zsh");
  REQUIRE(zsh.exit_code == 0);
  std::ofstream(tmp / "_napkin") << zsh.out;
  // zsh's completion functions, replaced by ones that print what they were given.
  const std::string zout = run_shell("zsh", R"sh(
_describe() { local items=(${(P)4}); print -r -- "${items[1]%%:*} (${#items})" }
compadd() { shift; print -r -- "$*" }
_files() { print -r -- files }
_message() { print -r -- "message: $*" }
source ')sh" + (tmp / "_napkin").string() + R"sh(' >/dev/null
t() { words=("$@"); CURRENT=${#words}; PREFIX=${words[CURRENT]}; _napkin }
t napkin hardware ''
t napkin memory --zero ''
t napkin train --gpus ''
)sh");
  CHECK(zout == "list (2)\n0 1 2 3\nmessage: N: Number of accelerators\n");
}

namespace {

// GPT-2's spec with a 5,000-character name, as `dir`/longname.toml.
std::string write_long_name_spec(const napkin::test::TempDir& dir) {
  std::string spec = slurp(NAPKIN_SOURCE_DIR "/models/gpt2.toml");
  const std::string name = "name = \"GPT-2 (124M)\"";
  REQUIRE(spec.find(name) != std::string::npos);
  spec.replace(spec.find(name), name.size(), "name = \"" + std::string(5000, 'G') + "\"");
  const std::string path = (dir / "longname.toml").string();
  std::ofstream(path) << spec;
  return path;
}

}  // namespace

TEST_CASE("tables and notes fit the terminal; --wide and pipes get them whole") {
  auto widest = [](const std::string& text) {
    std::size_t widest_line = 0, columns = 0;
    for (const char c : text) {
      if (c == '\n') widest_line = std::max(widest_line, columns), columns = 0;
      else columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }
    return std::max(widest_line, columns);
  };
  // Every table fits: headers wrap or are abbreviated, low-value columns are left out (and named),
  // wide tables print in groups of columns, a 5,000-character name is shortened in the middle.
  const napkin::test::TempDir dir("napkin_longname");
  const std::string long_name = write_long_name_spec(dir);
  for (const auto& [cmd, columns] : std::vector<std::pair<std::string, std::size_t>>{
           {"memory --table", 80}, {"models list", 80}, {"hardware show h100-sxm", 80}, {"models show deepseek-v3", 80}, {"hardware list", 80},
           {"calibrate --model llama3-70b --tp 8 --dry-run", 80}, {"bench --list-devices", 80},
           {"memory --model llama3-70b --hardware h100-sxm --gpus 1024 --tp 8 --pp 4 --zero 1 --micro-batch 1 --seq 8192 "
            "--sequence-parallel --recompute selective --explain", 80},
           {"memory --model llama3-70b --hardware h100-sxm --gpus 64 --zero 3 --precision deepspeed --offload optimizer", 80},
           {"train --model llama3-70b --hardware h100-sxm --tokens 15T --gpus 1024 --mfu predicted --global-batch 1024 --seq 8192", 80},
           // plan's table of layouts: 15 number columns (16 with --tokens, 17 for an MoE), 94 to 105 wide.
           {"plan --model llama3-70b --hardware h100-sxm --gpus 1024 --global-batch 1024 --seq 8192", 80},
           {"plan --model llama3-70b --hardware h100-sxm --gpus 1024 --global-batch 1024 --seq 8192 --tokens 15T", 80},
           {"plan --model mixtral-8x7b --hardware h100-sxm --gpus 256 --global-batch 1024 --seq 4096 --tokens 1T", 80},
           // --top 50: the breakdown is 51 columns, 880 wide.
           {"plan --model llama3-70b --hardware h100-sxm --gpus 1024 --global-batch 1024 --seq 8192 --top 50", 100},
           {"plan --model llama3-70b --hardware h100-sxm --gpus 1024 --global-batch 1024 --seq 8192 --tp 8 --pp 4 --cp 1 "
            "--micro-batch 1 --interleave 5 --sequence-parallel --recompute none --zero 1 --explain", 80},
           // bench and calibrate, timed on this machine's CPU: tiny products, few repetitions.
           {"bench --device cpu --dtype fp32 --shape 64x64x64 --iters 5 --warmup 0", 80},
           {"bench --device cpu --dtype fp32 --shape 32x32x32 --shape 64x64x64 --batch 2 --iters 5 --warmup 0", 80},
           {"calibrate --model gpt2 --device cpu --micro-batch 1 --seq 32 --iters 1 --warmup 0", 80},
           {"--spec " + long_name + " models list", 80},
           {"--spec " + long_name + " models show longname", 80},
           {"--spec " + long_name + " plan --model longname --hardware h100-sxm --gpus 64 --global-batch 64", 80}}) {
    CAPTURE(cmd);
    const auto fitted = run_napkin(cmd, "COLUMNS=" + std::to_string(columns));
    REQUIRE(fitted.exit_code == 0);
    CHECK(widest(fitted.out) <= columns);
    const bool timed = cmd.rfind("bench --device", 0) == 0 || cmd.rfind("calibrate --model gpt2", 0) == 0;
    if (timed) continue;  // a second run times again: its figures differ
    const auto wide = run_napkin("--wide " + cmd, "COLUMNS=80");
    CHECK(wide.out == run_napkin(cmd).out);  // --wide is what a pipe gets
    CHECK(widest(wide.out) > 80);            // these are wider than 80 unwrapped
  }
}

// README.md pastes what napkin prints (docs/readme-tour.py regenerates the pastes). Every
// ```console block that starts with "$ napkin ..." is run again here, as the tour script runs it
// (from the source folder, into a pipe, without COLUMNS or NAPKIN_SPEC_PATH), and must print the
// pasted text exactly. Timings aside: blocks that time products on this machine or describe it
// (bench without --dry-run, calibrate on a device, --list-devices) are only checked to exist.
TEST_CASE("the README's pasted outputs are what napkin prints") {
  const std::string readme = slurp(NAPKIN_SOURCE_DIR "/README.md");
  const std::regex block("```console\\n\\$ napkin([^\\n]*)\\n([\\s\\S]*?)```");
  int compared = 0, measured = 0;
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), block); it != std::sregex_iterator(); ++it) {
    const std::string args = (*it)[1].str();
    const std::string pasted = (*it)[2].str();
    INFO("README block: napkin" << args);
    REQUIRE(args.find_first_of("'\"\\$`|;&<>") == std::string::npos);  // plain words only, run as the shell would
    const bool timed = args.find(" bench") == 0 || (args.find(" calibrate") == 0 && args.find("--dry-run") == std::string::npos);
    if (timed) {
      ++measured;
      continue;
    }
    const auto r = run_napkin(args, "cd '" NAPKIN_SOURCE_DIR "' && env -u COLUMNS -u NAPKIN_SPEC_PATH");
    std::string printed = r.err + r.out;  // warnings first, as the tour pastes them
    while (!printed.empty() && printed.back() == '\n') printed.pop_back();
    CHECK_MESSAGE(printed + "\n" == pasted, "README.md drifted from the binary; run python3 docs/readme-tour.py");
    ++compared;
  }
  CHECK(compared >= 15);  // the tour's estimates, memory, plan, spec and error examples
  CHECK(measured >= 2);
}
