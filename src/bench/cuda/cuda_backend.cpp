// The CUDA backend: cuBLASLt on device 0, built into the CUDA module (bench/cuda_module.hpp).
// Operands are filled on the host from the same counter-based normals as every backend
// (bench/operands.hpp) and copied over on the bench stream, with the NaN fill of D, and the
// host synchronises once. Each timed product is bracketed by its own CUDA event pair, the L2
// is flushed (a buffer twice its size written with cudaMemsetAsync) before each product
// outside the events, and the host synchronises once, after the last product.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>

#include "bench/backend.hpp"
#include "bench/cuda/cuda_matmul.hpp"
#include "bench/cuda/cuda_memcopy.hpp"
#include "bench/cuda/cuda_util.hpp"
#include "bench/cuda/nvml.hpp"
#include "bench/operands.hpp"

namespace napkin::bench {
namespace {

using cuda::check;
using cuda::DeviceBuffer;

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

// CUDA versions as the runtime reports them: 1000 x major + 10 x minor.
std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

// The oldest driver for a CUDA major version (NVIDIA, CUDA Toolkit release notes, "CUDA
// Toolkit and Corresponding Driver Versions": 13.x needs >= 580, 12.x >= 525, 11.x >= 450).
std::string required_driver(int cuda_version) {
  switch (cuda_version / 1000) {
    case 11: return "450";
    case 12: return "525";
    case 13: return "580";
    default: return "one that supports CUDA " + version_text(cuda_version);
  }
}

struct LtDeleter {
  void operator()(std::remove_pointer_t<cublasLtHandle_t>* h) const { cublasLtDestroy(h); }
};
struct StreamDeleter {
  void operator()(std::remove_pointer_t<cudaStream_t>* s) const { cudaStreamDestroy(s); }
};
using LtHandle = std::unique_ptr<std::remove_pointer_t<cublasLtHandle_t>, LtDeleter>;
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDeleter>;

class CudaBackend final : public Backend {
 public:
  ~CudaBackend() override {
    sampler_.reset();
    matmul_.reset();
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  std::string key() const override { return "cuda"; }
  Availability availability() override {
    probe();
    return {available_, available_ ? device_description() : reason_};
  }
  std::string device_name() override { return probe(), available_ ? std::string(prop_.name) : std::string(); }
  std::string device_description() override {
    probe();
    if (!available_) return "no CUDA device";
    return fmt::format("{} (compute capability {}.{}, {})", prop_.name, prop_.major, prop_.minor,
                       gib(static_cast<double>(prop_.totalGlobalMem)));
  }
  std::vector<Dtype> dtypes() override {
    probe();
    if (!available_) return {};
    std::vector<Dtype> out = {Dtype::fp64, Dtype::fp32, Dtype::fp16};
    if (cc() >= 75) out.push_back(Dtype::int8);                        // Turing's IMMA and newer
    if (cc() >= 80) out.insert(out.end(), {Dtype::tf32, Dtype::bf16});  // Ampere tensor cores
    if (cc() >= 89) out.push_back(Dtype::fp8);                          // Ada, Hopper and newer
    return out;
  }
  // cuBLAS runs DGEMM on the FP64 tensor cores from compute capability 8.0 (A100, H100;
  // NVIDIA A100 whitepaper, "FP64 Tensor Core"): their peak, where a spec lists one, is the
  // one fp64 reaches for.
  Dtype peak_dtype(Dtype d) override {
    probe();
    return d == Dtype::fp64 && available_ && cc() >= 80 ? Dtype::fp64_tensor : d;
  }
  Shape default_shape(Dtype) const override { return {8192, 8192, 8192}; }
  double default_warmup_s() const override { return 2.0; }

  void prepare(const Shape& s, Dtype dtype, const PrepareOptions& opts) override {
    init();
    matmul_.reset();
    a_ = DeviceBuffer(), b_ = DeviceBuffer(), d_ = DeviceBuffer(), flush_ = DeviceBuffer(), ws_ = DeviceBuffer();
    shape_ = s;
    dtype_ = dtype;
    const double in = dtype_bytes(dtype), out = cuda::output_bytes(dtype), batch = double(s.batch);
    const double na = double(s.m) * double(s.k) * batch, nb = double(s.k) * double(s.n) * batch,
                 nd = double(s.m) * double(s.n) * batch;
    const std::size_t ws = cc() >= 90 ? 32u << 20 : 4u << 20;  // Hopper+ kernels want 32 MiB
    const std::size_t flush = opts.flush_cache ? std::max<std::size_t>(2u * static_cast<std::size_t>(prop_.l2CacheSize), 64u << 20) : 0;
    const double need = (na + nb) * in + nd * out + double(ws) + double(flush);
    std::size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    if (need > double(free_b))
      throw Error(fmt::format("--shape {} {} needs {:.0f} bytes ({}) of device memory; {} has {} free of {}", shape_text(s),
                              dtype_name(dtype), need, gib(need), prop_.name, gib(double(free_b)), gib(double(total_b))));
    a_ = DeviceBuffer(static_cast<std::size_t>(na * in));
    b_ = DeviceBuffer(static_cast<std::size_t>(nb * in));
    d_ = DeviceBuffer(static_cast<std::size_t>(nd * out));
    ws_ = DeviceBuffer(ws);
    flush_ = DeviceBuffer(flush);
    // Everything on the bench stream, so the products (on the same stream) see it; the
    // legacy stream would not order with a non-blocking one. One synchronisation at the end.
    upload(seed_a, static_cast<std::uint64_t>(na), a_);
    upload(seed_b, static_cast<std::uint64_t>(nb), b_);
    check(cudaMemsetAsync(d_.get(), 0xFF, d_.bytes(), stream()), "cudaMemsetAsync(D)");  // NaN: an unwritten D fails the check
    check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize(upload)");
    matmul_ = std::make_unique<cuda::LtMatmul>(handle_.get(), s, dtype, scale_one_.get());
    select_algorithm(opts.algos);
  }

  std::string algorithm() const override { return algorithm_; }

  // Back-to-back products for `seconds`, in batches of about 20 ms of device time (sized
  // from the previous batch's own events): the host waits for batch i-1 while batch i is
  // queued, so the device never runs dry until the end.
  void warm_up(double seconds, const std::function<bool()>& stop) override {
    if (!(seconds > 0) || stop()) return;
    cudaEvent_t begin[2] = {event(0), event(1)}, end[2] = {event(2), event(3)};
    int size[2] = {1, 1}, batch = 1;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0;; ++i) {
      const int cur = i % 2, prev = 1 - cur;
      size[cur] = batch;
      check(cudaEventRecord(begin[cur], stream()), "cudaEventRecord");
      for (int j = 0; j < batch; ++j) run();
      check(cudaEventRecord(end[cur], stream()), "cudaEventRecord");
      if (i > 0) {
        check(cudaEventSynchronize(end[prev]), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, begin[prev], end[prev]), "cudaEventElapsedTime");
        const double per_product_s = std::max(static_cast<double>(ms) * 1e-3 / size[prev], 1e-9);
        batch = std::clamp(static_cast<int>(std::ceil(0.02 / per_product_s)), 1, 1000);
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= seconds || stop()) break;
    }
    check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize(warm-up)");
  }

  std::vector<double> time_iterations(int warmup, int iterations, bool flush) override {
    return timed(warmup, iterations, flush, true);
  }

  CorrectnessCheck check_correctness() override {
    check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
    const auto samples = sample_entries(shape_, 64);
    const auto out = static_cast<std::size_t>(cuda::output_bytes(dtype_));
    std::vector<double> got;
    for (const Entry& e : samples) {
      const auto idx = static_cast<std::size_t>(e.index(shape_));
      unsigned char raw[8] = {};
      check(cudaMemcpy(raw, static_cast<const char*>(d_.get()) + idx * out, out, cudaMemcpyDeviceToHost), "cudaMemcpy(D)");
      double v = 0;
      if (out == 8) {
        std::memcpy(&v, raw, 8);
      } else if (out == 4 && dtype_ == Dtype::int8) {
        std::int32_t i;
        std::memcpy(&i, raw, 4);
        v = i;
      } else if (out == 4) {
        float f;
        std::memcpy(&f, raw, 4);
        v = f;
      } else {
        std::uint16_t h;
        std::memcpy(&h, raw, 2);
        v = dtype_ == Dtype::fp16 ? from_fp16(h) : from_bf16(h);
      }
      got.push_back(v);
    }
    return check_samples(dtype_, shape_, samples, got);
  }

  Telemetry telemetry() override { return telemetry_; }

  // 1 GiB buffers: twenty times an H100's 50 MiB L2.
  std::size_t default_memory_array_bytes() override { return std::size_t(1) << 30; }
  std::optional<double> last_level_cache_bytes() override {
    probe();
    return available_ ? std::optional<double>(prop_.l2CacheSize) : std::nullopt;
  }
  MemoryMeasurement measure_memory(std::size_t bytes, int repeats, const std::function<bool()>& stop) override {
    init();
    return cuda::measure_device_copy(stream(), bytes, repeats, stop);
  }

 private:
  int cc() const { return prop_.major * 10 + prop_.minor; }
  cudaStream_t stream() const { return stream_.get(); }

  // Why the GPU cannot be used, one reason per way it fails: no driver at all, a driver too
  // old for the CUDA this module was built with, no device.
  void probe() {
    if (probed_) return;
    probed_ = true;
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {  // 0: "no driver is installed"
      cudaGetLastError();
      reason_ = "no NVIDIA driver: libcuda.so.1 is not installed or cannot be loaded (install the NVIDIA driver)";
      return;
    }
    if (driver / 1000 < CUDART_VERSION / 1000) {
      const auto installed = cuda::nvml_driver_version();
      reason_ = fmt::format("NVIDIA driver too old: it supports CUDA {}{}; napkin's CUDA module was built with CUDA {}, "
                            "which needs driver {} or newer",
                            version_text(driver), installed ? " (driver " + *installed + ")" : std::string(),
                            version_text(CUDART_VERSION), required_driver(CUDART_VERSION));
      return;
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      cudaGetLastError();
      reason_ = std::string("no CUDA device: ") + cudaGetErrorString(e);
      return;
    }
    if (count == 0) {
      reason_ = "no CUDA device: the driver reports none";
      return;
    }
    if ((e = cudaGetDeviceProperties(&prop_, 0)) != cudaSuccess || (e = cudaSetDevice(0)) != cudaSuccess) {
      cudaGetLastError();
      reason_ = std::string("no CUDA device: ") + cudaGetErrorString(e);
      return;
    }
    available_ = true;
  }

  // All or nothing: each piece is owned locally until every one exists, so a failure half
  // way leaves no handle, stream or buffer behind, and the next prepare() starts afresh.
  void init() {
    probe();
    if (!available_) throw Error(reason_, ExitCode::failure);
    if (handle_) return;
    cublasLtHandle_t raw_handle = nullptr;
    check(cublasLtCreate(&raw_handle), "cublasLtCreate");
    LtHandle handle(raw_handle);
    cudaStream_t raw_stream = nullptr;
    check(cudaStreamCreateWithFlags(&raw_stream, cudaStreamNonBlocking), "cudaStreamCreate");
    Stream stream(raw_stream);
    DeviceBuffer scale_one(sizeof(float));
    const float one = 1.0f;
    check(cudaMemcpyAsync(scale_one.get(), &one, sizeof one, cudaMemcpyHostToDevice, raw_stream), "cudaMemcpyAsync(scale)");
    check(cudaStreamSynchronize(raw_stream), "cudaStreamSynchronize(scale)");
    std::unique_ptr<cuda::NvmlSampler> sampler;
    char pci[32] = {};
    if (cudaDeviceGetPCIBusId(pci, sizeof(pci), 0) == cudaSuccess) sampler = std::make_unique<cuda::NvmlSampler>(pci);
    else cudaGetLastError();
    handle_ = std::move(handle);
    stream_ = std::move(stream);
    scale_one_ = std::move(scale_one);
    sampler_ = std::move(sampler);
  }

  void upload(std::uint64_t seed, std::uint64_t count, const DeviceBuffer& dst) {
    const auto bytes = static_cast<std::size_t>(dtype_bytes(dtype_));
    constexpr std::uint64_t chunk = 16u << 20;  // elements per host staging round
    std::vector<unsigned char> host(static_cast<std::size_t>(std::min(count, chunk)) * bytes);
    for (std::uint64_t first = 0; first < count; first += chunk) {
      const std::uint64_t n = std::min(chunk, count - first);
      fill_operand(dtype_, seed, first, n, host.data());
      // From pageable memory the copy is staged before the call returns, so `host` may be
      // refilled at once (cudaMemcpyAsync, "Pageable memory").
      check(cudaMemcpyAsync(static_cast<char*>(dst.get()) + first * bytes, host.data(), n * bytes, cudaMemcpyHostToDevice,
                            stream()),
            "cudaMemcpyAsync(operand)");
    }
  }

  cudaEvent_t event(std::size_t i) {
    while (events_.size() <= i) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
    return events_[i];
  }

  void flush_l2() {
    if (flush_.bytes() == 0) return;  // prepared without a flush buffer (--no-flush)
    check(cudaMemsetAsync(flush_.get(), ++flush_byte_, flush_.bytes(), stream()), "cudaMemsetAsync(flush)");
  }
  void run() { check(matmul_->run(algo_, a_.get(), b_.get(), d_.get(), ws_.get(), ws_.bytes(), stream()), "cublasLtMatmul"); }

  // `warmup` untimed then `iterations` timed products, with NVML sampling if `sample`.
  std::vector<double> timed(int warmup, int iterations, bool flush, bool sample) {
    for (int i = 0; i < warmup; ++i) {
      if (flush) flush_l2();
      run();
    }
    for (int i = 0; i < 2 * iterations; ++i) event(static_cast<std::size_t>(i));
    struct StopSampler {  // telemetry ends with the loop, however it ends
      CudaBackend& b;
      bool on;
      ~StopSampler() {
        if (on) b.telemetry_ = b.sampler_ ? b.sampler_->stop() : Telemetry{};
      }
    } stop{*this, sample};
    if (sample && sampler_) sampler_->start();
    for (int i = 0; i < iterations; ++i) {
      if (flush) flush_l2();
      check(cudaEventRecord(events_[2 * i], stream()), "cudaEventRecord");
      run();
      check(cudaEventRecord(events_[2 * i + 1], stream()), "cudaEventRecord");
    }
    check(cudaEventSynchronize(events_[2 * static_cast<std::size_t>(iterations) - 1]), "cudaEventSynchronize");
    check(cudaGetLastError(), "the timed products");
    std::vector<double> out;
    for (int i = 0; i < iterations; ++i) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]), "cudaEventElapsedTime");
      out.push_back(static_cast<double>(ms) * 1e-3);
    }
    return out;
  }

  // The heuristic's candidates, each timed briefly (2 untimed + 5 timed products, no flush);
  // the fastest median wins. A candidate whose state is not success, or whose product fails,
  // is skipped; only when none runs is that an error.
  void select_algorithm(int count) {
    const auto candidates = matmul_->heuristic(count, ws_.bytes());
    double best_s = 0;
    std::size_t best = candidates.size();
    std::vector<std::string> skipped;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].state != CUBLAS_STATUS_SUCCESS) {
        skipped.push_back(fmt::format("#{}: state {}", i + 1, cublasLtGetStatusString(candidates[i].state)));
        continue;
      }
      algo_ = candidates[i].algo;
      std::vector<double> t;
      try {
        t = timed(2, 5, false, false);
      } catch (const Error& e) {
        skipped.push_back(fmt::format("#{}: {}", i + 1, e.what()));
        cudaStreamSynchronize(stream());  // let what was queued before the failure finish
        cudaGetLastError();
        continue;
      }
      std::sort(t.begin(), t.end());
      if (best == candidates.size() || t[2] < best_s) best_s = t[2], best = i;
    }
    if (best == candidates.size()) {
      std::string why;
      for (const auto& s : skipped) why += (why.empty() ? "" : "; ") + s;
      throw Error(fmt::format("cuBLASLt: none of the {} candidate algorithms for {} {} ran ({})", candidates.size(),
                              shape_text(shape_), dtype_name(dtype_), why),
                  ExitCode::failure);
    }
    algo_ = candidates[best].algo;
    algorithm_ = fmt::format("cuBLASLt #{} of {} ({}{})", best + 1, candidates.size(), cuda::LtMatmul::describe(algo_),
                             skipped.empty() ? "" : fmt::format("; {} skipped", skipped.size()));
  }

  bool probed_ = false, available_ = false;
  std::string reason_;
  cudaDeviceProp prop_{};
  // Destroyed in reverse: the sampler, the descriptors, the buffers, the stream, the handle.
  LtHandle handle_;
  Stream stream_;
  std::vector<cudaEvent_t> events_;
  DeviceBuffer scale_one_, a_, b_, d_, ws_, flush_;
  std::unique_ptr<cuda::LtMatmul> matmul_;
  std::unique_ptr<cuda::NvmlSampler> sampler_;
  cublasLtMatmulAlgo_t algo_{};
  std::string algorithm_;
  Shape shape_;
  Dtype dtype_ = Dtype::bf16;
  int flush_byte_ = 0;
  Telemetry telemetry_;
};

}  // namespace

namespace cuda {
Backend* new_backend() { return new (std::nothrow) CudaBackend(); }
}  // namespace cuda

}  // namespace napkin::bench
