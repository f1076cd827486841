#include "bench/operands.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <thread>

namespace napkin::bench {
namespace {

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): a bijective 64-bit mix, good enough to drive Box-Muller.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <typename T>
void store(void* out, std::uint64_t i, T v) {
  std::memcpy(static_cast<char*>(out) + i * sizeof(T), &v, sizeof(T));
}

// Box-Muller gives two independent normals per pair of uniforms: elements 2j and 2j+1 share
// one hash of j (cos and sin of the same angle), so a fill computes one log and one sincos
// per two elements.
struct Pair {
  double r = 0, theta = 0;
};
Pair polar(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t h = splitmix64(seed ^ splitmix64(index >> 1));
  // Both uniforms in (0, 1) exclusive, so log() is finite and neither sin() nor cos() is
  // ever exactly 0 (u2 never lands on a multiple of 1/4).
  const double u1 = (static_cast<double>(h >> 32) + 0.5) / 4294967296.0;
  const double u2 = (static_cast<double>(h & 0xFFFFFFFFull) + 0.5) / 4294967296.0;
  return {std::sqrt(-2.0 * std::log(u1)), 2.0 * std::numbers::pi * u2};
}

void store_value(Dtype dtype, void* out, std::uint64_t i, double z) {
  switch (dtype) {
    case Dtype::fp64: case Dtype::fp64_tensor: store(out, i, z); break;
    case Dtype::bf16: store(out, i, to_bf16(static_cast<float>(z))); break;
    case Dtype::fp16: store(out, i, to_fp16(static_cast<float>(z))); break;
    case Dtype::fp8: store(out, i, to_fp8_e4m3(static_cast<float>(z))); break;
    case Dtype::int8: store(out, i, to_int8(z)); break;
    default: store(out, i, static_cast<float>(z)); break;
  }
}

void fill_range(Dtype dtype, std::uint64_t seed, std::uint64_t first, std::uint64_t begin, std::uint64_t end, void* out) {
  std::uint64_t i = begin;
  if (i < end && ((first + i) & 1)) store_value(dtype, out, i, normal_at(seed, first + i)), ++i;
  for (; i + 1 < end; i += 2) {
    const Pair p = polar(seed, first + i);
    store_value(dtype, out, i, p.r * std::cos(p.theta));
    store_value(dtype, out, i + 1, p.r * std::sin(p.theta));
  }
  if (i < end) store_value(dtype, out, i, normal_at(seed, first + i));
}

}  // namespace

double normal_at(std::uint64_t seed, std::uint64_t index) {
  const Pair p = polar(seed, index);
  return p.r * (index & 1 ? std::sin(p.theta) : std::cos(p.theta));
}

std::uint16_t to_bf16(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;  // NaN stays NaN
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

float from_bf16(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t to_fp16(float x) {
  std::uint32_t f = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  f &= 0x7FFFFFFFu;
  if (f >= 0x7F800000u) return sign | (f > 0x7F800000u ? 0x7E00 : 0x7C00);
  if (f >= 0x477FF000u) return sign | 0x7C00;  // >= 65520 rounds to infinity
  if (f < 0x38800000u) {                       // below 2^-14: a subnormal, units of 2^-24
    const double units = std::nearbyint(static_cast<double>(std::bit_cast<float>(f)) * 16777216.0);
    return sign | static_cast<std::uint16_t>(units);
  }
  const std::uint32_t mant = f & 0x7FFFFFu;
  std::uint32_t h = ((((f >> 23) & 0xFFu) - 127u + 15u) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return sign | static_cast<std::uint16_t>(h);
}

float from_fp16(std::uint16_t h) {
  const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -24);
  if (e == 31) return m ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 1024.0f, e - 15);
}

// OCP 8-bit floating point specification (2023), E4M3: bias 7, no infinities, S.1111.111 is
// NaN, largest finite 1.75 * 2^8 = 448, subnormals m * 2^-9.
std::uint8_t to_fp8_e4m3(float x) {
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 448.0) return sign | 0x7E;
  if (a < 0.015625) return sign | static_cast<std::uint8_t>(std::nearbyint(a * 512.0));  // 8 -> 2^-6, exact
  int e = 0;
  const double f = std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  int exp = e - 1;
  int mant = static_cast<int>(std::nearbyint((2.0 * f - 1.0) * 8.0));
  if (mant == 8) {
    mant = 0;
    ++exp;
  }
  return sign | static_cast<std::uint8_t>(((exp + 7) << 3) | mant);
}

float from_fp8_e4m3(std::uint8_t b) {
  const int e = (b >> 3) & 0xF, m = b & 7;
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (e == 15 && m == 7) return std::numeric_limits<float>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
}

std::int8_t to_int8(double z) { return static_cast<std::int8_t>(std::clamp(std::nearbyint(16 * z), -127.0, 127.0)); }

double stored_value(Dtype dtype, std::uint64_t seed, std::uint64_t index) {
  const double z = normal_at(seed, index);
  const float f = static_cast<float>(z);
  switch (dtype) {
    case Dtype::fp64: case Dtype::fp64_tensor: return z;
    case Dtype::bf16: return from_bf16(to_bf16(f));
    case Dtype::fp16: return from_fp16(to_fp16(f));
    case Dtype::fp8: return from_fp8_e4m3(to_fp8_e4m3(f));
    case Dtype::int8: return to_int8(z);
    default: return f;
  }
}

void fill_operand(Dtype dtype, std::uint64_t seed, std::uint64_t first, std::uint64_t count, void* out) {
  const std::uint64_t threads = std::clamp<std::uint64_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::uint64_t chunk = (count + threads - 1) / threads;
  std::vector<std::jthread> pool;
  for (std::uint64_t t = 0; t < threads && t * chunk < count; ++t)
    pool.emplace_back(fill_range, dtype, seed, first, t * chunk, std::min(count, (t + 1) * chunk), out);
}

std::vector<Entry> sample_entries(const Shape& s, int count) {
  const std::int64_t last = s.batch - 1;
  std::vector<Entry> out = {{0, 0, 0}, {last, s.m - 1, s.n - 1}, {0, 0, s.n - 1}, {last, s.m - 1, 0}};
  for (int i = static_cast<int>(out.size()); i < count; ++i) {
    const std::uint64_t h = splitmix64(0x5EEDull + static_cast<std::uint64_t>(i));
    const std::uint64_t hb = splitmix64(h);
    out.push_back({static_cast<std::int64_t>(hb % static_cast<std::uint64_t>(s.batch)),
                   static_cast<std::int64_t>((h >> 32) % static_cast<std::uint64_t>(s.m)),
                   static_cast<std::int64_t>((h & 0xFFFFFFFFull) % static_cast<std::uint64_t>(s.n))});
  }
  out.resize(static_cast<std::size_t>(std::max(count, 0)));
  return out;
}

Reference reference_entry(Dtype dtype, const Shape& s, const Entry& e) {
  long double sum = 0, sq = 0;
  const auto K = static_cast<std::uint64_t>(s.k);
  // Member b's A starts at element b*M*K, its B at b*N*K.
  const auto a0 = (static_cast<std::uint64_t>(e.b) * static_cast<std::uint64_t>(s.m) + static_cast<std::uint64_t>(e.m)) * K;
  const auto b0 = (static_cast<std::uint64_t>(e.b) * static_cast<std::uint64_t>(s.n) + static_cast<std::uint64_t>(e.n)) * K;
  for (std::uint64_t k = 0; k < K; ++k) {
    const long double p = static_cast<long double>(stored_value(dtype, seed_a, a0 + k)) *
                          static_cast<long double>(stored_value(dtype, seed_b, b0 + k));
    sum += p;
    sq += p * p;
  }
  return {sum, std::sqrt(sq)};
}

// Error of a correct product, relative to sqrt(sum (a b)^2) (~ |D(m,n)|): output rounding
// (half an ulp: 2^-9 bf16, 2^-12 fp16) times |D|/scale (< ~4 over the samples), plus fp32
// accumulation (~2^-24 sqrt(K)), plus for tf32 the GPU's rounding of each input to 10
// mantissa bits (~2^-11 per product, random signs). A wrong product (a transposed or
// unwritten output) errs by O(1), so these bounds separate the two by 50x or more. A bf16
// output gets more room: on an H200, cuBLASLt's pick for 2048×768×50257 (a long-K, split-K shape)
// was off by 0.020063 (docs/bench/NVIDIA_H200/calibrate_gpt2.err) — partial sums reduced in the
// output type, each rounded to bf16 — so 5e-2, still 20x below a wrong product's error.
double tolerance(Dtype dtype) {
  switch (dtype) {
    case Dtype::int8: return 0;  // integers in int32: exact
    case Dtype::fp64: case Dtype::fp64_tensor: return 1e-10;
    case Dtype::fp32: return 1e-4;
    case Dtype::tf32: return 1e-2;
    case Dtype::fp16: return 5e-3;
    default: return 5e-2;  // bf16 output (bf16, and fp8 whose D is bf16)
  }
}

CorrectnessCheck check_samples(Dtype dtype, const Shape& s, const std::vector<Entry>& samples, const std::vector<double>& got) {
  CorrectnessCheck c;
  c.tolerance = tolerance(dtype);
  c.samples = static_cast<int>(samples.size());
  c.ok = !samples.empty() && samples.size() == got.size();
  for (std::size_t i = 0; c.ok && i < samples.size(); ++i) {
    const Reference ref = reference_entry(dtype, s, samples[i]);
    // All-zero terms (possible in int8) have no scale: the error is then absolute.
    const long double diff = std::fabs(static_cast<long double>(got[i]) - ref.value);
    const double err = static_cast<double>(ref.scale > 0 ? diff / ref.scale : diff);
    if (!(err <= c.tolerance)) c.ok = false;  // NaN fails too
    c.max_error = std::isfinite(err) ? std::max(c.max_error, err) : 1e300;
  }
  return c;
}

}  // namespace napkin::bench
