#pragma once
// napkin bench --memory results as text, JSON ({device, hardware, bytes_per_s, mbu, kernels})
// and CSV (one row per kernel).
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

#include "bench/result.hpp"

namespace napkin {

std::string memory_bench_text(const bench::MemoryBenchRun& run, std::size_t max_width = 0);
nlohmann::json memory_bench_json(const bench::MemoryBenchRun& run);
std::string memory_bench_csv(const bench::MemoryBenchRun& run);

}  // namespace napkin
