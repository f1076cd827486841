#include "bench/cpu_stream.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace napkin::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Each thread's half-open slice [begin, end) of n elements.
struct Slice {
  std::size_t begin = 0, end = 0;
};
Slice slice(std::size_t n, int threads, int t) {
  const std::size_t per = n / static_cast<std::size_t>(threads), extra = n % static_cast<std::size_t>(threads);
  const auto ut = static_cast<std::size_t>(t);
  const std::size_t begin = ut * per + std::min(ut, extra);
  return {begin, begin + per + (ut < extra ? 1 : 0)};
}

// The value the test pattern puts at element i: never zero, and never the same across a
// slice, so a kernel that skipped elements or a compiler that folded the loop is caught.
double pattern(std::size_t i) { return 1.0 + static_cast<double>(i & 1023) / 1024.0; }

}  // namespace

MemoryMeasurement measure_cpu_stream(std::size_t array_bytes, int threads, int repeats, const std::function<bool()>& stop) {
  if (threads < 1) throw Error("--memory: at least one thread is needed");
  if (repeats < 1) throw Error("--iters must be at least 1");
  const std::size_t n = array_bytes / sizeof(double);
  if (n < static_cast<std::size_t>(threads)) throw Error("--size: each array needs at least one element per thread");
  // Not std::vector: its value-initialisation would touch every page from this thread.
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  constexpr double scalar = 3.0;

  enum class Kernel { init, copy, triad, quit };
  Kernel kernel = Kernel::init;
  auto body = [&](Kernel k, const Slice& s) {
    switch (k) {
      case Kernel::init:
        for (std::size_t i = s.begin; i < s.end; ++i) a[i] = pattern(i), b[i] = 0.5, c[i] = 0.25;
        break;
      case Kernel::copy:
        for (std::size_t i = s.begin; i < s.end; ++i) c[i] = a[i];
        break;
      case Kernel::triad:
        for (std::size_t i = s.begin; i < s.end; ++i) b[i] = a[i] + scalar * c[i];
        break;
      case Kernel::quit:
        break;
    }
  };
  // This thread streams slice 0 itself, so there are exactly `threads` threads on `threads`
  // cores: a spare timing thread could be descheduled while the workers run, and start its
  // clock late. The clock starts before the start barrier and stops after the end barrier,
  // so a run is never timed short.
  std::barrier sync(threads);
  auto work = [&](int t) {
    const Slice s = slice(n, threads, t);
    for (;;) {
      sync.arrive_and_wait();  // the kernel is set
      if (kernel == Kernel::quit) return;
      body(kernel, s);
      sync.arrive_and_wait();  // the kernel is done
    }
  };
  std::vector<std::jthread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  const Slice mine = slice(n, threads, 0);
  auto run = [&](Kernel k) {
    kernel = k;
    const auto t0 = Clock::now();
    sync.arrive_and_wait();
    body(k, mine);
    sync.arrive_and_wait();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };

  MemoryMeasurement m;
  m.array_bytes = n * sizeof(double);
  m.arrays = 3;
  m.threads = threads;
  m.method = "STREAM-style copy (c = a) and triad (b = a + 3c), fp64, " + std::to_string(threads) +
             (threads == 1 ? " thread" : " threads") + ", best of " + std::to_string(repeats);
  MemoryPass copy{"copy", 2.0 * static_cast<double>(m.array_bytes), {}};
  MemoryPass triad{"triad", 3.0 * static_cast<double>(m.array_bytes), {}};
  // Reserved first: nothing below may throw while the workers wait at the barrier.
  copy.times_s.reserve(static_cast<std::size_t>(repeats));
  triad.times_s.reserve(static_cast<std::size_t>(repeats));
  run(Kernel::init);
  double first_pass_s = 0;  // one copy and one triad, timed on the first pass
  for (int r = 0; r < repeats && !(stop && stop()); ++r) {
    copy.times_s.push_back(run(Kernel::copy));
    triad.times_s.push_back(run(Kernel::triad));
    if (r == 0) first_pass_s = copy.times_s.back() + triad.times_s.back();
    if (r == 0 && first_pass_s * repeats > max_timed_s_per_shape) break;  // refused below, once the workers are gone
  }
  kernel = Kernel::quit;  // the workers return without the second barrier
  sync.arrive_and_wait();
  pool.clear();  // joins
  if (first_pass_s * repeats > max_timed_s_per_shape)
    throw Error(fmt::format("--iters {}: a copy and a triad over {:.0f} MiB arrays take {:.3g} s here, so {} of them would take {:.3g} h; "
                            "napkin times at most {:.0f} h of passes: give --iters at most {}",
                            repeats, static_cast<double>(m.array_bytes) / 1048576, first_pass_s, repeats,
                            first_pass_s * repeats / 3600, max_timed_s_per_shape / 3600,
                            static_cast<long long>(std::max(1.0, std::floor(max_timed_s_per_shape / first_pass_s)))));

  // STREAM's check: every element of b and c is what the kernels make of a.
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 4096)) {
    const double want_c = pattern(i), want_b = pattern(i) + scalar * pattern(i);
    if (!copy.times_s.empty() && (c[i] != want_c || std::abs(b[i] - want_b) > 1e-12 * want_b)) ++wrong;
  }
  m.check_ok = wrong == 0 && !copy.times_s.empty();
  m.check_detail = wrong ? std::to_string(wrong) + " sampled elements wrong" : "sampled elements of b and c as computed";
  if (!copy.times_s.empty()) m.passes = {std::move(copy), std::move(triad)};
  return m;
}

}  // namespace napkin::bench
