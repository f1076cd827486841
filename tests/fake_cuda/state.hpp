#pragma once
// The stand-in's device: configuration and faults (from the environment), device memory,
// streams and events with the ordering rules of the CUDA programming model, live-object
// counts, and the violations it saw. One instance per process, as a driver context is.
// See README.md for the contract; every entry point takes the lock.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace fake {

struct Config {
  std::string name = "NVIDIA H100 80GB HBM3";  // NVIDIA H100 SXM5 80GB, as its driver names it
  int major = 9, minor = 0;                    // compute capability
  std::size_t memory_bytes = std::size_t(80) << 30;
  int l2_bytes = 50 << 20;
  int sms = 132;
  std::string pci_bus_id = "00000000:18:00.0";
  // Faults (NAPKIN_FAKE_CUDA_FAULTS).
  bool no_driver = false, old_driver = false, no_device = false, no_nvml = false;
  bool ignore_transa = false, stream_create_fails = false;
  long malloc_fail_at = 0;  // the Nth cudaMalloc fails (1-based); 0: none
  int bad_state = 0;        // the first N heuristic candidates have state NOT_SUPPORTED
  int matmul_fails = 0;     // cublasLtMatmul fails with candidates 0 .. N-1
};
// NAPKIN_FAKE_CUDA_{NAME,CC,MEMORY,L2,FAULTS}; `faults` overrides the environment's list.
Config config_from_env(const char* faults = nullptr);

// The legacy default stream has id 0; created streams count from 1.
struct Stream {
  std::uint64_t id = 0;
  bool non_blocking = false;
  std::uint64_t last_seq = 0;       // the last operation issued to it
  std::uint64_t complete_upto = 0;  // operations up to here are known complete to the host
  long refills = 0;                 // work issued after the host let it run dry
};

struct Event {
  bool recorded = false;
  std::uint64_t stream_id = 0, seq = 0;
  double time_s = 0;  // device clock when the stream reached it
};

// An interval set of bytes written, to catch reads of memory no one wrote.
struct Written {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // [begin, end), sorted, disjoint
  void add(std::size_t b, std::size_t e);
  bool covers(std::size_t b, std::size_t e) const;
};

struct Deferred;  // a product whose entries are computed when read (cublaslt.cpp)

struct Access {
  std::uint64_t stream_id = 0, seq = 0;
  std::string call;
};

struct Alloc {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  long serial = 0;  // the Nth cudaMalloc, for messages
  // The contents, shared copy-on-write with the pending products that read them (so a later
  // write or free does not change what an issued product computes); null until needed.
  std::shared_ptr<std::vector<unsigned char>> bytes;
  int uniform = -1;                  // every byte equals this (a whole-buffer memset), if >= 0
  Written written;
  std::uint64_t version = 0;         // bumped by every write
  Access last_write;
  std::map<std::uint64_t, Access> last_reads;  // per stream
  std::shared_ptr<Deferred> deferred;          // a pending product writing here
};

struct Counters {
  long allocations = 0, streams = 0, events = 0, lt_handles = 0, matmul_descs = 0, layouts = 0, preferences = 0,
       nvml_inits = 0;
};

class State {
 public:
  std::recursive_mutex mutex;
  Config config;
  Counters live;
  std::vector<std::string> violations;
  std::map<std::string, long> calls;
  double device_time_s = 0;
  std::uint64_t seq = 0;
  long mallocs = 0;
  std::map<std::uintptr_t, Alloc> allocs;  // by base
  Stream legacy;
  std::map<const void*, std::unique_ptr<Stream>> streams;  // live, by handle
  std::map<const void*, std::unique_ptr<Event>> events;
  std::set<const void*> lt_handles, descs, layouts, prefs;
  std::set<const void*> dead;  // destroyed handles: never reused, so a second destroy is seen
  std::vector<std::shared_ptr<void>> graveyard;  // destroyed objects, kept so their addresses are not reused

  State();
  ~State();  // writes NAPKIN_FAKE_CUDA_REPORT
  void reset(const char* faults);

  void violation(const std::string& what);
  void count(const char* call) { ++calls[call]; }

  // Device memory. The addresses come from a reserved, inaccessible range and are never
  // reused, so a host dereference faults and a freed pointer stays recognisably freed.
  bool is_device_pointer(const void* p) const;
  Alloc* find(const void* p, std::size_t bytes, const char* call, const char* what);
  std::uintptr_t reserve(std::size_t bytes);  // 0 when the range is exhausted
  std::size_t used_bytes() const;

  // Streams. nullptr and cudaStreamLegacy are the legacy stream; an unknown or destroyed
  // handle is null with a violation recorded.
  Stream* stream(const void* handle, const char* call);
  // Issues an operation on `s` lasting `duration_s` of device time; returns its sequence.
  std::uint64_t issue(Stream& s, double duration_s);
  // Whether operation (t, q) is ordered before new work on `s` (same stream, known complete,
  // or the legacy stream's implicit synchronisation with blocking streams).
  bool ordered_before(const Access& a, const Stream& s) const;
  // Records an access by an operation on `s`; false (and a violation) when it races a
  // conflicting access that is not ordered before it.
  bool access(Alloc& a, Stream& s, std::uint64_t seq, bool write, const char* call, const char* what);
  void destroy_stream(const void* handle);  // keeps its ordering facts: its work may still run
  long refills() const;                      // over every non-blocking stream, live or destroyed
  void host_synchronized(Stream& s, std::uint64_t upto);  // the host saw `s` complete to `upto`
  void device_synchronized();                             // everything issued is complete

  // Contents. A write first computes a pending product writing the range, unless it
  // overwrites all of it.
  void write(Alloc& a, std::size_t off, const void* src, std::size_t n);
  void fill(Alloc& a, std::size_t off, int byte, std::size_t n);
  // Reads [off, off + n) into dst; false (and a violation) when some byte was never written.
  bool read(Alloc& a, std::size_t off, void* dst, std::size_t n, const char* call);
  const unsigned char* materialize(Alloc& a);  // the allocation's bytes, computing a pending product
  static const unsigned char* storage(Alloc& a);  // the bytes as they are, pending products aside
  static unsigned char* writable(Alloc& a);       // the same, unshared first (copy on write)
  void release(Alloc& a);                // cudaFree

 private:
  std::uintptr_t region_ = 0, next_ = 0, end_ = 0;
  std::vector<std::unique_ptr<Stream>> dead_streams_;
};

State& state();

// product.cpp: compute the entries overlapping [off, off + n) of the product pending on `a`
// (a write: all of them, or drop it if the write covers it all).
void settle_writer(State& st, Alloc& a, std::size_t off, std::size_t n, bool drop_if_covered);

}  // namespace fake
