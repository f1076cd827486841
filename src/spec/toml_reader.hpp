#pragma once
// A strict reader over one TOML table: every read names its key, every error points at
// file:line:col, and finish() rejects keys nobody read (with a did-you-mean).
#include <toml++/toml.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace napkin {

enum class QuantityKind { count, bytes };

// The inclusive range a spec value must lie in. Every number a spec gives is bounded, so a typo
// or a hostile file (bf16 = 1e308, layers = 9223372036854775807) is an error at file:line:col,
// not an inf, a 300-digit figure or a loop that never ends. Bounds sit far outside every real
// accelerator and model (largest shipped spec in brackets) and keep every product napkin forms
// finite in a double; the error states the bound.
struct IntRange {
  long long min = 1;
  long long max = 1LL << 24;  // 16777216: a default for any count without its own bound
};
struct QuantityRange {
  double min = 1e-12;
  double max = 1e18;
  const char* unit = "";  // named in the error after the bound: "bytes", "TFLOP/s"
};

namespace bounds {
inline constexpr long long kLayers = 1LL << 16;    // 65536 (126: llama3.1-405b)
inline constexpr long long kWidth = 1LL << 20;     // d_model, head_dim, MLA ranks (16384: llama3.1-405b's d_model)
inline constexpr long long kFfn = 1LL << 22;       // d_ff, d_ff_expert (53248: llama3.1-405b)
inline constexpr long long kHeads = 1LL << 16;     // heads, kv_heads (128)
inline constexpr long long kVocab = 1LL << 24;     // 16777216 (152064: qwen2.5-7b)
inline constexpr long long kContext = 1LL << 30;   // 1073741824 tokens (163840: deepseek-v3)
inline constexpr long long kExperts = 1LL << 16;   // routed or shared experts (256: deepseek-v3)
// Hardware, per device: 1 MB to 1 PB of memory (192 GB: b200), 1 MB/s to 100 PB/s (8 TB/s:
// b200), 1 MFLOP/s to 10 EFLOP/s per dtype (10 PFLOP/s: gb200 fp4), 0.1 W to 1 MW (1.2 kW).
inline constexpr QuantityRange kMemoryBytes{1e6, 1e15, "bytes"};
inline constexpr QuantityRange kBandwidthBytesPerS{1e6, 1e17, "bytes/s"};
inline constexpr QuantityRange kPeakTflops{1e-6, 1e7, "TFLOP/s"};
inline constexpr QuantityRange kWatts{0.1, 1e6, "W"};
}  // namespace bounds

class TomlReader {
 public:
  TomlReader(const toml::table& table, std::string path, std::string prefix = {});

  std::string required_string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  bool required_bool(std::string_view key);
  std::optional<bool> optional_bool(std::string_view key);
  // A positive integer (layer counts, widths), at most `max`.
  long long required_positive_int(std::string_view key, long long max = IntRange{}.max);
  std::optional<long long> optional_positive_int(std::string_view key, long long max = IntRange{}.max);
  std::optional<long long> optional_nonnegative_int(std::string_view key, long long max = IntRange{}.max);
  // An integer in `range`.
  std::optional<long long> optional_int(std::string_view key, IntRange range);
  // A finite number in `range`: a TOML integer or float, or a string with units ("80GB",
  // "32GiB", "70B").
  double required_quantity(std::string_view key, QuantityKind kind, QuantityRange range = {});
  std::optional<double> optional_quantity(std::string_view key, QuantityKind kind, QuantityRange range = {});
  // Non-empty strings; a key given as anything but an array of them is an error.
  std::vector<std::string> optional_string_array(std::string_view key);
  // Integers in `range`; a key given as anything but an array of them is an error.
  std::vector<long long> optional_int_array(std::string_view key, IntRange range);
  // One of `choices`; anything else is an error listing them.
  std::string required_choice(std::string_view key, const std::vector<std::string>& choices);
  std::optional<std::string> optional_choice(std::string_view key, const std::vector<std::string>& choices);
  const toml::table* optional_table(std::string_view key);
  // Every key of the table, for tables whose keys are data (dtype -> figure).
  std::vector<std::string> keys() const;

  // Throws on the first key that no call above asked for.
  void finish() const;

  [[noreturn]] void fail(const toml::node* node, std::string_view key, const std::string& message) const;
  const std::string& path() const { return path_; }

 private:
  const toml::node* find(std::string_view key);
  std::string full_key(std::string_view key) const;

  const toml::table& table_;
  std::string path_;
  std::string prefix_;
  std::set<std::string, std::less<>> read_;
};

// Parse a whole document; a syntax error becomes Error("file:line:col: message").
toml::table parse_toml(std::string_view text, const std::string& display_path);

}  // namespace napkin
