#pragma once
// Numbers as people read them: SI prefixes, significant digits, human durations.
#include <string>
#include <string_view>

namespace napkin {

// 1234.5 -> "1.234 k" style, with `unit` appended ("FLOP/s", "B", "W"). The prefix is picked per
// value, from q (1e-30) to Q (1e30): 0.0009595 TFLOP/s is "959.5 MFLOP/s" when given in FLOP/s,
// 6.8e28 FLOP/s is "68.06 RFLOP/s"; beyond Q it is scientific ("6.806e34 FLOP/s").
std::string format_si(double value, std::string_view unit, int significant_digits = 4);
// IEC binary prefixes for memory sizes: 85899345920 -> "80.00 GiB".
std::string format_iec_bytes(double bytes, int significant_digits = 4);
// Model-world counts: params and tokens, "70.55B", "15.00T", "124.4M".
std::string format_count(double value, int significant_digits = 4);
// A number with `significant_digits`, no prefix: 0.4512 -> "0.4512", 1979 -> "1979".
std::string format_sig(double value, int significant_digits = 4);
// Scientific for FLOP totals: 6.3e24 -> "6.300e24".
std::string format_sci(double value, int significant_digits = 4);
// 3.5 days -> "3 days 12 hours"; 400 days -> "1.1 years (400 days)".
std::string format_duration(double seconds);
// A latency: "18.4 ms", "12.5 s" from 10 s, format_duration's "1 day 0 h" past a minute.
std::string format_latency(double seconds);
// "1 GPU", "8 GPUs", "1 layer": a count and its noun, singular for exactly one.
std::string plural(long long n, std::string_view noun);
// The same for a count format_count writes: "1 token", "8.192K tokens".
std::string plural_count(double n, std::string_view noun);
// A fraction as a percentage with `significant_digits`: 0.4512 -> "45.1%", 2e-5 -> "0.00200%",
// 3.26e10 -> "3.26e12%"; with `sign`, "+" before a non-negative one.
std::string format_percent(double fraction, int significant_digits = 3, bool sign = false);

// The magnitudes a report prints with a prefix: q (1e-30) up to 999.9 Q (1e33).
inline constexpr double kMinPrintable = 1e-30;
inline constexpr double kMaxPrintable = 1e33;
// `value` when a report can print it (finite, and zero or a magnitude in [kMinPrintable,
// kMaxPrintable]); otherwise an Error naming the input it came from, for answers that overflow or
// underflow: checked_result(gpus, "the GPU count", "--days 1e-300") throws
// "--days 1e-300: the GPU count (1.47e305) is too large to print; check the input".
double checked_result(double value, std::string_view result, std::string_view input);

}  // namespace napkin
