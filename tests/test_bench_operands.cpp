// Number formats, operand values and the correctness check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "bench/operands.hpp"

using namespace napkin;
using namespace napkin::bench;

TEST_CASE("bf16 rounds to nearest even") {
  CHECK(to_bf16(1.0f) == 0x3F80);                // 1.0 = 0x3F800000
  CHECK(from_bf16(0x3F80) == 1.0f);
  CHECK(to_bf16(1.00390625f) == 0x3F80);         // 1 + 2^-8: a tie, rounds to even (1.0)
  CHECK(to_bf16(1.01171875f) == 0x3F82);         // 1 + 3*2^-8: a tie, rounds to even (1 + 2^-6)
  CHECK(from_bf16(to_bf16(-2.5f)) == -2.5f);
}

TEST_CASE("fp16 encodes normals, ties, subnormals and overflow") {
  CHECK(to_fp16(1.0f) == 0x3C00);
  CHECK(to_fp16(-2.0f) == 0xC000);
  CHECK(to_fp16(65504.0f) == 0x7BFF);                  // largest half
  CHECK(to_fp16(65520.0f) == 0x7C00);                  // halfway to 2^16 rounds to inf
  CHECK(to_fp16(std::ldexp(1.0f, -24)) == 0x0001);     // smallest subnormal
  CHECK(to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);  // tie to even
  CHECK(from_fp16(0x3555) == doctest::Approx(0.33325195));  // (1 + 341/1024) * 2^-2
  CHECK(from_fp16(0x0001) == std::ldexp(1.0f, -24));
}

TEST_CASE("fp8 E4M3 (OCP)") {
  CHECK(to_fp8_e4m3(1.0f) == 0x38);               // exponent 7 (bias 7) << 3
  CHECK(to_fp8_e4m3(448.0f) == 0x7E);             // largest finite
  CHECK(to_fp8_e4m3(1000.0f) == 0x7E);            // saturates
  CHECK(to_fp8_e4m3(-1.5f) == 0xBC);              // sign | 0x38 | mantissa 4
  CHECK(to_fp8_e4m3(std::ldexp(1.0f, -9)) == 0x01);  // smallest subnormal
  CHECK(to_fp8_e4m3(1.0625f) == 0x38);            // 1 + 1/16: tie between 1 and 1.125, to even
  CHECK(from_fp8_e4m3(0x7E) == 448.0f);
  CHECK(std::isnan(from_fp8_e4m3(0x7F)));
  CHECK(from_fp8_e4m3(0x01) == std::ldexp(1.0f, -9));
}

TEST_CASE("operands are standard normal, deterministic, never zero") {
  double sum = 0, sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double z = normal_at(seed_a, static_cast<std::uint64_t>(i));
    CHECK_FALSE(z == 0.0);
    sum += z, sq += z * z;
  }
  CHECK(std::fabs(sum / n) < 0.02);            // mean 0 within ~6 standard errors (1/sqrt(1e5) = 0.003)
  CHECK(std::fabs(sq / n - 1.0) < 0.03);       // variance 1
  CHECK(normal_at(seed_a, 7) == normal_at(seed_a, 7));
  CHECK(normal_at(seed_a, 7) != normal_at(seed_b, 7));
}

TEST_CASE("a fill holds normal_at of each element, whatever its start and length (fills work in pairs)") {
  for (std::uint64_t first : {0, 3})
    for (std::uint64_t count : {1, 2, 7, 8}) {
      std::vector<double> out(count);
      fill_operand(Dtype::fp64, seed_b, first, count, out.data());
      for (std::uint64_t i = 0; i < count; ++i) CHECK(out[i] == normal_at(seed_b, first + i));
    }
  // Pairs share an angle: element 2j is r cos(t), 2j+1 is r sin(t), so their squares sum to r^2,
  // which for N(0,1) pairs averages 2 (a chi-square with 2 degrees of freedom).
  double r2 = 0;
  for (std::uint64_t j = 0; j < 10000; ++j) {
    const double x = normal_at(seed_a, 2 * j), y = normal_at(seed_a, 2 * j + 1);
    r2 += x * x + y * y;
  }
  CHECK(r2 / 10000 == doctest::Approx(2).epsilon(0.05));
  std::int8_t i8[4];
  fill_operand(Dtype::int8, seed_a, 0, 4, i8);
  for (int i = 0; i < 4; ++i) CHECK(i8[i] == std::clamp(std::nearbyint(16 * normal_at(seed_a, i)), -127.0, 127.0));
}

TEST_CASE("correctness check: reference matches a naive product and rejects a wrong one") {
  const Shape s{3, 4, 5};
  // Naive product in the TN layout, written out independently: A(m,k) = a[m*K+k], B(k,n) = b[n*K+k].
  auto a = [&](int m, int k) { return static_cast<double>(static_cast<float>(normal_at(seed_a, static_cast<std::uint64_t>(m * 5 + k)))); };
  auto b = [&](int k, int n) { return static_cast<double>(static_cast<float>(normal_at(seed_b, static_cast<std::uint64_t>(n * 5 + k)))); };
  std::vector<Entry> samples;
  std::vector<double> right, wrong;
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 4; ++n) {
      double d = 0, dt = 0;
      for (int k = 0; k < 5; ++k) d += a(m, k) * b(k, n), dt += a(n % 3, k) * b(k, m);
      samples.push_back({0, m, n});
      right.push_back(d);
      wrong.push_back(dt);  // another entry's value, as a transposed or misaligned D would give
    }
  const auto ok = check_samples(Dtype::fp32, s, samples, right);
  CHECK(ok.ok);
  CHECK(ok.max_error < 1e-6);
  CHECK_FALSE(check_samples(Dtype::fp32, s, samples, wrong).ok);
  std::vector<double> nan = right;
  nan[3] = std::nan("");
  CHECK_FALSE(check_samples(Dtype::fp32, s, samples, nan).ok);
  // A bf16 output off by 3% of the sample's scale — what a split-K product reducing its partial
  // sums in bf16 can give (an H200 gave 2.0% on a 50,257-long K) — passes; a wrong entry does not.
  std::vector<Entry> bsamples;
  std::vector<double> near_right;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Reference ref = reference_entry(Dtype::bf16, s, samples[i]);
    bsamples.push_back(samples[i]);
    near_right.push_back(static_cast<double>(ref.value + 0.03L * ref.scale));
  }
  CHECK(check_samples(Dtype::bf16, s, bsamples, near_right).ok);
  std::vector<double> off = near_right;
  off[2] = static_cast<double>(reference_entry(Dtype::bf16, s, bsamples[2]).value + reference_entry(Dtype::bf16, s, bsamples[2]).scale);
  CHECK_FALSE(check_samples(Dtype::bf16, s, bsamples, off).ok);
}
