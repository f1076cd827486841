#include "cli/train_mfu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "bench/backend.hpp"
#include "bench/measure.hpp"
#include "calibrate/calibrate.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "core/training.hpp"
#include "core/units.hpp"
#include "report/format.hpp"

namespace napkin::cli {
namespace {

void warn_if_other_device(MfuChoice& c, const std::string& device, const std::string& hardware_key, const SpecRegistry& specs) {
  // Descriptions read "NVIDIA H100 80GB HBM3 (cuda)"; the driver's name is the part before " (".
  const Hardware* local = specs.hardware_for_device(device.substr(0, device.find(" (")));
  if (!local || local->key != hardware_key)
    c.warnings.push_back(fmt::format("the MFU was measured on {}, not on {}: it says what this machine reaches, "
                                     "which may not carry over to the estimate's hardware",
                                     device, hardware_key));
}

// Progress of a measurement on stderr, and Ctrl-C to stop it.
bench::RunControl watch(LongRun& run) {
  bench::RunControl c;
  c.stop_requested = run.stop_requested();
  c.progress = [&run](const bench::BenchProgress& p) {
    if (p.total == 0) run.show(fmt::format("shape {}/{} {}: preparing", p.shape + 1, p.shapes, bench::shape_text(p.current)), true);
    else run.show(fmt::format("shape {}/{} {}: {}/{} products", p.shape + 1, p.shapes, bench::shape_text(p.current), p.done, p.total));
  };
  return c;
}

// The measurement would run on the CPU backend (no GPU here) for an estimate of another device:
// refused before any timing, unless asked for.
void refuse_cpu_for_gpu(const std::string& mode, const std::string& hardware_key, const SpecRegistry& specs, bool allowed) {
  if (allowed) return;
  auto backend = bench::open_backend("auto");
  if (backend->key() != "cpu") return;
  const Hardware* local = specs.hardware_for_device(backend->device_name());
  if (local && local->key == hardware_key) return;
  throw Error(fmt::format("--mfu {}: this machine has no GPU, so the MFU would be its CPU's ({}), not {}'s; "
                          "give a number (--mfu 0.4), run on that GPU, or add --force-cpu-mfu to use the CPU's anyway",
                          mode, backend->device_name(), hardware_key));
}

}  // namespace

MfuChoice resolve_mfu(const std::string& text, bool given, Dtype dtype, const std::optional<Model>& model,
                      std::optional<double> seq_len, const std::string& hardware_key, const SpecRegistry& specs,
                      std::optional<long long> iterations, bool cpu_for_gpu) {
  MfuChoice c;
  if (text == "calibrated" && !model) throw Error("--mfu calibrated needs --model: it times that model's own matrix products");
  if (text == "measured" || text == "calibrated") refuse_cpu_for_gpu(text, hardware_key, specs, cpu_for_gpu);
  if (text == "measured") {
    LongRun run("train --mfu measured");
    const bench::MeasuredMfu m = bench::measure_mfu(specs, dtype, std::nullopt, iterations, watch(run));
    c.mfu = m.mfu;
    c.source = fmt::format("measured: {} matmul {}x{}x{}, median {} on {}, peak {}", dtype_name(m.dtype),
                           m.shape.m, m.shape.n, m.shape.k, format_si(m.flops_per_s, "FLOP/s"), m.device, m.peak_source);
    if (!m.note.empty()) c.warnings.push_back(m.note);
    warn_if_other_device(c, m.device, hardware_key, specs);
    return c;
  }
  if (text == "calibrated") {
    LongRun run("train --mfu calibrated");
    if (!model) throw Error("--mfu calibrated needs --model: it times that model's own matrix products");
    auto backend = bench::open_backend("auto");
    CalibrateOptions opts;
    opts.dtype = dtype;
    opts.step.micro_batch = 1;
    opts.step.seq = static_cast<long long>(seq_len.value_or(static_cast<double>(std::min<long long>(model->context, 2048))));
    opts.iterations = iterations;
    opts.warmup_s = std::min(1.0, backend->default_warmup_s());  // a short measurement, as --mfu measured's
    opts.control = watch(run);
    const Calibration cal = calibrate(*model, opts, *backend, specs);
    if (cal.interrupted)
      throw Error(fmt::format("interrupted by Ctrl-C: --mfu calibrated timed {} of the step's {} distinct products; an MFU needs them all",
                              cal.timed.size(), cal.shapes.size()),
                  ExitCode::interrupted);
    if (!(cal.result.mfu_measured > 0 && cal.result.mfu_measured <= 1))
      throw Error(fmt::format("--mfu calibrated: the measured MFU {} is outside (0, 1]; see 'napkin calibrate --model {}'",
                              format_sig(cal.result.mfu_measured, 3), model->key));
    c.mfu = cal.result.mfu_measured;
    c.source = fmt::format("calibrated: {}'s step products at micro-batch 1, seq {} on {} ({}), matmul-only upper bound",
                           model->key, opts.step.seq, cal.device, cal.peak_source);
    for (const auto& n : cal.notes) c.warnings.push_back(n);
    warn_if_other_device(c, cal.device, hardware_key, specs);
    return c;
  }
  // A word that is not one of the modes: name them (a typo of "measured" is not "not a number").
  if (!text.empty() && std::isalpha(static_cast<unsigned char>(text.front())))
    throw Error(fmt::format("--mfu '{}': expected a fraction (0.45 or 45%) or one of measured, calibrated, predicted{}", text,
                            did_you_mean(text, {"measured", "calibrated", "predicted"})));
  c.mfu = parse_fraction(text, "--mfu");
  // 1e-320 parses (a denormal above 0) but makes every answer overflow: say which flag did it.
  if (c.mfu < min_mfu)
    throw Error(fmt::format("--mfu {}: below {} no answer can be printed (an MFU is typically 0.2 to 0.6)", text, format_sig(min_mfu, 1)));
  c.source = given ? "--mfu" : "default; set it with --mfu, or --mfu measured";
  return c;
}

}  // namespace napkin::cli
