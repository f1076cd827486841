#pragma once
// The model-states section of napkin memory for a LoRA/QLoRA run: the frozen base, the adapters
// with their gradients and optimizer states, the dequantisation and gather buffers; and its JSON.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/memory_report.hpp"

namespace napkin {

std::string lora_states_section(const MemoryReport& r, bool explain, std::size_t max_width);
// --explain's lines for the LoRA states (also under "explain" in --json).
std::vector<std::string> lora_states_steps(const MemoryReport& r);
nlohmann::json lora_states_json(const MemoryReport& r);

}  // namespace napkin
