#pragma once
// GPU clock, power and temperature while the timed products run, through NVML loaded at
// run time (dlopen NAPKIN_NVML_LIBRARY, "libnvidia-ml.so.1" in the real module): no build
// dependency, and a machine without NVML simply reports no telemetry.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/result.hpp"

namespace napkin::bench::cuda {

// The installed driver's version ("580.65.06"), from NVML; nullopt where NVML is missing.
std::optional<std::string> nvml_driver_version();

class NvmlSampler {
 public:
  // `pci_bus_id` as cudaDeviceGetPCIBusId gives it, so NVML and CUDA agree on the device
  // whatever CUDA_VISIBLE_DEVICES says.
  explicit NvmlSampler(const std::string& pci_bus_id, std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  bool available() const { return device_ != nullptr; }
  // Samples at once, then every `period` on a thread until stop(). stop() wakes the thread
  // (a condition variable, not a sleep), so it returns at once whatever the period.
  void start();
  Telemetry stop();  // median SM clock, max power, max temperature; empty if not started

 private:
  struct Sample {
    double sm_mhz = -1, watts = -1, celsius = -1;
  };
  Sample sample() const;

  void* lib_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  using GetClock = int (*)(void*, int, unsigned*);
  using GetUint = int (*)(void*, unsigned*);
  using GetTemp = int (*)(void*, int, unsigned*);
  GetClock get_clock_ = nullptr;
  GetUint get_power_ = nullptr;
  GetTemp get_temp_ = nullptr;
  int (*shutdown_)() = nullptr;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
  std::vector<Sample> samples_;  // guarded by mutex_ while the thread runs
};

}  // namespace napkin::bench::cuda
