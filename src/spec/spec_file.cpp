#include "spec/spec_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace napkin {
namespace {

// Closes the descriptor on every path out, including a throw.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string limit_text(std::size_t max_bytes) {
  if (max_bytes % (std::size_t{1} << 20) == 0) return std::to_string(max_bytes >> 20) + " MiB";
  if (max_bytes % (std::size_t{1} << 10) == 0) return std::to_string(max_bytes >> 10) + " KiB";
  return std::to_string(max_bytes) + " bytes";
}

[[noreturn]] void too_large(const std::string& path, std::size_t max_bytes, std::string_view what) {
  throw Error(path + ": larger than the " + limit_text(max_bytes) + " a " + std::string(what) + " may be");
}

}  // namespace

std::string read_spec_file(const std::string& path, std::size_t max_bytes, std::string_view what) {
  const std::string w(what);
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
  const Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw Error(path + ": no such " + w);
    if (err == ELOOP) throw Error(path + ": too many levels of symbolic links (a symlink loop?)");
    throw Error(path + ": cannot open the " + w + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw Error(path + ": cannot read the " + w + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error(path + ": is " + std::string(kind_of(st.st_mode)) + ", expected a " + w + " (a regular file)");
  if (st.st_size < 0 || static_cast<unsigned long long>(st.st_size) > max_bytes) too_large(path, max_bytes, what);

  // Read at most max_bytes + 1: a file that grew since fstat is caught, never read whole.
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size) + 1);
  std::size_t got = 0;
  while (true) {
    if (got == text.size()) {
      if (text.size() > max_bytes) too_large(path, max_bytes, what);
      text.resize(std::min(max_bytes + 1, text.size() * 2));
    }
    const ssize_t n = ::read(f.fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(path + ": cannot read the " + w + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace napkin
