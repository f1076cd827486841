#pragma once
// Operand values and the correctness reference, shared by every backend.
//
// Element i of an operand is a pure function of (seed, i): a standard normal drawn from a
// counter-based hash (SplitMix64 + Box-Muller), rounded to the stored format. Any entry can
// be recomputed on the host without keeping the operand, so the reference for a sampled
// D(m,n) needs only K values of A and of B, and fills parallelise trivially.
#include <cstdint>
#include <vector>

#include "bench/result.hpp"
#include "bench/shape.hpp"
#include "core/dtype.hpp"

namespace napkin::bench {

inline constexpr std::uint64_t seed_a = 0x9E3779B97F4A7C15ull, seed_b = 0xD1B54A32D192ED03ull;

double normal_at(std::uint64_t seed, std::uint64_t index);  // N(0, 1), never exactly 0

// IEEE/OCP formats by bit pattern, round-to-nearest-even; fp8 is OCP E4M3 (max 448,
// saturating: the inputs are N(0,1) so saturation never happens in practice). int8 holds
// round(16 z), clamped to +-127: integers, so an int32 product is exact.
std::uint16_t to_bf16(float x);
float from_bf16(std::uint16_t b);
std::uint16_t to_fp16(float x);
float from_fp16(std::uint16_t h);
std::uint8_t to_fp8_e4m3(float x);
float from_fp8_e4m3(std::uint8_t b);
std::int8_t to_int8(double z);

// normal_at rounded to what `dtype` stores (tf32 is stored as fp32 and rounded by the GPU:
// its reference uses the fp32 values, and its tolerance covers the input rounding).
double stored_value(Dtype dtype, std::uint64_t seed, std::uint64_t index);

// Fills `count` elements starting at `first` (the operand's element index) into `out`,
// encoded as `dtype` stores them (4 bytes for fp32/tf32, 8 for fp64, 2 for bf16/fp16, 1 for
// fp8 and int8), using all hardware threads. A batch's members follow one another.
void fill_operand(Dtype dtype, std::uint64_t seed, std::uint64_t first, std::uint64_t count, void* out);

// One entry of D: batch member b, row m, column n. Its element index in D is
// b*M*N + n*M + m (column-major members, one after another).
struct Entry {
  std::int64_t b = 0, m = 0, n = 0;
  std::int64_t index(const Shape& s) const { return (b * s.n + n) * s.m + m; }
};

// Entries of D to check: a spread over the batch, rows and columns, including the corners
// of the first and last member.
std::vector<Entry> sample_entries(const Shape& s, int count);

// Reference for an entry of the TN product (shape.hpp's layout), in long double, and the
// scale sqrt(sum_k (a_mk b_kn)^2) its error is measured against.
struct Reference {
  long double value = 0;
  long double scale = 0;
};
Reference reference_entry(Dtype dtype, const Shape& s, const Entry& e);

// Largest |d - ref| / scale a correct product may show; see METHODOLOGY "Correctness".
double tolerance(Dtype dtype);

// Compares `got[i]` (D at samples[i], already converted to double) with the reference.
CorrectnessCheck check_samples(Dtype dtype, const Shape& s, const std::vector<Entry>& samples, const std::vector<double>& got);

}  // namespace napkin::bench
