#include "bench/cuda/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>

#ifndef NAPKIN_NVML_LIBRARY
#define NAPKIN_NVML_LIBRARY "libnvidia-ml.so.1"
#endif

namespace napkin::bench::cuda {
namespace {

// From nvml.h (NVML API reference): NVML_SUCCESS = 0, NVML_CLOCK_SM = 1,
// NVML_TEMPERATURE_GPU = 0; nvmlDeviceGetPowerUsage reports milliwatts;
// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80.
constexpr int nvml_success = 0, nvml_clock_sm = 1, nvml_temperature_gpu = 0;
constexpr unsigned nvml_driver_version_buffer = 80;

template <typename F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

std::optional<std::string> nvml_driver_version() {
  void* lib = dlopen(NAPKIN_NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::nullopt;
  auto init = sym<int (*)()>(lib, "nvmlInit_v2");
  auto shutdown = sym<int (*)()>(lib, "nvmlShutdown");
  auto version = sym<int (*)(char*, unsigned)>(lib, "nvmlSystemGetDriverVersion");
  std::optional<std::string> out;
  if (init && shutdown && version && init() == nvml_success) {
    char buf[nvml_driver_version_buffer] = {};
    if (version(buf, sizeof buf) == nvml_success) out = std::string(buf);
    shutdown();
  }
  dlclose(lib);
  return out;
}

NvmlSampler::NvmlSampler(const std::string& pci_bus_id, std::chrono::milliseconds period) : period_(period) {
  lib_ = dlopen(NAPKIN_NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  auto init = sym<int (*)()>(lib_, "nvmlInit_v2");
  auto by_pci = sym<int (*)(const char*, void**)>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  shutdown_ = sym<int (*)()>(lib_, "nvmlShutdown");
  get_clock_ = sym<GetClock>(lib_, "nvmlDeviceGetClockInfo");
  get_power_ = sym<GetUint>(lib_, "nvmlDeviceGetPowerUsage");
  get_temp_ = sym<GetTemp>(lib_, "nvmlDeviceGetTemperature");
  if (!init || !by_pci || !shutdown_ || init() != nvml_success) {
    dlclose(lib_);
    lib_ = nullptr;
    return;
  }
  void* dev = nullptr;
  if (by_pci(pci_bus_id.c_str(), &dev) == nvml_success) device_ = dev;
}

NvmlSampler::~NvmlSampler() {
  if (thread_.joinable()) stop();
  if (lib_) {
    shutdown_();
    dlclose(lib_);
  }
}

NvmlSampler::Sample NvmlSampler::sample() const {
  Sample s;
  unsigned v = 0;
  if (get_clock_ && get_clock_(device_, nvml_clock_sm, &v) == nvml_success) s.sm_mhz = v;
  if (get_power_ && get_power_(device_, &v) == nvml_success) s.watts = v / 1000.0;
  if (get_temp_ && get_temp_(device_, nvml_temperature_gpu, &v) == nvml_success) s.celsius = v;
  return s;
}

void NvmlSampler::start() {
  if (!available() || thread_.joinable()) return;
  samples_.clear();
  stopping_ = false;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    do {
      lock.unlock();
      const Sample s = sample();
      lock.lock();
      samples_.push_back(s);
    } while (!wake_.wait_for(lock, period_, [this] { return stopping_; }));
  });
}

Telemetry NvmlSampler::stop() {
  Telemetry t;
  if (!thread_.joinable()) return t;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  samples_.push_back(sample());
  std::vector<double> clocks;
  for (const Sample& s : samples_) {
    if (s.sm_mhz >= 0) clocks.push_back(s.sm_mhz);
    if (s.watts >= 0) t.power_watts = std::max(t.power_watts.value_or(0), s.watts);
    if (s.celsius >= 0) t.temperature_c = std::max(t.temperature_c.value_or(0), s.celsius);
  }
  if (!clocks.empty()) {
    std::nth_element(clocks.begin(), clocks.begin() + static_cast<long>(clocks.size() / 2), clocks.end());
    t.sm_clock_mhz = clocks[clocks.size() / 2];
  }
  return t;
}

}  // namespace napkin::bench::cuda
