#pragma once
// napkin bench results as a text table, JSON (one object: device, hardware, results) and CSV.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

#include "bench/result.hpp"

namespace napkin {

// Measured times: "812.3 us", "1.104 ms", "2.310 s".
std::string format_duration_short(double s);
std::string bench_text(const bench::BenchRun& run, std::size_t max_width = 0);
// The "device" object of bench and calibrate JSON: {backend, name, description}.
nlohmann::json device_json(const std::string& backend, const std::string& name, const std::string& description);
nlohmann::json bench_json(const bench::BenchRun& run);
std::string bench_csv(const bench::BenchRun& run);

}  // namespace napkin
