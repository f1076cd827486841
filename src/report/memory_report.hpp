#pragma once
// napkin memory: the bytes/param table, what the most loaded GPU of a layout holds, the
// activation terms and the hints when it does not fit, as text, as --explain arithmetic and as JSON.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/layout_memory.hpp"
#include "core/model.hpp"

namespace napkin {

// Every optimizer × recipe, unsharded bytes per parameter.
std::string memory_table_text(std::size_t max_width = 0);  // 0: no limit (cli::Context::columns())
nlohmann::json memory_table_json();

struct MemoryReport {
  Hardware hardware;
  MemoryBasis basis = MemoryBasis::datasheet;
  MemorySetup setup;
  Layout layout;
  std::optional<Model> model;
  std::optional<double> params;  // the model's count or --params; absent: bytes/param only
  LayoutMemory memory;
  std::vector<FitHint> hints;           // when it does not fit
  std::optional<LargestLever> lever;    // the one flag that raises the largest model most
  std::optional<long long> max_micro_batch;
  std::string reserve_text;             // as typed; empty when not given
  std::vector<std::string> notes;       // defaults the CLI filled in
  std::vector<std::string> assumptions;  // memory_assumptions
  std::vector<std::string> warnings;
};

std::string memory_text(const MemoryReport& r, bool explain, std::size_t max_width = 0);
// The arithmetic --explain shows inside the text, one string per step, for --json --explain
// (under "explain", as train does).
std::vector<std::string> memory_explain_steps(const MemoryReport& r);
nlohmann::json memory_json(const MemoryReport& r);

// What napkin memory does not count; printed in text, JSON and docs.
const std::vector<std::string>& memory_left_out();

// Bytes as a JSON integer: sizes are counts of bytes (issue 11: counts are integers in JSON).
nlohmann::json json_bytes(double bytes);

}  // namespace napkin
