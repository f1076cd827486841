#pragma once
// Long runs (bench, calibrate, train --mfu measured|calibrated, plan searches): a progress
// line on stderr, and Ctrl-C as a request to stop cleanly.
//
//   LongRun run("bench");                  // handles SIGINT until it is destroyed
//   run.show("shape 2/5 8192x8192x8192: 300/1000 products");  // redrawn in place, <= 10/s
//   if (run.interrupted()) ...             // Ctrl-C was pressed: stop, keep what was done
//   run.throw_if_interrupted("3 of 5 shapes measured");  // Error, exit status 130
//
// The line goes to stderr only when stderr is a terminal, or when NAPKIN_PROGRESS=1 asks
// for it (then one plain line per update, for logs and tests); stdout is never touched, so
// output stays parseable. After a first Ctrl-C the default action is restored: a second one
// kills the process at once. One LongRun at a time.
#include <signal.h>

#include <chrono>
#include <functional>
#include <string>

namespace napkin::cli {

class LongRun {
 public:
  explicit LongRun(std::string label);
  ~LongRun();  // clears the line, restores the previous SIGINT disposition
  LongRun(const LongRun&) = delete;
  LongRun& operator=(const LongRun&) = delete;

  // Shows "<label>: <status>". Rate-limited to 10 lines a second unless `now` is set (use it
  // for the first and the last update of a phase).
  void show(const std::string& status, bool now = false);
  bool interrupted() const;
  std::function<bool()> stop_requested() const;  // for bench::RunControl and the like
  // Throws napkin::Error("interrupted by Ctrl-C: <what>", ExitCode::interrupted) if Ctrl-C was
  // pressed; clears the line first.
  void throw_if_interrupted(const std::string& what);

 private:
  void clear();
  std::string label_;
  bool tty_ = false, forced_ = false, drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
  struct ::sigaction previous_ {};
};

}  // namespace napkin::cli
