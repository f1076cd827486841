// The CUDA runtime functions napkin calls (and cudaMemset, which the stand-in's own tests use
// to show the legacy stream's ordering), on the host. Semantics from the comments of
// cuda_runtime_api.h (CUDA 13.0) and the CUDA Runtime API reference; where they say the
// result is undefined, this stand-in refuses and records a violation.
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "state.hpp"

using fake::State;

namespace {

thread_local cudaError_t last_error = cudaSuccess;

cudaError_t fail(cudaError_t e) {
  last_error = e;
  return e;
}

// Every entry point: lock, count the call, and answer "no driver" / "no device" the way the
// runtime does before anything else.
struct Call {
  State& st;
  std::lock_guard<std::recursive_mutex> lock;
  explicit Call(const char* name) : st(fake::state()), lock(st.mutex) { st.count(name); }
  cudaError_t device_error() const {
    if (st.config.no_driver || st.config.old_driver) return cudaErrorInsufficientDriver;
    if (st.config.no_device) return cudaErrorNoDevice;
    return cudaSuccess;
  }
};

// Device time of memory traffic, for the event clock: HBM3 at ~3 TB/s, PCIe at ~25 GB/s.
double device_seconds(std::size_t bytes) { return static_cast<double>(bytes) / 3e12; }
double pcie_seconds(std::size_t bytes) { return static_cast<double>(bytes) / 25e9; }

}  // namespace

cudaError_t cudaDriverGetVersion(int* version) {
  Call c("cudaDriverGetVersion");
  if (!version) return fail(cudaErrorInvalidValue);
  // "If no driver is installed, then 0 is returned as the driver version."
  *version = c.st.config.no_driver ? 0 : c.st.config.old_driver ? 12040 : 13000;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  Call c("cudaGetDeviceCount");
  if (!count) return fail(cudaErrorInvalidValue);
  *count = 0;
  if (auto e = c.device_error()) return fail(e);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  Call c("cudaGetDeviceProperties");
  if (auto e = c.device_error()) return fail(e);
  if (!prop) return fail(cudaErrorInvalidValue);
  if (device != 0) return fail(cudaErrorInvalidDevice);
  std::memset(prop, 0, sizeof *prop);
  const auto& cfg = c.st.config;
  std::strncpy(prop->name, cfg.name.c_str(), sizeof prop->name - 1);
  prop->totalGlobalMem = cfg.memory_bytes;
  prop->major = cfg.major;
  prop->minor = cfg.minor;
  prop->l2CacheSize = cfg.l2_bytes;
  prop->multiProcessorCount = cfg.sms;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  Call c("cudaSetDevice");
  if (auto e = c.device_error()) return fail(e);
  return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaDeviceGetPCIBusId(char* pci, int len, int device) {
  Call c("cudaDeviceGetPCIBusId");
  if (auto e = c.device_error()) return fail(e);
  if (device != 0) return fail(cudaErrorInvalidDevice);
  const std::string& id = c.st.config.pci_bus_id;
  // "len: maximum length of string to store in name"; NVML asks for 13 characters at least.
  if (!pci || len <= static_cast<int>(id.size())) return fail(cudaErrorInvalidValue);
  std::memcpy(pci, id.c_str(), id.size() + 1);
  return cudaSuccess;
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalState: return "the resource is not in a valid state to perform the requested operation";
    case cudaErrorNotReady: return "device not ready";
    default: return "unrecognized error code";
  }
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  Call c("cudaMemGetInfo");
  if (auto e = c.device_error()) return fail(e);
  if (!free_bytes || !total_bytes) return fail(cudaErrorInvalidValue);
  // The context keeps about 0.5 GiB for itself, as a real one does.
  const std::size_t context = std::size_t(512) << 20, used = c.st.used_bytes() + context;
  *total_bytes = c.st.config.memory_bytes;
  *free_bytes = used < *total_bytes ? *total_bytes - used : 0;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  Call c("cudaMalloc");
  if (auto e = c.device_error()) return fail(e);
  if (!ptr || bytes == 0) return fail(cudaErrorInvalidValue);
  *ptr = nullptr;
  const long n = ++c.st.mallocs;
  if (c.st.config.malloc_fail_at == n) return fail(cudaErrorMemoryAllocation);  // injected
  const std::size_t context = std::size_t(512) << 20;
  if (bytes > c.st.config.memory_bytes || c.st.used_bytes() + context + bytes > c.st.config.memory_bytes)
    return fail(cudaErrorMemoryAllocation);
  const std::uintptr_t base = c.st.reserve(bytes);
  if (!base) return fail(cudaErrorMemoryAllocation);
  fake::Alloc& a = c.st.allocs[base];
  a.base = base;
  a.size = bytes;
  a.serial = n;
  ++c.st.live.allocations;
  *ptr = reinterpret_cast<void*>(base);
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  Call c("cudaFree");
  if (!ptr) return cudaSuccess;  // "If devPtr is 0, no operation is performed."
  auto it = c.st.allocs.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == c.st.allocs.end()) {
    c.st.violation(std::string("cudaFree: ") +
                   (c.st.is_device_pointer(ptr) ? "double free, or not the start of an allocation" : "not device memory"));
    return fail(cudaErrorInvalidValue);
  }
  c.st.device_synchronized();  // cudaFree waits for the device (implicit synchronisation)
  c.st.release(it->second);
  --c.st.live.allocations;
  return cudaSuccess;
}

namespace {

// cudaMemcpy and cudaMemcpyAsync: host <-> device, and device to device (bench --memory).
cudaError_t copy(Call& c, const char* name, void* dst, const void* src, size_t n, cudaMemcpyKind kind, fake::Stream& s,
                 bool synchronous) {
  State& st = c.st;
  if (kind == cudaMemcpyHostToDevice) {
    if (st.is_device_pointer(src)) {
      st.violation(std::string(name) + ": cudaMemcpyHostToDevice from device memory");
      return fail(cudaErrorInvalidValue);
    }
    fake::Alloc* a = st.find(dst, n, name, "the destination");
    if (!a) return fail(cudaErrorInvalidValue);
    const std::uint64_t q = st.issue(s, pcie_seconds(n));
    if (!st.access(*a, s, q, true, name, "the destination")) return fail(cudaErrorIllegalState);
    st.write(*a, reinterpret_cast<std::uintptr_t>(dst) - a->base, src, n);
    // From pageable memory the call returns once the data is staged; the DMA to the device
    // may still be running (cudaMemcpy: "may not have completed"), so the write stays
    // pending on the stream until the host synchronises with it.
    return cudaSuccess;
  }
  if (kind == cudaMemcpyDeviceToHost) {
    if (st.is_device_pointer(dst)) {
      st.violation(std::string(name) + ": cudaMemcpyDeviceToHost into device memory");
      return fail(cudaErrorInvalidValue);
    }
    fake::Alloc* a = st.find(src, n, name, "the source");
    if (!a) return fail(cudaErrorInvalidValue);
    const std::uint64_t q = st.issue(s, pcie_seconds(n));
    if (!st.access(*a, s, q, false, name, "the source")) return fail(cudaErrorIllegalState);
    if (!st.read(*a, reinterpret_cast<std::uintptr_t>(src) - a->base, dst, n, name)) return fail(cudaErrorIllegalState);
    // To pageable memory the copy is complete when the call returns; on the legacy stream
    // that completes everything issued to it before.
    if (synchronous) st.host_synchronized(s, q);
    return cudaSuccess;
  }
  if (kind == cudaMemcpyDeviceToDevice) {
    // Both ends device memory; the ranges may not overlap (the runtime's copies are not
    // memmove: "The memory areas may not overlap", as for memcpy). The device moves each
    // byte in and out of memory: 2n bytes at the device rate.
    if (!st.is_device_pointer(src) || !st.is_device_pointer(dst)) {
      st.violation(std::string(name) + ": cudaMemcpyDeviceToDevice with a host pointer");
      return fail(cudaErrorInvalidValue);
    }
    fake::Alloc* from = st.find(src, n, name, "the source");
    fake::Alloc* to = from ? st.find(dst, n, name, "the destination") : nullptr;
    if (!from || !to) return fail(cudaErrorInvalidValue);
    const auto s0 = reinterpret_cast<std::uintptr_t>(src), d0 = reinterpret_cast<std::uintptr_t>(dst);
    if (from == to && s0 < d0 + n && d0 < s0 + n) {
      st.violation(std::string(name) + ": device-to-device copy between overlapping ranges");
      return fail(cudaErrorInvalidValue);
    }
    const std::uint64_t q = st.issue(s, device_seconds(2 * n));
    if (!st.access(*from, s, q, false, name, "the source") || !st.access(*to, s, q, true, name, "the destination"))
      return fail(cudaErrorIllegalState);
    if (from->uniform >= 0 && !from->deferred && from->written.covers(0, from->size) && s0 == from->base && n == from->size && n == to->size && d0 == to->base) {
      st.fill(*to, 0, from->uniform, n);  // a whole uniform buffer onto a whole buffer: no host copy of it
    } else {
      std::vector<unsigned char> bytes(n);
      if (!st.read(*from, s0 - from->base, bytes.data(), n, name)) return fail(cudaErrorIllegalState);
      st.write(*to, d0 - to->base, bytes.data(), n);
    }
    if (synchronous) st.host_synchronized(s, q);
    return cudaSuccess;
  }
  st.violation(std::string(name) + ": only host<->device and device-to-device copies are implemented (kind " +
               std::to_string(kind) + ")");
  return fail(cudaErrorInvalidValue);
}

cudaError_t set(Call& c, const char* name, void* dst, int value, size_t n, fake::Stream& s) {
  fake::Alloc* a = c.st.find(dst, n, name, "the destination");
  if (!a) return fail(cudaErrorInvalidValue);
  const std::uint64_t q = c.st.issue(s, device_seconds(n));
  if (!c.st.access(*a, s, q, true, name, "the destination")) return fail(cudaErrorIllegalState);
  c.st.fill(*a, reinterpret_cast<std::uintptr_t>(dst) - a->base, value, n);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  Call c("cudaMemcpy");
  if (auto e = c.device_error()) return fail(e);
  return copy(c, "cudaMemcpy", dst, src, n, kind, c.st.legacy, true);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream) {
  Call c("cudaMemcpyAsync");
  if (auto e = c.device_error()) return fail(e);
  fake::Stream* s = c.st.stream(stream, "cudaMemcpyAsync");
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  return copy(c, "cudaMemcpyAsync", dst, src, n, kind, *s, false);
}

cudaError_t cudaMemset(void* dst, int value, size_t n) {
  Call c("cudaMemset");
  if (auto e = c.device_error()) return fail(e);
  return set(c, "cudaMemset", dst, value, n, c.st.legacy);  // asynchronous to the host, on the legacy stream
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t n, cudaStream_t stream) {
  Call c("cudaMemsetAsync");
  if (auto e = c.device_error()) return fail(e);
  fake::Stream* s = c.st.stream(stream, "cudaMemsetAsync");
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  return set(c, "cudaMemsetAsync", dst, value, n, *s);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  Call c("cudaStreamCreateWithFlags");
  if (auto e = c.device_error()) return fail(e);
  if (!stream || (flags != cudaStreamDefault && flags != cudaStreamNonBlocking)) return fail(cudaErrorInvalidValue);
  if (c.st.config.stream_create_fails) return fail(cudaErrorMemoryAllocation);  // injected
  auto s = std::make_unique<fake::Stream>();
  static std::uint64_t next_id = 0;
  s->id = ++next_id;
  s->non_blocking = flags == cudaStreamNonBlocking;
  *stream = reinterpret_cast<cudaStream_t>(s.get());
  c.st.streams[s.get()] = std::move(s);
  ++c.st.live.streams;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  Call c("cudaStreamDestroy");
  if (!c.st.streams.count(stream)) {
    c.st.violation(c.st.dead.count(stream) ? "cudaStreamDestroy: the stream was already destroyed"
                                           : "cudaStreamDestroy: not a stream napkin created");
    return fail(cudaErrorInvalidResourceHandle);
  }
  c.st.destroy_stream(stream);
  --c.st.live.streams;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  Call c("cudaStreamSynchronize");
  fake::Stream* s = c.st.stream(stream, "cudaStreamSynchronize");
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  c.st.host_synchronized(*s, s->last_seq);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  Call c("cudaEventCreate");
  if (auto e = c.device_error()) return fail(e);
  if (!event) return fail(cudaErrorInvalidValue);
  auto ev = std::make_unique<fake::Event>();
  *event = reinterpret_cast<cudaEvent_t>(ev.get());
  c.st.events[ev.get()] = std::move(ev);
  ++c.st.live.events;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Call c("cudaEventDestroy");
  auto it = c.st.events.find(event);
  if (it == c.st.events.end()) {
    c.st.violation(c.st.dead.count(event) ? "cudaEventDestroy: the event was already destroyed"
                                          : "cudaEventDestroy: not an event");
    return fail(cudaErrorInvalidResourceHandle);
  }
  c.st.graveyard.push_back(std::shared_ptr<void>(std::move(it->second)));
  c.st.events.erase(it);
  c.st.dead.insert(event);
  --c.st.live.events;
  return cudaSuccess;
}

namespace {
fake::Event* event_of(Call& c, cudaEvent_t event, const char* name) {
  auto it = c.st.events.find(event);
  if (it != c.st.events.end()) return it->second.get();
  c.st.violation(std::string(name) + (c.st.dead.count(event) ? ": event used after cudaEventDestroy" : ": not an event"));
  return nullptr;
}
}  // namespace

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  Call c("cudaEventRecord");
  fake::Event* e = event_of(c, event, "cudaEventRecord");
  fake::Stream* s = c.st.stream(stream, "cudaEventRecord");
  if (!e || !s) return fail(cudaErrorInvalidResourceHandle);
  // The event completes when the work issued to the stream before it has: it captures the
  // stream's last operation and the device clock at that point.
  *e = {true, s->id, s->last_seq, c.st.device_time_s};
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Call c("cudaEventSynchronize");
  fake::Event* e = event_of(c, event, "cudaEventSynchronize");
  if (!e) return fail(cudaErrorInvalidResourceHandle);
  if (!e->recorded) return cudaSuccess;  // "If cudaEventRecord() has not been called ... returns immediately"
  fake::Stream* s = e->stream_id == 0 ? &c.st.legacy : nullptr;
  for (auto& [h, st] : c.st.streams)
    if (st->id == e->stream_id) s = st.get();
  if (s) c.st.host_synchronized(*s, e->seq);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  Call c("cudaEventElapsedTime");
  fake::Event* a = event_of(c, start, "cudaEventElapsedTime");
  fake::Event* b = event_of(c, end, "cudaEventElapsedTime");
  if (!ms) return fail(cudaErrorInvalidValue);
  if (!a || !b || !a->recorded || !b->recorded) return fail(cudaErrorInvalidResourceHandle);
  // Both must be complete ("cudaEventQuery() would return cudaErrorNotReady" otherwise).
  auto complete = [&](const fake::Event& e) {
    if (e.stream_id == 0) return e.seq <= c.st.legacy.complete_upto;
    for (auto& [h, st] : c.st.streams)
      if (st->id == e.stream_id) return e.seq <= st->complete_upto;
    return true;  // its stream was destroyed, which waits for its work
  };
  if (!complete(*a) || !complete(*b)) {
    c.st.violation("cudaEventElapsedTime: an event has not completed (the host did not synchronise with it)");
    return fail(cudaErrorNotReady);
  }
  *ms = static_cast<float>((b->time_s - a->time_s) * 1e3);
  return cudaSuccess;
}
