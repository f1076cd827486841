#pragma once
// A pass over a TOML document before toml++ sees it, for a defect of the toml++ that Debian 12
// ships (3.3.0): its Unicode whitespace test reaches __builtin_unreachable() for many non-ASCII
// code points (U+00A1..U+0499 and others), which is undefined behaviour in a release build
// (marzer/tomlplusplus#190 and #295, fixed upstream by #305 after 3.3.0; napkin's fuzzer found it).
// toml++ asks that question only outside strings and comments, and inside a multi-line basic
// string right after a backslash. TOML 1.0 allows non-ASCII text only inside strings and comments,
// so a non-ASCII character elsewhere is a syntax error anyway; this pass reports it first, with
// the file:line:col, and refuses the one valid form toml++ would mishandle (a non-ASCII
// character as the first one after a line-ending backslash).
//
// It also bounds nesting (issue 16, class 1): a key of more than kMaxTomlDepth dotted parts, or
// arrays and inline tables nested deeper, is refused before toml++ builds (and later frees, one
// stack frame per level) a structure that deep.
#include <string>
#include <string_view>

namespace napkin {

inline constexpr int kMaxTomlDepth = 64;

// Throws Error("file:line:col: syntax error: ...") for the inputs above; otherwise does nothing.
void guard_toml_text(std::string_view text, const std::string& display_path);

}  // namespace napkin
