// Units: what people type in, and what napkin prints back.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/units.hpp"
#include "report/format.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

using namespace napkin;

TEST_CASE("counts accept the suffixes people write") {
  CHECK(parse_count("70B", "x") == doctest::Approx(70e9));
  CHECK(parse_count("70e9", "x") == doctest::Approx(70e9));
  CHECK(parse_count("15T", "x") == doctest::Approx(15e12));
  CHECK(parse_count("1.5e12", "x") == doctest::Approx(1.5e12));
  CHECK(parse_count("124M", "x") == doctest::Approx(124e6));
  CHECK(parse_count("8k", "x") == doctest::Approx(8000));
  CHECK(parse_count("8K", "x") == doctest::Approx(8000));
  CHECK(parse_count("2G", "x") == doctest::Approx(2e9));
  CHECK(parse_count("1e24", "x") == doctest::Approx(1e24));
  CHECK(parse_count(" 1024 ", "x") == 1024);
}

TEST_CASE("bytes: decimal and binary prefixes") {
  CHECK(parse_bytes("80GB", "x") == doctest::Approx(80e9));
  CHECK(parse_bytes("80G", "x") == doctest::Approx(80e9));
  CHECK(parse_bytes("80GiB", "x") == doctest::Approx(80.0 * 1024 * 1024 * 1024));  // 85,899,345,920
  CHECK(parse_bytes("512MiB", "x") == doctest::Approx(512.0 * 1024 * 1024));
  CHECK(parse_bytes("32Gi", "x") == doctest::Approx(32.0 * 1024 * 1024 * 1024));
  CHECK(parse_bytes("1.5e9", "x") == doctest::Approx(1.5e9));
  CHECK(parse_bytes("4096", "x") == 4096);
}

TEST_CASE("fractions") {
  CHECK(parse_fraction("0.45", "--mfu") == doctest::Approx(0.45));
  CHECK(parse_fraction("45%", "--mfu") == doctest::Approx(0.45));
  CHECK(parse_fraction("1", "--mfu") == 1);
  CHECK_THROWS_AS(parse_fraction("0", "--mfu"), Error);
  CHECK_THROWS_AS(parse_fraction("1.5", "--mfu"), Error);
  CHECK_THROWS_AS(parse_fraction("-0.1", "--mfu"), Error);
}

TEST_CASE("malformed values name the flag and never yield inf or nan") {
  for (const char* bad : {"", "abc", "70X", "70BB", "inf", "nan", "1e400", "-5", "--1", "1.2.3", "B"}) {
    CAPTURE(bad);
    try {
      const double v = parse_count(bad, "--tokens");
      FAIL("accepted '" << bad << "' as " << v);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("--tokens") != std::string::npos);
      CHECK(e.code() == ExitCode::bad_input);
    }
  }
  CHECK_THROWS_AS(parse_bytes("80Gb", "--reserve"), Error);  // bits are not bytes
  CHECK_THROWS_AS(parse_bytes("80XiB", "--reserve"), Error);
  CHECK_THROWS_AS(parse_bytes("80i", "--reserve"), Error);
  CHECK_THROWS_AS(parse_count("1e308T", "--tokens"), Error);  // overflows once scaled
}

TEST_CASE("SI formatting keeps four significant digits") {
  CHECK(format_si(989.5e12, "FLOP/s") == "989.5 TFLOP/s");
  CHECK(format_si(506.624e15, "FLOP/s") == "506.6 PFLOP/s");
  CHECK(format_si(80e9, "B") == "80.00 GB");
  CHECK(format_si(999.96e3, "B") == "1.000 MB");  // rounding carries into the next prefix
  CHECK(format_si(12, "W") == "12.00 W");
  CHECK(format_iec_bytes(80.0 * 1024 * 1024 * 1024) == "80.00 GiB");
  CHECK(format_count(70.553706496e9) == "70.55B");
  CHECK(format_count(15e12) == "15.00T");
  CHECK(format_count(124439808) == "124.4M");
  CHECK(format_count(512) == "512");
  CHECK(format_sig(0.45123, 3) == "0.451");
  CHECK(format_sig(1024, 4) == "1024");
  CHECK(format_sig(989.5, 4) == "989.5");
  CHECK(format_sci(6.3e24, 4) == "6.300e24");
  CHECK(format_sci(1.5e-3, 2) == "1.5e-3");
  CHECK(format_si(std::nan(""), "B") == "n/a");
}

TEST_CASE("durations read like a person would say them") {
  CHECK(format_duration(30) == "30 s");
  CHECK(format_duration(90) == "1 min 30 s");
  CHECK(format_duration(3 * 3600 + 15 * 60) == "3 h 15 min");
  CHECK(format_duration(143.9266 * 86400) == "143 days 22 h");  // 0.9266 day = 22.2 h
  CHECK(format_duration(2 * 365.25 * 86400) == "2 years (730.5 days)");
}

TEST_CASE("latencies: milliseconds, seconds from 10 s, a duration past a minute") {
  CHECK(format_latency(0.0184) == "18.4 ms");
  CHECK(format_latency(9.836) == "9836 ms");  // under 10 s: still milliseconds
  CHECK(format_latency(12.54) == "12.5 s");
  CHECK(format_latency(88264) == "1 day 1 h");  // 24.52 h, rounded to the hour: 25 h
}

TEST_CASE("printable escapes control characters and keeps UTF-8 text") {
  CHECK(printable("plain · × ² text\n") == "plain · × ² text\n");
  CHECK(printable("\x1b[2J\x07") == "\\x1b[2J\\x07");
  CHECK(printable("a\nb", false) == "a\\x0ab");
  CHECK(printable("tab\there\r") == "tab\\x09here\\x0d");
  CHECK(printable("\x7f") == "\\x7f");
  CHECK(printable("\xc2\x9b" "31m") == "\\u009b31m");        // U+009B, a C1 CSI
  CHECK(printable("\xe2\x80\xae" "abc") == "\\u202eabc");     // right-to-left override
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");                // not UTF-8
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");                // overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");       // a surrogate
  CHECK(printable("\xe2\x82") == "\\xe2\\x82");                // cut short
  CHECK(printable("\xf0\x9f\x99\x82") == "\xf0\x9f\x99\x82");  // U+1F642 is printable
}

TEST_CASE("shorten_middle keeps head and tail, cuts between characters") {
  CHECK(shorten_middle("short", 10) == "short");
  CHECK(shorten_middle(std::string(100, 'x'), 20) == std::string(10, 'x') + " … (80 bytes left out) … " + std::string(10, 'x'));
  // "·" is two bytes; a cut never splits it.
  const std::string dots = "··········";  // 10 × 2 bytes
  // max 10: the head would end at byte 5, inside the third "·", so it stops at 4; the tail
  // would start at byte 15, inside the eighth, so it starts at 14.
  CHECK(shorten_middle(dots, 10) == "··" " … (10 bytes left out) … " "···");
  // Not UTF-8 (stray continuation bytes): the cut still lands within 3 bytes of the mark.
  const std::string stray(100, '\x99');
  CHECK(shorten_middle(stray, 20).size() <= 20 + std::string(" … (80 bytes left out) … ").size());
  CHECK(display_width("a·b×c") == 5);
}

TEST_CASE("SI prefixes are picked per value, over the whole SI range") {
  CHECK(format_si(6.80556e28, "FLOP/s") == "68.06 RFLOP/s");  // never "68055.6 YFLOP/s"
  CHECK(format_si(999.96e24, "FLOP") == "1.000 RFLOP");        // rounding carries across Y -> R
  CHECK(format_si(2.5e30, "FLOP") == "2.500 QFLOP");
  CHECK(format_si(6.8e34, "FLOP/s") == "6.800e34 FLOP/s");     // beyond Q: scientific
  CHECK(format_si(9.595e8, "FLOP/s") == "959.5 MFLOP/s");      // the CPU calibrate figure, in FLOP/s
  CHECK(format_si(0.0009595, "s") == "959.5 µs");
  CHECK(format_si(0.5, "s") == "500.0 ms");
  CHECK(format_si(1e-31, "s") == "1.000e-31 s");
  CHECK(format_si(-2500, "W") == "-2.500 kW");
  CHECK(format_si(0, "B") == "0 B");
  CHECK(format_si(1000, "B") == "1.000 kB");  // an exact power lands on its own prefix
  CHECK(format_si(1e15, "B") == "1.000 PB");
  CHECK(format_iec_bytes(1024.0 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024) == "1.000 ZiB");
  CHECK(format_count(2.5e21) == "2.500e21");  // beyond E: scientific, not "2500E"
  CHECK(format_count(0.5) == "0.5000");
}

TEST_CASE("percentages have significant digits, not a fixed point") {
  CHECK(format_percent(0.4512) == "45.1%");
  CHECK(format_percent(0.00002) == "0.00200%");  // "MFU 0.0%" for a non-zero value, no more
  CHECK(format_percent(32644517021.82, 3, true) == "+3.26e12%");  // not "+3264451702182.0%"
  CHECK(format_percent(-0.052, 3, true) == "-5.20%");
  CHECK(format_percent(0.5, 3, true) == "+50%");
  CHECK(format_percent(std::nan("")) == "n/a");
}

TEST_CASE("results that overflow or underflow what can be printed name the input") {
  CHECK(checked_result(1024, "the GPU count", "--days 30") == 1024);
  CHECK(checked_result(0, "the cost", "--price 0") == 0);
  CHECK(checked_result(1e33, "x", "y") == 1e33);
  CHECK(checked_result(-1e-30, "x", "y") == -1e-30);
  auto message = [](double v) {
    try {
      checked_result(v, "the GPU count", "--days 1e-300");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(1.47381e305) == "--days 1e-300: the GPU count (1.47e305) is too large to print; check the input");
  CHECK(message(3e-301) == "--days 1e-300: the GPU count (3.00e-301) is too small to print; check the input");
  CHECK(message(HUGE_VAL) == "--days 1e-300: the GPU count overflows; check the input");
  CHECK(message(std::nan("")) == "--days 1e-300: the GPU count is not a number; check the input");
}

TEST_CASE("wrap_lines wraps only over-long lines, keeps aligned spaces, hangs continuations") {
  // Width 20: the first line fits and is kept as is; the second (25 columns) breaks before "ccc",
  // its run of 3 spaces kept, and its continuation starts 2 + 2 columns in.
  CHECK(wrap_lines("short   line\n  aa   bb   cc ccc ddd eee", 20) == "short   line\n  aa   bb   cc ccc\n    ddd eee\n");
  CHECK(wrap_lines("x y z", 0) == "x y z\n");                         // 0: no limit
  CHECK(wrap_lines("a·b·c d·e·f", 6) == "a·b·c\n  d·e·f\n");          // "·" is one column
  CHECK(wrap_lines("averyveryverylongword", 5) == "averyveryverylongword\n");  // a word is never cut
}

TEST_CASE("wrap_words breaks at spaces and cuts only words wider than the line") {
  CHECK(wrap_words("one two three four", 9) == std::vector<std::string>{"one two", "three", "four"});
  CHECK(wrap_words("a·b c·d", 3) == std::vector<std::string>{"a·b", "c·d"});  // "·" is one column
  CHECK(wrap_words("abcdefghij", 4) == std::vector<std::string>{"abcd", "efgh", "ij"});
  CHECK(wrap_words("keep\nlines", 0) == std::vector<std::string>{"keep", "lines"});
  CHECK(wrap_words("", 10) == std::vector<std::string>{""});
}

TEST_CASE("a table wider than the terminal wraps its text columns, never its numbers") {
  Table t;
  t.header = {"recipe", "bytes/param", "what it holds"};
  t.align = {Align::left, Align::right, Align::left};
  t.add({"adamw bf16-mixed", "16.00", "bf16 weights and gradients, fp32 master weights and two fp32 moments"});
  t.add({"sgd fp32", "4.00", "fp32 weights"});
  const std::string wide = t.render();  // no limit: one line per row
  CHECK(wide.find("two fp32 moments\n") != std::string::npos);
  t.max_width = 60;
  const std::string narrow = t.render();
  // 2 indent + 16 + 2 + 11 + 2 = 33 columns before the text column, so it gets 60 - 33 = 27.
  CHECK(narrow ==
        "  recipe            bytes/param  what it holds\n"
        "  ----------------  -----------  ---------------------------\n"
        "  adamw bf16-mixed        16.00  bf16 weights and gradients,\n"
        "                                 fp32 master weights and two\n"
        "                                 fp32 moments\n"
        "  sgd fp32                 4.00  fp32 weights\n");
  for (std::size_t i = 0, n = 0; i < narrow.size(); i = n + 1) {
    n = narrow.find('\n', i);
    CHECK(display_width(std::string_view(narrow).substr(i, n - i)) <= 60);
  }
  // Only numbers: printed wide rather than cut.
  Table numbers;
  numbers.align = {Align::right, Align::right};
  numbers.add({"123456789012345", "123456789012345"});
  numbers.max_width = 10;
  CHECK(numbers.render() == "  123456789012345  123456789012345\n");
}

TEST_CASE("wrapping breaks after inner hyphens, and headers wider than their numbers wrap first") {
  CHECK(wrap_words("bf16-mixed-fp32-grads", 11) == std::vector<std::string>{"bf16-mixed-", "fp32-grads"});
  CHECK(wrap_words("--no-dropout -5", 8) == std::vector<std::string>{"--no-", "dropout", "-5"});  // leading hyphens stay
  CHECK(longest_piece("bf16-mixed-fp32-grads") == 6);  // "mixed-"
  // 30 columns less the 8 of the indent leave 22 for the text.
  CHECK(wrap_paragraph("one two three four five six seven eight nine ten eleven", 30, "  note: ", "        ") ==
        "  note: one two three four\n        five six seven eight\n        nine ten eleven\n");
  Table t;
  t.header = {"optimizer", "fp32", "bf16-mixed-fp32-grads"};
  t.align = {Align::left, Align::right, Align::right};
  t.add({"adamw", "16", "18"});
  t.max_width = 30;
  // 2 + 9 + 2 + 4 + 2 + 21 = 40 columns: the last header gives the 10 over, 21 -> 11 (it could
  // give down to its longest part, "mixed-", 6), and wraps at a hyphen.
  CHECK(t.render() ==
        "  optimizer  fp32  bf16-mixed-\n"
        "                    fp32-grads\n"
        "  ---------  ----  -----------\n"
        "  adamw        16           18\n");
  // 20: a grid needs 25 even with the header wrapped to "mixed-"; each row as "header  value"
  // lines, the headers wrapped into the 11 columns the values leave, fits.
  t.max_width = 20;
  CHECK(t.render() ==
        "  optimizer    adamw\n"
        "  fp32         16\n"
        "  bf16-mixed-  18\n"
        "  fp32-grads\n");
}

TEST_CASE("a table too wide for the terminal: abbreviated headers, then columns left out, groups, stacks") {
  Table t;
  t.header = {"name", "tokens/s", "HFU", "memory/GPU"};
  t.align = {Align::left, Align::right, Align::right, Align::right};
  t.short_header = {"", "tok/s", "", "mem"};
  t.drop_rank = {0, 0, 1, 0};
  t.add({"a", "1.2 M", "57.0%", "63.9 GB"});
  // 2 + 4 + 2 + 8 + 2 + 5 + 2 + 10 = 35 columns; with the short headers 2 + 4 + 2 + 5 + 2 + 5 + 2 + 7 = 29.
  t.max_width = 30;
  CHECK(t.render() ==
        "  name  tok/s    HFU      mem\n"
        "  ----  -----  -----  -------\n"
        "  a     1.2 M  57.0%  63.9 GB\n");
  // 24: HFU (rank 1) is left out, 22 columns, and a note says so.
  t.max_width = 24;
  const std::string dropped = t.render();
  CHECK(dropped.rfind("  name  tok/s      mem\n  ----  -----  -------\n  a     1.2 M  63.9 GB\n  (left out to fit 24", 0) == 0);
  CHECK(dropped.find("HFU") != std::string::npos);
  // 21: nothing more may go; the row stacks under the full headers (2 + 10 + 2 + 7 = 21).
  t.max_width = 21;
  CHECK(t.render() ==
        "  name        a\n"
        "  tokens/s    1.2 M\n"
        "  HFU         57.0%\n"
        "  memory/GPU  63.9 GB\n");
  // split_columns: plans side by side, as many as fit, each group after the first column.
  Table plans;
  plans.header = {"term", "plan 1", "plan 2", "plan 3"};
  plans.align = {Align::left, Align::right, Align::right, Align::right};
  plans.split_columns = true;
  plans.add({"compute", "1.000 s", "2.000 s", "3.000 s"});
  plans.max_width = 20;  // 2 + 7 + 2 + 7 = 18: one plan a group
  CHECK(plans.render() ==
        "  term      plan 1\n  -------  -------\n  compute  1.000 s\n\n"
        "  term      plan 2\n  -------  -------\n  compute  2.000 s\n\n"
        "  term      plan 3\n  -------  -------\n  compute  3.000 s\n");
  // A 5,000-character name is shortened in the middle, and the table fits.
  Table names;
  names.header = {"name", "layers"};
  names.align = {Align::left, Align::right};
  names.add({std::string(5000, 'G'), "12"});
  names.max_width = 80;
  const std::string shortened = names.render();
  CHECK(shortened.find("bytes left out") != std::string::npos);
  for (std::size_t i = 0, n = 0; i < shortened.size(); i = n + 1) {
    n = shortened.find('\n', i);
    CHECK(display_width(std::string_view(shortened).substr(i, n - i)) <= 80);
  }
  CHECK(wrap_lines(std::string(5000, 'G'), 80).size() < 200);
}
