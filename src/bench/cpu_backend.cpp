// The CPU backend: OpenBLAS sgemm/dgemm in the same TN layout as the GPU (both operands
// K-major), timed per product with a steady clock, the last-level cache flushed between
// products. Always built, so napkin measures something real on any machine.
//
// OpenBLAS is loaded with dlopen when the backend is made, not linked: linking it costs
// every napkin process its thread pool's start-up (~2.5 ms), and an estimate needs no BLAS.
#include <fmt/format.h>

#include <cmath>
#include <cblas.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/cpu_peak.hpp"
#include "bench/cpu_stream.hpp"
#include "bench/operands.hpp"
#include "core/error.hpp"

namespace napkin::bench {
namespace {

// The longest one product may run (at the nominal peak) for prepare() to take its shape.
constexpr double max_product_s = 60;
// Values napkin generates before the first product: both operands (fill_operand: a Box-Muller
// normal each, on one core), then each of the 64 sampled outputs recomputed from its k terms
// (check_samples: two normals a term). On the 2-core VM of docs/bench/README.md that ran 20 ns a
// value (2e9 values of --shape 1x1x1000000000: 40 s of fill, then over an hour of checking, with no
// product yet timed); at this cap, about 20 s.
constexpr double max_generated_values = 1e9;
constexpr double checked_samples = 64;

std::string gib(double bytes) { return std::to_string(static_cast<long long>(bytes / 1048576.0)) + " MiB"; }

// The few CBLAS functions napkin calls, from the first library that has them: OpenBLAS by
// its soname, then Debian's libblas.so.3 alternative (OpenBLAS's, which has CBLAS too).
struct Blas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  std::string config = "BLAS";  // "OpenBLAS 0.3.21"
  std::string error;            // why none loaded

  Blas() {
    for (const char* name : {"libopenblas.so.0", "libblas.so.3"}) {
      void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);  // never closed: used until exit
      if (!lib) {
        const char* e = dlerror();
        error += (error.empty() ? "" : "; ") + std::string(e ? e : name);
        continue;
      }
      sgemm = reinterpret_cast<decltype(sgemm)>(dlsym(lib, "cblas_sgemm"));
      dgemm = reinterpret_cast<decltype(dgemm)>(dlsym(lib, "cblas_dgemm"));
      if (!sgemm || !dgemm) {
        error += (error.empty() ? "" : "; ") + std::string(name) + " has no cblas_sgemm/cblas_dgemm";
        sgemm = nullptr, dgemm = nullptr;
        continue;
      }
      // OpenBLAS's own description: "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...".
      if (auto get_config = reinterpret_cast<char* (*)()>(dlsym(lib, "openblas_get_config"))) {
        const std::string c = get_config();
        config = c.substr(0, c.find(' ', c.find(' ') + 1));
      }
      return;
    }
  }
  bool loaded() const { return sgemm != nullptr; }
};

class CpuBackend final : public Backend {
 public:
  CpuBackend() : info_(cpu_info()) {}
  std::string key() const override { return "cpu"; }
  Availability availability() override {
    if (!blas_.loaded()) return {false, "no BLAS library: " + blas_.error + " (install OpenBLAS: libopenblas0)"};
    return {true, device_description()};
  }
  std::string device_name() override { return info_.model_name; }
  std::string device_description() override {
    return info_.model_name + " (" + std::to_string(info_.threads) + " threads, " + info_.isa + ", " + blas_.config + ")";
  }
  std::vector<Dtype> dtypes() override { return {Dtype::fp32, Dtype::fp64}; }
  Shape default_shape(Dtype) const override { return {2048, 2048, 2048}; }
  double default_warmup_s() const override { return 0.5; }

  void prepare(const Shape& s, Dtype dtype, const PrepareOptions& opts) override {
    if (!blas_.loaded()) throw Error(availability().detail, ExitCode::failure);
    // A shape is timed over several products (bench: a probe, 2 warm-up and 5 timed at least), so
    // one that runs for minutes ran for hours (--shape 40000 on a small CPU). Judged at the nominal
    // peak, which no product beats (the time said is a lower bound), and before the memory.
    const std::optional<double> peak = nominal_peak(dtype);
    if (peak && matmul_flops(s) / *peak > max_product_s)
      throw Error(fmt::format("--shape {} {}: one product is {:.3g} FLOP, at least {:.0f} s at this CPU's nominal peak of {:.3g} GFLOP/s, and "
                              "each is timed several times; napkin refuses a product over {:.0f} s on the CPU: give a smaller --shape",
                              shape_text(s), dtype_name(dtype), matmul_flops(s), matmul_flops(s) / *peak, *peak / 1e9, max_product_s));
    const double generated = (double(s.m) * double(s.k) + double(s.k) * double(s.n)) * double(s.batch) + checked_samples * 2 * double(s.k);
    if (generated > max_generated_values)
      throw Error(fmt::format("--shape {} {}: its operands and the correctness check of {:.0f} sampled outputs ({} terms each) are {:.3g} "
                              "generated values, over napkin's {:.0e} (about 20 s on one core before the first product): give a smaller --shape",
                              shape_text(s), dtype_name(dtype), checked_samples, s.k, generated, max_generated_values));
    const double elt = dtype_bytes(dtype);
    const double flush = opts.flush_cache ? 2 * info_.last_level_cache_bytes.value_or(32.0 * 1048576) : 0;
    const double need =
        (double(s.m) * double(s.k) + double(s.k) * double(s.n) + double(s.m) * double(s.n)) * double(s.batch) * elt + flush;
    const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    if (need > 0.8 * have)
      throw Error("--shape " + shape_text(s) + " " + std::string(dtype_name(dtype)) + " needs " + gib(need) +
                  " of memory; this machine has " + gib(have) + " (napkin uses at most 80%)");
    shape_ = s;
    dtype_ = dtype;
    const auto count = [&](std::int64_t a, std::int64_t b) {
      return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(s.batch);
    };
    const std::size_t na = count(s.m, s.k), nb = count(s.k, s.n), nc = count(s.m, s.n);
    const std::size_t e = static_cast<std::size_t>(elt);
    // Releasing first keeps peak memory at one shape's worth during a sweep.
    a_.clear(), b_.clear(), c_.clear();
    a_.shrink_to_fit(), b_.shrink_to_fit(), c_.shrink_to_fit();
    a_.resize(na * e), b_.resize(nb * e), c_.assign(nc * e, 0);
    fill_operand(dtype, seed_a, 0, na, a_.data());
    fill_operand(dtype, seed_b, 0, nb, b_.data());
    flush_.assign(static_cast<std::size_t>(flush), 0);
  }

  // Cores x clock x FLOP/cycle, where the OS reports a clock.
  std::optional<double> nominal_peak(Dtype dtype) const {
    if (!info_.clock_hz) return std::nullopt;
    return info_.threads * *info_.clock_hz * info_.flops_per_cycle_fp32 / (dtype == Dtype::fp64 ? 2 : 1);
  }

  std::string algorithm() const override {
    return std::string(dtype_ == Dtype::fp64 ? "dgemm" : "sgemm") + " TN, " + std::to_string(info_.threads) + " threads";
  }

  void warm_up(double seconds, const std::function<bool()>& stop) override {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds && !stop()) gemm();
  }

  std::vector<double> time_iterations(int warmup, int iterations, bool flush) override {
    for (int i = 0; i < warmup; ++i) gemm();
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(iterations));
    for (int i = 0; i < iterations; ++i) {
      if (flush && !flush_.empty()) std::memset(flush_.data(), ++flush_byte_, flush_.size());
      const auto t0 = std::chrono::steady_clock::now();
      gemm();
      out.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return out;
  }

  CorrectnessCheck check_correctness() override {
    const auto samples = sample_entries(shape_, static_cast<int>(checked_samples));
    std::vector<double> got;
    for (const Entry& e : samples) {
      const auto i = static_cast<std::size_t>(e.index(shape_));
      if (dtype_ == Dtype::fp64) got.push_back(reinterpret_cast<const double*>(c_.data())[i]);
      else got.push_back(reinterpret_cast<const float*>(c_.data())[i]);
    }
    return check_samples(dtype_, shape_, samples, got);
  }

  std::optional<PeakInfo> measured_peak(Dtype dtype) override {
    PeakInfo p;
    const CpuPeak peak = measure_cpu_peak(dtype);
    p.flops_per_s = peak.best_flops_per_s;
    p.source = "measured: FMA microkernel, " + info_.isa + ", " + std::to_string(info_.threads) + " threads";
    const double spread = peak.best_flops_per_s > 0 ? 1 - peak.worst_flops_per_s / peak.best_flops_per_s : 0;
    if (spread > unstable_peak_spread)
      p.source += "; UNSTABLE: its " + std::to_string(peak.trials) + " trials ranged " + std::to_string(static_cast<int>(std::lround(spread * 100))) +
                  "% below the best (a shared or throttling CPU), so MFU moves between runs: pin it with --peak spec or --peak VALUE";
    if (info_.clock_hz) {
      const double per_cycle = info_.flops_per_cycle_fp32 / (dtype == Dtype::fp64 ? 2 : 1);
      p.nominal_flops_per_s = nominal_peak(dtype);
      p.nominal_source = std::to_string(info_.threads) + " cores x " + std::to_string(*info_.clock_hz / 1e9).substr(0, 5) +
                         " GHz (as the OS reports it) x " + std::to_string(static_cast<int>(per_cycle)) + " FLOP/cycle (" +
                         info_.flops_per_cycle_basis + ")";
    }
    return p;
  }

  // STREAM's rule: each array at least 4 times the last-level cache; 256 MiB at least, and at
  // most an eighth of the machine's memory (three arrays are allocated).
  std::size_t default_memory_array_bytes() override {
    const double llc = info_.last_level_cache_bytes.value_or(32.0 * 1048576);
    const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    return static_cast<std::size_t>(std::min(std::max(4 * llc, 256.0 * 1048576), have / 8));
  }
  std::optional<double> last_level_cache_bytes() override { return info_.last_level_cache_bytes; }
  MemoryMeasurement measure_memory(std::size_t array_bytes, int repeats, const std::function<bool()>& stop) override {
    const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    if (3 * double(array_bytes) > 0.8 * have)
      throw Error("--size " + gib(double(array_bytes)) + ": three arrays need " + gib(3 * double(array_bytes)) +
                  " of memory; this machine has " + gib(have) + " (napkin uses at most 80%)");
    return measure_cpu_stream(array_bytes, info_.threads, repeats, stop);
  }

 private:
  // Column-major D = A^T B with A stored K x M and B stored K x N: both K-major; a batch is
  // one call per member (OpenBLAS has no strided-batched GEMM), its operands one after another.
  void gemm() {
    const auto M = static_cast<blasint>(shape_.m), N = static_cast<blasint>(shape_.n), K = static_cast<blasint>(shape_.k);
    const std::size_t sa = std::size_t(M) * std::size_t(K), sb = std::size_t(N) * std::size_t(K), sc = std::size_t(M) * std::size_t(N);
    for (std::size_t b = 0; b < static_cast<std::size_t>(shape_.batch); ++b) {
      if (dtype_ == Dtype::fp64)
        blas_.dgemm(CblasColMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0, reinterpret_cast<const double*>(a_.data()) + b * sa,
                    K, reinterpret_cast<const double*>(b_.data()) + b * sb, K, 0.0, reinterpret_cast<double*>(c_.data()) + b * sc, M);
      else
        blas_.sgemm(CblasColMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, reinterpret_cast<const float*>(a_.data()) + b * sa,
                    K, reinterpret_cast<const float*>(b_.data()) + b * sb, K, 0.0f, reinterpret_cast<float*>(c_.data()) + b * sc, M);
    }
  }

  Blas blas_;
  CpuInfo info_;
  Shape shape_;
  Dtype dtype_ = Dtype::fp32;
  // Byte vectors hold float or double data: operator new's alignment suffices for both.
  std::vector<unsigned char> a_, b_, c_, flush_;
  unsigned char flush_byte_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace napkin::bench
