#pragma once
// A place matrix products can run (the CPU via OpenBLAS, an NVIDIA GPU via cuBLASLt).
// The harness (bench/harness.hpp) drives any Backend the same way:
//   availability() -> prepare(shape, dtype, opts) -> warm_up(s) -> time_iterations(...)
//   -> check_correctness()
// The CUDA backend lives in a module built by the same compiler from this header
// (bench/cuda_module.hpp): changing this class means bumping cuda_module_abi_version.
// Errors are napkin::Error: ExitCode::bad_input for what the user asked wrongly (a dtype
// the device lacks, a shape that does not fit), ExitCode::failure for what went wrong.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/result.hpp"
#include "bench/shape.hpp"
#include "core/dtype.hpp"

namespace napkin::bench {

struct Availability {
  bool available = false;
  std::string detail;  // available: the device; otherwise why not ("no CUDA device: ...")
};

struct PrepareOptions {
  int algos = 4;             // candidate algorithms to time (cuBLASLt heuristic); best kept
  bool flush_cache = true;   // allocate a flush buffer larger than the last-level cache
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string key() const = 0;  // "cpu", "cuda"
  virtual Availability availability() = 0;
  // The name the driver/OS reports, for matching hardware/ specs (device_names).
  virtual std::string device_name() = 0;
  // A longer description for reports ("AMD EPYC, 2 threads, AVX-512").
  virtual std::string device_description() = 0;
  virtual std::vector<Dtype> dtypes() = 0;  // what this device can multiply
  // The peak a `dtype` product is measured against: the dtype itself, except where the
  // device runs it on other units (cuBLAS DGEMM on FP64 tensor cores: fp64_tensor).
  virtual Dtype peak_dtype(Dtype dtype) { return dtype; }
  virtual Shape default_shape(Dtype) const = 0;
  virtual double default_warmup_s() const = 0;

  // Allocates operands (random normal, never zeros), picks the algorithm. Throws Error.
  virtual void prepare(const Shape& shape, Dtype dtype, const PrepareOptions& opts) = 0;
  virtual std::string algorithm() const = 0;  // for the prepared shape
  // Runs the prepared product back to back for `seconds` (clocks ramp under load), never
  // letting the device idle, and returns early when `stop()` says so.
  virtual void warm_up(double seconds, const std::function<bool()>& stop) = 0;
  // Runs `warmup` untimed then `iterations` timed products; returns each timed product's
  // seconds. With flush, the cache is flushed before each product, outside the timing.
  virtual std::vector<double> time_iterations(int warmup, int iterations, bool flush) = 0;
  // Compares sampled entries of the last product with a higher-precision reference.
  virtual CorrectnessCheck check_correctness() = 0;
  // Device state over the last time_iterations() call; empty where not measurable.
  virtual Telemetry telemetry() { return {}; }
  // A peak the backend can measure itself (CPU: FMA microkernel); nullopt = use a spec.
  virtual std::optional<PeakInfo> measured_peak(Dtype) { return std::nullopt; }

  // Memory bandwidth (napkin bench --memory): the array size a measurement uses by default
  // (far larger than the last-level cache), and the measurement itself: each kernel run
  // `repeats` times on arrays of `array_bytes`, stopping early when `stop()` says so. The
  // default throws Error: a backend that cannot measure its memory says so.
  virtual std::size_t default_memory_array_bytes() { return std::size_t(256) << 20; }
  virtual std::optional<double> last_level_cache_bytes() { return std::nullopt; }
  virtual MemoryMeasurement measure_memory(std::size_t array_bytes, int repeats, const std::function<bool()>& stop);
};

std::unique_ptr<Backend> make_cpu_backend();
// Loads the CUDA module (bench/cuda_loader.cpp) and asks it for its backend; when the
// module cannot be found or loaded, a backend whose availability() says why.
std::unique_ptr<Backend> make_cuda_backend();
bool cuda_compiled_in();  // whether this build made the CUDA module
// A device that exists in the registry but cannot run here; every use throws Error(reason).
std::unique_ptr<Backend> make_unavailable_backend(std::string key, std::string reason);

struct BackendInfo {
  std::string key;
  std::string description;
  std::function<std::unique_ptr<Backend>()> make;
};
const std::vector<BackendInfo>& backend_registry();
// "auto" picks cuda when available, else cpu. Unknown keys throw Error (bad input);
// a known but unavailable device throws Error(failure) "no CUDA device: ...".
std::unique_ptr<Backend> open_backend(const std::string& key);

}  // namespace napkin::bench
