// The NVML functions napkin calls. The toolkit here ships no nvml.h, so the declarations
// are written from the NVML API reference (values of nvmlReturn_t, nvmlClockType_t,
// nvmlTemperatureSensors_t as nvml.h defines them); with nvml.h present it is used instead.
#if __has_include(<nvml.h>)
#include <nvml.h>
#else
extern "C" {
typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
} nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef enum nvmlClockType_enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 } nvmlClockType_t;
typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp);
}
#endif

#include <strings.h>

#include <cstring>

#include "state.hpp"

namespace {

int device_token;  // the one device's handle
nvmlDevice_t the_device() { return reinterpret_cast<nvmlDevice_t>(&device_token); }

struct Call {
  fake::State& st;
  std::lock_guard<std::recursive_mutex> lock;
  explicit Call(const char* name) : st(fake::state()), lock(st.mutex) { st.count(name); }
  bool down() const { return st.config.no_driver || st.config.no_nvml; }
  // "NVML_ERROR_UNINITIALIZED if the library has not been successfully initialized"
  nvmlReturn_t check(nvmlDevice_t d) const {
    if (st.live.nvml_inits <= 0) return NVML_ERROR_UNINITIALIZED;
    return d == the_device() ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
  }
};

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) {
  Call c("nvmlInit_v2");
  if (c.down()) return NVML_ERROR_DRIVER_NOT_LOADED;
  ++c.st.live.nvml_inits;  // reference counted: each init needs its shutdown
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  Call c("nvmlShutdown");
  if (c.st.live.nvml_inits <= 0) {
    c.st.violation("nvmlShutdown without a matching nvmlInit");
    return NVML_ERROR_UNINITIALIZED;
  }
  --c.st.live.nvml_inits;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  Call c("nvmlSystemGetDriverVersion");
  if (c.st.live.nvml_inits <= 0) return NVML_ERROR_UNINITIALIZED;
  const char* v = c.st.config.old_driver ? "550.54.15" : "580.65.06";
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < std::strlen(v) + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::strcpy(version, v);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pci, nvmlDevice_t* device) {
  Call c("nvmlDeviceGetHandleByPciBusId_v2");
  if (c.st.live.nvml_inits <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!pci || !device) return NVML_ERROR_INVALID_ARGUMENT;
  // PCI bus ids as cudaDeviceGetPCIBusId writes them ("domain:bus:device.function", hex).
  if (strcasecmp(pci, c.st.config.pci_bus_id.c_str()) != 0) return NVML_ERROR_NOT_FOUND;
  *device = the_device();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  Call c("nvmlDeviceGetClockInfo");
  if (auto e = c.check(device)) return e;
  if (!clock || type != NVML_CLOCK_SM) return NVML_ERROR_INVALID_ARGUMENT;
  *clock = 1980;  // H100 SXM's boost clock, MHz
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  Call c("nvmlDeviceGetPowerUsage");
  if (auto e = c.check(device)) return e;
  if (!power) return NVML_ERROR_INVALID_ARGUMENT;
  *power = 650000;  // milliwatts
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp) {
  Call c("nvmlDeviceGetTemperature");
  if (auto e = c.check(device)) return e;
  if (!temp || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = 55;  // degrees C
  return NVML_SUCCESS;
}

}  // extern "C"
