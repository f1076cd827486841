#include "bench/cpu_peak.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace napkin::bench {
namespace {

// Each kernel runs `reps` rounds of N independent chains acc = acc * a + b and returns the
// FLOPs done (2 per lane per FMA). a < 1 keeps every chain at the fixed point b / (1 - a),
// so no value overflows or goes subnormal. N chains hide the FMA latency: Zen 4 and Intel
// cores issue 2 FMAs a cycle with 4-cycle latency, so 8 chains suffice; we use 12-16.
struct Kernel {
  double (*fn)(std::uint64_t reps, bool f64);
  const char* isa;
};

// Makes the kernels' results observable so the compiler keeps the FMAs.
void sink_value(double v) { __asm__ volatile("" : : "g"(v) : "memory"); }

#if defined(__x86_64__)
__attribute__((target("avx512f"))) double fma_avx512(std::uint64_t reps, bool f64) {
  constexpr int N = 16;
  if (f64) {
    __m512d acc[N];
    const __m512d a = _mm512_set1_pd(0.999), b = _mm512_set1_pd(0.001);
    for (int i = 0; i < N; ++i) acc[i] = _mm512_set1_pd(i);
    for (std::uint64_t r = 0; r < reps; ++r)
      for (int i = 0; i < N; ++i) acc[i] = _mm512_fmadd_pd(acc[i], a, b);
    __m512d s = acc[0];
    for (int i = 1; i < N; ++i) s = _mm512_add_pd(s, acc[i]);
    double out[8];
    _mm512_storeu_pd(out, s);
    sink_value(out[0] + out[7]);
    return static_cast<double>(reps) * N * 8 * 2;
  }
  __m512 acc[N];
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (int i = 0; i < N; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (std::uint64_t r = 0; r < reps; ++r)
    for (int i = 0; i < N; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < N; ++i) s = _mm512_add_ps(s, acc[i]);
  float out[16];
  _mm512_storeu_ps(out, s);
  sink_value(out[0] + out[15]);
  return static_cast<double>(reps) * N * 16 * 2;
}

__attribute__((target("avx2,fma"))) double fma_avx2(std::uint64_t reps, bool f64) {
  constexpr int N = 12;  // of 16 ymm registers; a and b take two more
  if (f64) {
    __m256d acc[N];
    const __m256d a = _mm256_set1_pd(0.999), b = _mm256_set1_pd(0.001);
    for (int i = 0; i < N; ++i) acc[i] = _mm256_set1_pd(i);
    for (std::uint64_t r = 0; r < reps; ++r)
      for (int i = 0; i < N; ++i) acc[i] = _mm256_fmadd_pd(acc[i], a, b);
    double out[4];
    __m256d s = acc[0];
    for (int i = 1; i < N; ++i) s = _mm256_add_pd(s, acc[i]);
    _mm256_storeu_pd(out, s);
    sink_value(out[0] + out[1] + out[2] + out[3]);
    return static_cast<double>(reps) * N * 4 * 2;
  }
  __m256 acc[N];
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (int i = 0; i < N; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  for (std::uint64_t r = 0; r < reps; ++r)
    for (int i = 0; i < N; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < N; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  sink_value(out[0] + out[4]);
  return static_cast<double>(reps) * N * 8 * 2;
}
#elif defined(__aarch64__)
double fma_neon(std::uint64_t reps, bool f64) {
  constexpr int N = 16;  // of 32 vector registers
  if (f64) {
    float64x2_t acc[N];
    const float64x2_t a = vdupq_n_f64(0.999), b = vdupq_n_f64(0.001);
    for (int i = 0; i < N; ++i) acc[i] = vdupq_n_f64(i);
    for (std::uint64_t r = 0; r < reps; ++r)
      for (int i = 0; i < N; ++i) acc[i] = vfmaq_f64(b, acc[i], a);
    double s = 0;
    for (int i = 0; i < N; ++i) s += vaddvq_f64(acc[i]);
    sink_value(s);
    return static_cast<double>(reps) * N * 2 * 2;
  }
  float32x4_t acc[N];
  const float32x4_t a = vdupq_n_f32(0.999f), b = vdupq_n_f32(0.001f);
  for (int i = 0; i < N; ++i) acc[i] = vdupq_n_f32(static_cast<float>(i));
  for (std::uint64_t r = 0; r < reps; ++r)
    for (int i = 0; i < N; ++i) acc[i] = vfmaq_f32(b, acc[i], a);
  double s = 0;
  for (int i = 0; i < N; ++i) s += vaddvq_f32(acc[i]);
  sink_value(s);
  return static_cast<double>(reps) * N * 4 * 2;
}
#endif

// Last resort: plain multiply-adds the compiler may vectorise with baseline SIMD.
double fma_scalar(std::uint64_t reps, bool) {
  constexpr int N = 16;
  double acc[N];
  for (int i = 0; i < N; ++i) acc[i] = i;
  for (std::uint64_t r = 0; r < reps; ++r)
    for (int i = 0; i < N; ++i) acc[i] = acc[i] * 0.999 + 0.001;
  double s = 0;
  for (double v : acc) s += v;
  sink_value(s);
  return static_cast<double>(reps) * N * 2;
}

Kernel best_kernel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {fma_avx512, "AVX-512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {fma_avx2, "AVX2+FMA"};
#elif defined(__aarch64__)
  return {fma_neon, "NEON"};
#endif
  return {fma_scalar, "scalar"};
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0)
      if (auto colon = line.find(':'); colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
      }
  return {};
}

std::optional<double> read_number(const std::string& path) {
  std::ifstream in(path);
  double v = 0;
  if (in >> v && v > 0) return v;
  return std::nullopt;
}

std::optional<double> cache_bytes() {
  std::optional<double> best;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string s;
    if (!(in >> s) || s.empty()) continue;
    double scale = 1;
    if (s.back() == 'K') scale = 1024;
    else if (s.back() == 'M') scale = 1024.0 * 1024;
    try {
      const double bytes = std::stod(s) * scale;
      if (!best || bytes > *best) best = bytes;
    } catch (...) {
    }
  }
  return best;
}

}  // namespace

CpuInfo cpu_info() {
  CpuInfo c;
  c.model_name = cpuinfo_field("model name");
  if (c.model_name.empty()) c.model_name = "CPU";
  c.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (auto khz = read_number("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")) c.clock_hz = *khz * 1e3;
  else if (auto mhz = cpuinfo_field("cpu MHz"); !mhz.empty()) {
    try {
      c.clock_hz = std::stod(mhz) * 1e6;
    } catch (...) {
    }
  }
  c.isa = best_kernel().isa;
  // Two FMA pipes a core, each `lanes` wide, 2 FLOPs an FMA. Zen 4 (AMD family 25)
  // executes AVX-512 on 256-bit datapaths, so it is 32 FLOP/cycle, like AVX2.
  const bool zen4 = cpuinfo_field("vendor_id") == "AuthenticAMD" && cpuinfo_field("cpu family") == "25";
  if (c.isa == "AVX-512" && !zen4) c.flops_per_cycle_fp32 = 64, c.flops_per_cycle_basis = "2 x 512-bit FMA units";
  else if (c.isa == "AVX-512") c.flops_per_cycle_fp32 = 32, c.flops_per_cycle_basis = "AVX-512 on 2 x 256-bit FMA units (Zen 4)";
  else if (c.isa == "AVX2+FMA") c.flops_per_cycle_fp32 = 32, c.flops_per_cycle_basis = "2 x 256-bit FMA units";
  else if (c.isa == "NEON") c.flops_per_cycle_fp32 = 16, c.flops_per_cycle_basis = "2 x 128-bit FMA units";
  else c.flops_per_cycle_fp32 = 2, c.flops_per_cycle_basis = "1 scalar FMA";
  c.last_level_cache_bytes = cache_bytes();
  return c;
}

double measure_cpu_peak_flops(Dtype dtype, int trials, double trial_s) { return measure_cpu_peak(dtype, trials, trial_s).best_flops_per_s; }

CpuPeak measure_cpu_peak(Dtype dtype, int trials, double trial_s) {
  const Kernel kernel = best_kernel();
  const bool f64 = dtype == Dtype::fp64 || dtype == Dtype::fp64_tensor;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double best = 0, worst = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> rate(static_cast<std::size_t>(threads), 0.0);
    std::barrier start(threads);
    {
      std::vector<std::jthread> pool;
      for (int i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
          start.arrive_and_wait();
          const auto t0 = std::chrono::steady_clock::now();
          double flops = 0, elapsed = 0;
          do {
            flops += kernel.fn(1u << 14, f64);
            elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          } while (elapsed < trial_s);
          rate[static_cast<std::size_t>(i)] = flops / elapsed;
        });
    }
    double sum = 0;
    for (double r : rate) sum += r;
    best = std::max(best, sum);
    worst = t == 0 ? sum : std::min(worst, sum);
  }
  return {best, worst, trials};
}

}  // namespace napkin::bench
