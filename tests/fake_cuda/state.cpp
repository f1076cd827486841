#include "state.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fake_cuda.h"

namespace fake {
namespace {

constexpr std::size_t region_bytes = std::size_t(1) << 38;  // 256 GiB of address space, never backed
constexpr std::size_t alignment = 256;                      // cudaMalloc's documented alignment

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

long number_after(const std::string& item, const std::string& key) {
  return std::strtol(item.c_str() + key.size(), nullptr, 10);
}

std::string stream_name(std::uint64_t id) { return id == 0 ? "the legacy default stream" : "stream " + std::to_string(id); }

}  // namespace

Config config_from_env(const char* faults) {
  Config c;
  if (auto v = env("NAPKIN_FAKE_CUDA_NAME"); !v.empty()) c.name = v;
  if (auto v = env("NAPKIN_FAKE_CUDA_CC"); !v.empty()) std::sscanf(v.c_str(), "%d.%d", &c.major, &c.minor);
  if (auto v = env("NAPKIN_FAKE_CUDA_MEMORY"); !v.empty()) c.memory_bytes = std::strtoull(v.c_str(), nullptr, 10);
  if (auto v = env("NAPKIN_FAKE_CUDA_L2"); !v.empty()) c.l2_bytes = static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
  std::stringstream list(faults ? faults : env("NAPKIN_FAKE_CUDA_FAULTS"));
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == "no_driver") c.no_driver = true;
    else if (item == "old_driver") c.old_driver = true;
    else if (item == "no_device") c.no_device = true;
    else if (item == "no_nvml") c.no_nvml = true;
    else if (item == "ignore_transa") c.ignore_transa = true;
    else if (item == "stream_create_fails") c.stream_create_fails = true;
    else if (item.rfind("malloc_fail=", 0) == 0) c.malloc_fail_at = number_after(item, "malloc_fail=");
    else if (item.rfind("bad_state=", 0) == 0) c.bad_state = static_cast<int>(number_after(item, "bad_state="));
    else if (item.rfind("matmul_fail=", 0) == 0) c.matmul_fails = static_cast<int>(number_after(item, "matmul_fail="));
    else if (!item.empty()) {
      std::fprintf(stderr, "napkin fake CUDA: unknown fault '%s' in NAPKIN_FAKE_CUDA_FAULTS\n", item.c_str());
      std::abort();  // a typo in a test must not pass as "no fault"
    }
  }
  return c;
}

void Written::add(std::size_t b, std::size_t e) {
  if (b >= e) return;
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (auto [rb, re] : ranges) {
    if (re < b || rb > e) out.emplace_back(rb, re);
    else b = std::min(b, rb), e = std::max(e, re);
  }
  out.emplace_back(b, e);
  std::sort(out.begin(), out.end());
  ranges = std::move(out);
}

bool Written::covers(std::size_t b, std::size_t e) const {
  for (auto [rb, re] : ranges)
    if (rb <= b && e <= re) return true;
  return b >= e;
}

State::State() : config(config_from_env()) {}

State::~State() {
  const std::string path = env("NAPKIN_FAKE_CUDA_REPORT");
  if (!path.empty()) {
    nlohmann::json j;
    j["live"] = {{"allocations", live.allocations}, {"streams", live.streams},         {"events", live.events},
                 {"lt_handles", live.lt_handles},   {"matmul_descs", live.matmul_descs}, {"layouts", live.layouts},
                 {"preferences", live.preferences}, {"nvml_inits", live.nvml_inits}};
    j["violations"] = violations;
    j["calls"] = calls;
    j["nonblocking_stream_refills"] = refills();
    std::ofstream(path) << j.dump(1) << "\n";
  }
  if (region_) munmap(reinterpret_cast<void*>(region_), region_bytes);
}

void State::reset(const char* faults) {
  std::lock_guard lock(mutex);
  config = config_from_env(faults);
  live = {};
  violations.clear();
  calls.clear();
  allocs.clear();
  streams.clear();
  dead_streams_.clear();
  events.clear();
  lt_handles.clear(), descs.clear(), layouts.clear(), prefs.clear();
  dead.clear();
  graveyard.clear();
  legacy = Stream{};
  mallocs = 0;
}

void State::violation(const std::string& what) { violations.push_back(what); }

bool State::is_device_pointer(const void* p) const {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  return region_ && v >= region_ && v < end_;
}

std::uintptr_t State::reserve(std::size_t bytes) {
  if (!region_) {
    void* r = mmap(nullptr, region_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return 0;
    region_ = next_ = reinterpret_cast<std::uintptr_t>(r);
    end_ = region_ + region_bytes;
    next_ = (next_ + alignment - 1) / alignment * alignment;
  }
  // A guard gap after each allocation, so running off its end lands in no allocation.
  const std::size_t step = (bytes + alignment - 1) / alignment * alignment + alignment;
  if (step > end_ - next_) return 0;
  const std::uintptr_t out = next_;
  next_ += step;
  return out;
}

std::size_t State::used_bytes() const {
  std::size_t sum = 0;
  for (const auto& [b, a] : allocs) sum += a.size;
  return sum;
}

Alloc* State::find(const void* p, std::size_t bytes, const char* call, const char* what) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  auto it = allocs.upper_bound(v);
  if (it != allocs.begin()) {
    --it;
    Alloc& a = it->second;
    if (v < a.base + a.size) {
      if (bytes > a.base + a.size - v) {
        violation(std::string(call) + ": " + what + " runs " + std::to_string(bytes - (a.base + a.size - v)) +
                  " bytes past the end of allocation #" + std::to_string(a.serial) + " (" + std::to_string(a.size) +
                  " bytes)");
        return nullptr;
      }
      return &a;
    }
  }
  violation(std::string(call) + ": " + what + (is_device_pointer(p) ? " is freed device memory (use after free)"
                                                                     : " is not device memory"));
  return nullptr;
}

Stream* State::stream(const void* handle, const char* call) {
  // cudaStreamLegacy ((cudaStream_t)0x1) and 0 both name the legacy default stream.
  if (handle == nullptr || handle == reinterpret_cast<const void*>(0x1)) return &legacy;
  auto it = streams.find(handle);
  if (it != streams.end()) return it->second.get();
  violation(std::string(call) + (dead.count(handle) ? ": stream used after cudaStreamDestroy" : ": unknown stream handle"));
  return nullptr;
}

std::uint64_t State::issue(Stream& s, double duration_s) {
  const std::uint64_t q = ++seq;
  if (s.last_seq != 0 && s.complete_upto >= s.last_seq) ++s.refills;
  s.last_seq = q;
  device_time_s += duration_s;
  return q;
}

bool State::ordered_before(const Access& a, const Stream& s) const {
  if (a.seq == 0 || a.stream_id == s.id) return true;
  const Stream* t = nullptr;
  if (a.stream_id == 0) t = &legacy;
  for (const auto& [h, st] : streams)
    if (st->id == a.stream_id) t = st.get();
  for (const auto& st : dead_streams_)
    if (st->id == a.stream_id) t = st.get();
  if (!t) return true;
  if (a.seq <= t->complete_upto) return true;
  // The legacy stream waits for all blocking streams and they wait for it (CUDA Runtime
  // API, "Stream synchronization behavior"); non-blocking streams never synchronise with it.
  const bool s_legacy = s.id == 0, t_legacy = t->id == 0;
  if (s_legacy && !t->non_blocking) return true;
  if (t_legacy && !s.non_blocking) return true;
  return false;
}

bool State::access(Alloc& a, Stream& s, std::uint64_t q, bool write, const char* call, const char* what) {
  auto race = [&](const Access& other, const char* kind) {
    violation(std::string("race: ") + call + " on " + stream_name(s.id) + (write ? " writes " : " reads ") + what +
              " (allocation #" + std::to_string(a.serial) + "), which " + other.call + " on " +
              stream_name(other.stream_id) + " " + kind + " without synchronisation in between");
  };
  if (!ordered_before(a.last_write, s)) {
    race(a.last_write, "writes");
    return false;
  }
  if (write)
    for (const auto& [id, r] : a.last_reads)
      if (!ordered_before(r, s)) {
        race(r, "reads");
        return false;
      }
  if (write) {
    a.last_write = {s.id, q, call};
    a.last_reads.clear();
  } else {
    a.last_reads[s.id] = {s.id, q, call};
  }
  return true;
}

void State::destroy_stream(const void* handle) {
  auto it = streams.find(handle);
  dead_streams_.push_back(std::move(it->second));
  streams.erase(it);
  dead.insert(handle);
}

long State::refills() const {
  long n = 0;
  for (const auto& [h, s] : streams) n += s->non_blocking ? s->refills : 0;
  for (const auto& s : dead_streams_) n += s->non_blocking ? s->refills : 0;
  return n;
}

void State::host_synchronized(Stream& s, std::uint64_t upto) {
  s.complete_upto = std::max(s.complete_upto, upto);
  auto also = [&](Stream& t) { t.complete_upto = std::max(t.complete_upto, upto); };
  if (s.id == 0) {
    for (auto& [h, t] : streams)
      if (!t->non_blocking) also(*t);
  } else if (!s.non_blocking) {
    also(legacy);
  }
}

void State::device_synchronized() {
  legacy.complete_upto = seq;
  for (auto& [h, t] : streams) t->complete_upto = seq;
  for (auto& t : dead_streams_) t->complete_upto = seq;
}

const unsigned char* State::storage(Alloc& a) {
  // Never-written bytes read as 0xA5: cudaMalloc's memory "is not cleared".
  if (!a.bytes)
    a.bytes = std::make_shared<std::vector<unsigned char>>(a.size, static_cast<unsigned char>(a.uniform >= 0 ? a.uniform : 0xA5));
  a.uniform = -1;
  return a.bytes->data();
}

unsigned char* State::writable(Alloc& a) {
  storage(a);
  if (a.bytes.use_count() > 1) a.bytes = std::make_shared<std::vector<unsigned char>>(*a.bytes);
  return a.bytes->data();
}

const unsigned char* State::materialize(Alloc& a) {
  settle_writer(*this, a, 0, a.size, false);
  return storage(a);
}

void State::write(Alloc& a, std::size_t off, const void* src, std::size_t n) {
  settle_writer(*this, a, off, n, true);
  std::memcpy(writable(a) + off, src, n);
  a.written.add(off, off + n);
  ++a.version;
}

void State::fill(Alloc& a, std::size_t off, int byte, std::size_t n) {
  settle_writer(*this, a, off, n, true);
  if (off == 0 && n == a.size) {  // the whole buffer: no need to hold its bytes
    a.bytes.reset();
    a.uniform = byte & 0xFF;
  } else {
    std::memset(writable(a) + off, byte, n);
  }
  a.written.add(off, off + n);
  ++a.version;
}

bool State::read(Alloc& a, std::size_t off, void* dst, std::size_t n, const char* call) {
  settle_writer(*this, a, off, n, false);
  if (!a.written.covers(off, off + n)) {
    violation(std::string(call) + ": reads bytes of allocation #" + std::to_string(a.serial) + " that nothing wrote");
    return false;
  }
  if (!a.bytes && a.uniform >= 0) std::memset(dst, a.uniform, n);
  else std::memcpy(dst, storage(a) + off, n);
  return true;
}

void State::release(Alloc& a) {
  a.deferred.reset();
  allocs.erase(a.base);
}

State& state() {
  static State s;
  return s;
}

}  // namespace fake

extern "C" {

void napkin_fake_cuda_reset(const char* faults) { fake::state().reset(faults); }

napkin_fake_cuda_live napkin_fake_cuda_live_objects(void) {
  auto& st = fake::state();
  std::lock_guard lock(st.mutex);
  const auto& c = st.live;
  return {c.allocations, c.streams, c.events, c.lt_handles, c.matmul_descs, c.layouts, c.preferences, c.nvml_inits};
}

int napkin_fake_cuda_violation_count(void) {
  auto& st = fake::state();
  std::lock_guard lock(st.mutex);
  return static_cast<int>(st.violations.size());
}

const char* napkin_fake_cuda_violation(int i) {
  auto& st = fake::state();
  std::lock_guard lock(st.mutex);
  return i >= 0 && i < static_cast<int>(st.violations.size()) ? st.violations[static_cast<std::size_t>(i)].c_str() : nullptr;
}

long napkin_fake_cuda_refills(void) {
  auto& st = fake::state();
  std::lock_guard lock(st.mutex);
  return st.refills();
}

long napkin_fake_cuda_calls(const char* function) {
  auto& st = fake::state();
  std::lock_guard lock(st.mutex);
  const auto it = st.calls.find(function);
  return it == st.calls.end() ? 0 : it->second;
}

}  // extern "C"
