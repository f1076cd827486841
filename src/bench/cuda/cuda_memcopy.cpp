#include "bench/cuda/cuda_memcopy.hpp"

#include <fmt/format.h>

#include <vector>

#include "bench/cuda/cuda_util.hpp"

namespace napkin::bench::cuda {
namespace {

// Owns the event pairs of one measurement: destroyed however the measurement ends.
class Events {
 public:
  explicit Events(std::size_t n) {
    events_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

constexpr int source_byte = 0x5A, destination_byte = 0xA5;  // never zeros; a copy that moved nothing is seen

}  // namespace

MemoryMeasurement measure_device_copy(cudaStream_t stream, std::size_t buffer_bytes, int repeats,
                                      const std::function<bool()>& stop) {
  if (repeats < 1) throw Error("--iters must be at least 1");
  std::size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  if (2 * static_cast<double>(buffer_bytes) > 0.9 * static_cast<double>(free_b))
    throw Error(fmt::format("--size {} bytes: a device copy needs two such buffers; the GPU has {} bytes free of {}",
                            buffer_bytes, free_b, total_b));
  DeviceBuffer src(buffer_bytes), dst(buffer_bytes);
  check(cudaMemsetAsync(src.get(), source_byte, buffer_bytes, stream), "cudaMemsetAsync(source)");
  check(cudaMemsetAsync(dst.get(), destination_byte, buffer_bytes, stream), "cudaMemsetAsync(destination)");
  auto copy = [&] {
    check(cudaMemcpyAsync(dst.get(), src.get(), buffer_bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync(device to device)");
  };
  copy();  // warm-up: clocks ramp, the copy path is set up
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(warm-up copy)");

  // In rounds of at most 64 copies, so Ctrl-C is seen between rounds.
  MemoryPass pass{"device copy", 2.0 * static_cast<double>(buffer_bytes), {}};
  constexpr int round = 64;
  Events ev(2 * round);
  for (int done = 0; done < repeats && !(stop && stop());) {
    const int n = std::min(round, repeats - done);
    for (int i = 0; i < n; ++i) {
      check(cudaEventRecord(ev[2 * static_cast<std::size_t>(i)], stream), "cudaEventRecord");
      copy();
      check(cudaEventRecord(ev[2 * static_cast<std::size_t>(i) + 1], stream), "cudaEventRecord");
    }
    check(cudaEventSynchronize(ev[2 * static_cast<std::size_t>(n) - 1]), "cudaEventSynchronize");
    check(cudaGetLastError(), "the timed copies");
    for (int i = 0; i < n; ++i) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, ev[2 * static_cast<std::size_t>(i)], ev[2 * static_cast<std::size_t>(i) + 1]),
            "cudaEventElapsedTime");
      pass.times_s.push_back(static_cast<double>(ms) * 1e-3);
    }
    done += n;
  }

  // The destination holds the source's bytes: first, middle and last.
  MemoryMeasurement m;
  m.array_bytes = buffer_bytes;
  m.arrays = 2;
  m.method = fmt::format("device-to-device cudaMemcpyAsync, best of {}", repeats);
  std::size_t wrong = 0;
  for (std::size_t at : {std::size_t(0), buffer_bytes / 2, buffer_bytes - 1}) {
    unsigned char byte = 0;
    check(cudaMemcpy(&byte, static_cast<const char*>(dst.get()) + at, 1, cudaMemcpyDeviceToHost), "cudaMemcpy(check)");
    if (byte != source_byte) ++wrong;
  }
  m.check_ok = wrong == 0;
  m.check_detail = wrong ? fmt::format("{} of 3 sampled bytes not copied", wrong) : "sampled bytes of the destination copied";
  if (!pass.times_s.empty()) m.passes.push_back(std::move(pass));
  return m;
}

}  // namespace napkin::bench::cuda
