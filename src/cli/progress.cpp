#include "cli/progress.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace napkin::cli {
namespace {

// Set by the SIGINT handler; a signal handler may only touch a volatile sig_atomic_t.
volatile std::sig_atomic_t interrupt_requested = 0;

extern "C" void on_interrupt(int) {
  interrupt_requested = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process the default way
}

}  // namespace

LongRun::LongRun(std::string label) : label_(std::move(label)) {
  tty_ = isatty(STDERR_FILENO) != 0;
  const char* env = std::getenv("NAPKIN_PROGRESS");
  forced_ = env && std::strcmp(env, "1") == 0;
  interrupt_requested = 0;
  struct ::sigaction act = {};
  act.sa_handler = on_interrupt;
  sigemptyset(&act.sa_mask);
  sigaction(SIGINT, &act, &previous_);
}

LongRun::~LongRun() {
  clear();
  sigaction(SIGINT, &previous_, nullptr);
}

void LongRun::show(const std::string& status, bool now) {
  if (!tty_ && !forced_) return;
  const auto t = std::chrono::steady_clock::now();
  if (!now && drawn_ && t - last_ < std::chrono::milliseconds(100)) return;
  last_ = t;
  const std::string line = label_ + ": " + status;
  if (tty_ && !forced_) {
    std::fprintf(stderr, "\r%s\x1b[K", line.c_str());  // redraw in place, erase what was longer
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void LongRun::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

bool LongRun::interrupted() const { return interrupt_requested != 0; }

std::function<bool()> LongRun::stop_requested() const {
  return [] { return interrupt_requested != 0; };
}

void LongRun::throw_if_interrupted(const std::string& what) {
  if (!interrupted()) return;
  clear();
  throw Error("interrupted by Ctrl-C: " + what, ExitCode::interrupted);
}

}  // namespace napkin::cli
