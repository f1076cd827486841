#pragma once
// napkin's one exception type. Everything below main() throws it; main() turns it into
// "napkin: error: <message>" and the exit status it carries. Nothing else calls exit().
#include <stdexcept>
#include <string>

namespace napkin {

enum class ExitCode : int {
  ok = 0,
  failure = 1,    // the command ran and failed (a benchmark error, a GPU fault)
  bad_input = 2,  // a flag, a value or a spec file is wrong; the message says which
  interrupted = 130,  // stopped by Ctrl-C (128 + SIGINT, as shells report it); cli/progress.hpp
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::bad_input)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

}  // namespace napkin
