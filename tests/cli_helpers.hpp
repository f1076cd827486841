#pragma once
// Runs the built napkin binary, as a user would, and captures what it prints.
//
// Every file a test writes gets a name no other process can be using: ctest -j2 runs several test
// programs at once in one directory, and several people share /tmp. So names carry the pid and a
// per-process counter (unique_temp_path), and stderr goes to a file made by mkstemp.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace napkin::test {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A path in the temp directory that no other process or earlier call uses: <stem>_<pid>_<n>.
// Nothing is created; the caller makes a file or a folder there and removes it.
inline std::filesystem::path unique_temp_path(const std::string& stem) {
  static int counter = 0;
  return std::filesystem::temp_directory_path() /
         (stem + "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter));
}

// A folder made by unique_temp_path, removed with everything in it when the test leaves scope.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& stem) : path(unique_temp_path(stem)) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path / name; }
  std::string str() const { return path.string(); }
};

// `args` is appended to the binary's path as shell words; quote them yourself if needed.
inline CliResult run_napkin(const std::string& args, const std::string& env = {}) {
  std::string err_path = (std::filesystem::temp_directory_path() / "napkin_cli_stderr_XXXXXX").string();
  const int fd = ::mkstemp(err_path.data());
  if (fd < 0) throw std::runtime_error("run_napkin: cannot create a temporary file for stderr");
  ::close(fd);
  const std::string cmd =
      env + (env.empty() ? "" : " ") + "'" NAPKIN_BINARY "' " + args + " 2>'" + err_path + "'";
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    std::remove(err_path.c_str());
    return r;
  }
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_path);
  std::remove(err_path.c_str());
  return r;
}

}  // namespace napkin::test
