#pragma once
// A matrix product's shape, the FLOPs it costs, and the --shape / --sweep grammar.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace napkin::bench {

// D[M,N] = A[M,K] * B[K,N]. Both operands are stored K-major ("TN" in BLAS terms):
// A(m,k) at a[m*K + k], B(k,n) at b[n*K + k]; D(m,n) at d[n*M + m] (column-major).
// `batch` independent products of the shape run as one strided-batched call: member b's
// operands follow member b-1's (A at b*M*K, B at b*N*K, D at b*M*N).
struct Shape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  bool operator==(const Shape&) const = default;
};

// 2*M*N*K per member, times the batch: one multiply and one add per term of each of the M*N
// dot products of length K (the convention of every GEMM benchmark; the M*N final additions
// are ignored).
double matmul_flops(const Shape& s);

// Most shapes one --sweep may list.
inline constexpr double max_sweep_shapes = 10000;

// "MxNxK" (also "N" for a cube). Values accept napkin's count suffixes ("8k" = 8000) and
// must be whole and in [1, 2^31). Throws Error naming `what`.
Shape parse_shape(std::string_view text, std::string_view what = "--shape");

// "m=START:STOP:STEP,n=...,k=...": each of m, n, k exactly once, as a single value or an
// inclusive range; the result is their Cartesian product (m outermost). Throws Error.
std::vector<Shape> parse_sweep(std::string_view text, std::string_view what = "--sweep");

std::string shape_text(const Shape& s);  // "8192x8192x8192", "128x128x64 (batch 96)"

}  // namespace napkin::bench
