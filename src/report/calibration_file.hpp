#pragma once
// The one home of the file `napkin calibrate --json` writes and `napkin plan --gemm-efficiency
// FILE` reads: the key names, the writer of its products list and the reader, side by side, so
// the two sides cannot drift apart again (issue 16, class 2: calibrate wrote time_per_call_s and
// plan read time_per_product_s, so a real calibration file was refused). The round trip through
// the binary is tests/test_roundtrip.cpp.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/calibration.hpp"
#include "core/gemm_time.hpp"
#include "core/step_gemms.hpp"

namespace napkin::calibration_file {

inline constexpr const char* kProducts = "products";
// One product of the shape (one member of a batched call): what plan's GEMM model prices.
inline constexpr const char* kTimePerProduct = "time_per_product_s";
// The whole batched call, as timed (batch products launched together).
inline constexpr const char* kTimePerCall = "time_per_call_s";

// The products list: every product of the step, with its times when `result` holds them (a dry
// run writes time_s null and no per-call or per-product time).
nlohmann::json products_json(const std::vector<Gemm>& gemms, const std::optional<CalibrationResult>& result);

// The timed products of a calibration file at `path`: read like a spec file (a regular file,
// size-capped; never a hang on a FIFO), nesting bounded, each field napkin uses type-checked.
// Errors start with `where` ("--gemm-efficiency: FILE") and name the product and key. Entries
// without a time (a --dry-run file) are skipped; an empty result is the caller's to refuse.
std::vector<MeasuredGemm> read_timed_products(const std::string& path, const std::string& where);

}  // namespace napkin::calibration_file
