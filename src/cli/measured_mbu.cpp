// --mbu measured for infer and plan: the share of the bandwidth bench --memory's copy reaches here.
#include <fmt/format.h>

#include "bench/backend.hpp"
#include "bench/memory_bench.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "report/format.hpp"

namespace napkin::cli {

// --mbu measured (infer, plan): bench --memory's copy on this machine. Refused unless the measured device is the estimate's hardware: a CPU's or another GPU's bandwidth
// utilisation says nothing about the spec's.
double measured_mbu(Context& ctx, const Hardware& hw, std::string& source, const char* command) {
  auto backend = bench::open_backend("auto");
  // Refuse before measuring: a bandwidth measured on another device cannot stand for this one's.
  const std::string device = backend->device_name();
  const Hardware* local = ctx.registry().hardware_for_device(device);
  if (!local || local->key != hw.key)
    throw Error(fmt::format("--mbu measured: this machine's device is {} ({}), not {}: a bandwidth utilisation measured there says nothing "
                            "about {}'s; run it on a {} or give --mbu F",
                            device, local ? "spec " + local->key : "no hardware spec lists it", hw.key, hw.key, hw.name));
  LongRun run(std::string(command) + " --mbu measured");
  bench::MemoryBenchConfig cfg;
  cfg.hardware = hw;
  const bench::MemoryBenchRun m = bench::run_memory_bench(*backend, ctx.registry(), cfg, run.stop_requested());
  if (m.interrupted) throw Error("interrupted by Ctrl-C: --mbu measured needs the whole measurement", ExitCode::interrupted);
  if (!m.mbu) throw Error(fmt::format("--mbu measured: bench --memory found no peak for {}: give --mbu F", hw.key));
  source = fmt::format("measured: bench --memory on {}: {} = {} of {}", m.device, format_si(m.bytes_per_s, "B/s", 3), format_sig(*m.mbu, 3), m.peak_source);
  return *m.mbu;
}

double mbu_flag(const std::string& text) {
  const double mbu = parse_fraction(text, "--mbu");
  // Below 0.01 nothing streams: the memory-bound terms would swamp every answer.
  if (mbu < 0.01) throw Error(fmt::format("--mbu {}: below 0.01 (a streaming copy reaches about 0.6 to 0.95 of the bandwidth)", text));
  return mbu;
}

}  // namespace napkin::cli
