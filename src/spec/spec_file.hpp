#pragma once
// Reading a spec file safely. A spec path comes from the user (--model, --hardware, --spec,
// NAPKIN_SPEC_PATH), so it may name anything: a FIFO that blocks forever, /dev/zero or
// /dev/urandom that never end, a folder, a symlink loop. Only a regular file is read, and only
// up to a size limit; anything else is an Error (exit 2) naming the path.
#include <cstddef>
#include <string>
#include <string_view>

namespace napkin {

// Spec files are a few kB; a Hugging Face config.json is a few kB too. 1 MiB is far above any
// real one and small enough to read whole.
inline constexpr std::size_t kMaxSpecFileBytes = std::size_t{1} << 20;

// The whole content of the regular file at `path`, at most `max_bytes` long. Opens without
// blocking (a FIFO is refused, not waited on) and never reads more than max_bytes + 1 bytes.
// `what` names the file in errors ("no such spec file"; --network's "nccl-tests output file").
std::string read_spec_file(const std::string& path, std::size_t max_bytes = kMaxSpecFileBytes, std::string_view what = "spec file");

}  // namespace napkin
