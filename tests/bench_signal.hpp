#pragma once
// Runs napkin in a child process, waits until its progress (NAPKIN_PROGRESS=1) shows timed
// products, then sends SIGINT, as Ctrl-C would, and collects what it printed. No sleeps: the
// signal goes only once the run has started timing, so the test does not depend on speed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace napkin::test {

struct Interrupted {
  int status = -1;  // the exit status, or -1 if it did not exit normally
  std::string out, err;
};

// `env` holds NAME=VALUE pairs added to the child's environment.
// `unit` is the word the progress line counts in: bench and train say "products", calibrate "calls".
inline Interrupted interrupt_when_timing(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                                         const std::string& unit = "products") {
  Interrupted r;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return r;
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]), close(err_pipe[0]);
    setenv("NAPKIN_PROGRESS", "1", 1);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv = {const_cast<char*>("napkin")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(NAPKIN_BINARY, argv.data());
    _exit(127);
  }
  close(out_pipe[1]), close(err_pipe[1]);
  // A progress line that counts at least one timed product: "...: 1000/1000000000 products".
  auto timing = [&] {
    for (std::size_t at = 0; (at = r.err.find(" " + unit + "\n", at)) != std::string::npos; ++at) {
      const std::size_t colon = r.err.rfind(": ", at);
      if (colon != std::string::npos && std::strtoll(r.err.c_str() + colon + 2, nullptr, 10) > 0) return true;
    }
    return false;
  };
  char buf[4096];
  bool sent = false;
  while (!timing()) {
    const ssize_t n = read(err_pipe[0], buf, sizeof buf);
    if (n <= 0) break;  // it ended (or failed) before timing anything: no signal
    r.err.append(buf, static_cast<std::size_t>(n));
  }
  if (timing()) sent = kill(pid, SIGINT) == 0;
  for (ssize_t n; (n = read(out_pipe[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<std::size_t>(n));
  for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) > 0;) r.err.append(buf, static_cast<std::size_t>(n));
  close(out_pipe[0]), close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.status = sent && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace napkin::test
