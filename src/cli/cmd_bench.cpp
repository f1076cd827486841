// napkin bench: achieved matmul FLOP/s and MFU on the local GPU (cuBLASLt) or CPU (OpenBLAS).
#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "bench/backend.hpp"
#include "bench/harness.hpp"
#include "bench/memory_bench.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "core/interconnect.hpp"
#include "report/bench_report.hpp"
#include "report/memory_bench_report.hpp"
#include "report/table.hpp"

namespace napkin::cli {
namespace {

struct BenchOptions {
  std::string device = "auto";
  std::string dtype;
  std::vector<std::string> shapes;
  std::string sweep;
  std::string iters, batch = "1";
  std::string warmup;
  bool no_flush = false;
  int algos = 4;
  std::string hardware;
  std::string peak;
  bool json = false, csv = false, list_devices = false;
  bool memory = false;
  std::string size, peak_bandwidth;
};

// Any dtype napkin knows, narrowed to the ones a matmul backend can time.
Dtype parse_bench_dtype(const std::string& text) {
  const Dtype d = dtype_flag(text);
  if (d == Dtype::fp4 || d == Dtype::fp64_tensor)
    throw Error("--dtype: napkin bench times bf16, fp16, tf32, fp32, fp64, fp8 or int8, not " + text +
                (d == Dtype::fp64_tensor ? " (fp64 runs on the FP64 tensor cores where the GPU has them)" : ""));
  return d;
}

void list_devices(bool json, bool csv, std::size_t max_width) {
  nlohmann::json arr = nlohmann::json::array();
  Table t;
  t.max_width = max_width;  // the description and detail columns wrap; --wide and pipes keep them whole
  t.header = {"device", "available", "description", "detail"};
  std::string out = "device,available,description,detail\n";
  auto cell = [](std::string s) {  // one CSV cell: quoted, quotes doubled (RFC 4180)
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const auto& info : bench::backend_registry()) {
    const auto a = info.make()->availability();
    arr.push_back({{"key", info.key}, {"description", info.description}, {"available", a.available}, {"detail", a.detail}});
    t.add({info.key, a.available ? "yes" : "no", info.description, a.detail});
    out += info.key + "," + (a.available ? "yes" : "no") + "," + cell(info.description) + "," + cell(a.detail) + "\n";
  }
  if (json) emit_json(arr);
  else emit(csv ? out : t.render());
}

bench::BenchConfig config(Context& ctx, const BenchOptions& o) {
  bench::BenchConfig cfg;
  for (const auto& s : o.shapes) cfg.shapes.push_back(bench::parse_shape(s));
  if (!o.sweep.empty())
    for (const auto& s : bench::parse_sweep(o.sweep)) cfg.shapes.push_back(s);
  if (!o.iters.empty()) cfg.iterations = whole_flag(o.iters, "--iters", static_cast<double>(bench::max_iterations));
  if (!o.warmup.empty()) cfg.warmup_s = seconds_flag(o.warmup, "--warmup", 3600);
  cfg.flush_cache = !o.no_flush;
  cfg.algos = o.algos;
  if (o.peak == "measured") cfg.peak_choice = bench::BenchConfig::PeakChoice::measured;
  else if (o.peak == "spec") cfg.peak_choice = bench::BenchConfig::PeakChoice::spec;
  else if (!o.peak.empty() && std::isalpha(static_cast<unsigned char>(o.peak.front())))
    throw Error("--peak '" + o.peak + "': expected measured, spec or a FLOP/s figure such as 989.5T" + did_you_mean(o.peak, {"measured", "spec"}));
  else {
    cfg.peak_flops_per_s = count_flag(o.peak, "--peak");
    // A phone's CPU to a rack of GPUs: outside, an MFU of 1e-296% or 6e10 means nothing.
    if (cfg.peak_flops_per_s > 0 && !(cfg.peak_flops_per_s >= 1e6 && cfg.peak_flops_per_s <= 1e19))
      throw Error("--peak must be a positive FLOP/s figure between 1 MFLOP/s and 10 EFLOP/s, such as 989.5T; found '" + o.peak + "'");
  }
  if (cfg.peak_choice == bench::BenchConfig::PeakChoice::measured && !o.hardware.empty())
    throw Error("--hardware does not apply with --peak measured (the peak is this machine's measurement); drop one or the other");
  // Checked here, before any device is opened, as well as by the harness.
  if (cfg.algos < 1) throw Error("--algos must be at least 1");
  if (cfg.peak_flops_per_s && !(*cfg.peak_flops_per_s > 0 && std::isfinite(*cfg.peak_flops_per_s)))
    throw Error("--peak must be a positive FLOP/s figure such as 989.5T");
  if (!o.hardware.empty()) cfg.hardware = ctx.registry().hardware(o.hardware);
  return cfg;
}

// bench --memory: the device's memory bandwidth, STREAM-style on the CPU, a device copy on a GPU.
void run_memory(Context& ctx, const BenchOptions& o, const CLI::App& sub) {
  refuse_ignored_flags(sub, "--memory",
                       {"--memory", "--device", "--size", "--iters", "--hardware", "--peak-bandwidth", "--json", "--csv"});
  bench::MemoryBenchConfig cfg;
  // Checked before any device work. At least one 4 KiB page; at most 1 TiB an array.
  if (!o.size.empty()) {
    const double bytes = *bytes_flag(o.size, "--size");
    if (!(bytes >= 4096 && bytes <= 1099511627776.0)) throw Error("--size must be between 4KiB and 1TiB, found '" + o.size + "'");
    cfg.array_bytes = static_cast<std::size_t>(bytes);
  }
  if (!o.iters.empty())
    cfg.repeats = static_cast<int>(whole_flag(o.iters, "--iters", static_cast<double>(bench::max_memory_repeats)));
  if (!o.peak_bandwidth.empty()) {
    const double bw = parse_bandwidth(o.peak_bandwidth, "--peak-bandwidth");
    if (!(bw >= 1e6 && bw <= 1e15)) throw Error("--peak-bandwidth must be between 1MB/s and 1PB/s, found '" + o.peak_bandwidth + "'");
    cfg.peak_bytes_per_s = bw;
  }
  if (!o.hardware.empty()) cfg.hardware = ctx.registry().hardware(o.hardware);
  auto backend = bench::open_backend(o.device);
  LongRun progress("bench");
  progress.show("memory bandwidth: timing", true);
  const bench::MemoryBenchRun result = bench::run_memory_bench(*backend, ctx.registry(), cfg, progress.stop_requested());
  if (o.json) emit_json(memory_bench_json(result));
  else if (o.csv) emit(memory_bench_csv(result));
  else emit(memory_bench_text(result, ctx.columns()));
  progress.throw_if_interrupted(result.kernels.empty() ? "nothing was measured" : "the runs timed before it are printed above");
}

void run(Context& ctx, const BenchOptions& o, const CLI::App& sub) {
  if (o.list_devices) {
    refuse_ignored_flags(sub, "--list-devices", {"--list-devices", "--json", "--csv"});
    return list_devices(o.json, o.csv, ctx.columns());
  }
  if (o.memory) return run_memory(ctx, o, sub);
  for (const char* flag : {"--size", "--peak-bandwidth"})
    if (sub.count(flag)) throw Error(std::string(flag) + " applies only to 'bench --memory'");
  bench::BenchConfig cfg = config(ctx, o);
  // At most 2^20 products a call, 30x attention's largest (sequences x heads): only a tiny shape
  // fits memory at more, and on the CPU (a loop of sgemm calls) its per-call overhead alone ran
  // for minutes a call (a 1x1x1 batch of 1e9, 8 calls a shape).
  // At most 2^20 products a call, 30x attention's largest (sequences x heads): on the CPU a batch
  // is a loop of sgemm calls, and a 1x1x1 batch of 1e9 (it fits memory) ran for minutes a call.
  const long long batch = whole_flag(o.batch, "--batch", 1048576.0);
  std::optional<Dtype> dtype;
  if (!o.dtype.empty()) dtype = parse_bench_dtype(o.dtype);  // checked before any device work

  auto backend = bench::open_backend(o.device);
  // OpenBLAS has one algorithm: --algos would be silently ignored on the CPU.
  if (backend->key() == "cpu" && sub.count("--algos") > 0)
    throw Error("--algos picks among cuBLASLt's algorithms; the CPU backend (OpenBLAS) has one, so it does not apply: drop it");
  cfg.dtype = dtype.value_or(backend->key() == "cuda" ? Dtype::bf16 : Dtype::fp32);
  if (cfg.shapes.empty() && batch > 1) cfg.shapes = {backend->default_shape(cfg.dtype)};
  for (auto& s : cfg.shapes) s.batch = batch;
  LongRun progress("bench");
  bench::RunControl control;
  control.stop_requested = progress.stop_requested();
  control.progress = [&](const bench::BenchProgress& p) {
    const std::string where = fmt::format("shape {}/{} {} {}", p.shape + 1, p.shapes, bench::shape_text(p.current),
                                          dtype_name(cfg.dtype));
    if (p.total == 0) progress.show(where + ": preparing, warming up", true);
    else progress.show(fmt::format("{}: {}/{} products", where, p.done, p.total), p.done == p.total || p.done <= 1000);
  };
  const bench::BenchRun result = bench::run_bench(*backend, ctx.registry(), cfg, control);
  // Ctrl-C: print what was measured, then say so and exit 130.
  if (o.json) emit_json(bench_json(result));
  else if (o.csv) emit(bench_csv(result));
  else emit(bench_text(result, ctx.columns()));
  progress.throw_if_interrupted(fmt::format("{} of {} shapes measured{}", result.results.size(),
                                            cfg.shapes.empty() ? 1 : cfg.shapes.size(),
                                            result.results.empty() ? "" : " (printed above; the last may be partial)"));
}

}  // namespace

void setup_bench(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Measure achieved matmul FLOP/s and MFU on the local GPU (cuBLASLt) or CPU (OpenBLAS)");
  sub->add_option("--device", o->device, "auto (cuda if present, else cpu), cuda or cpu")->capture_default_str()->type_name("DEVICE");
  sub->add_option("--dtype", o->dtype, "bf16, fp16, tf32, fp32, fp64, fp8 or int8 (default: bf16 on cuda, fp32 on cpu)")->type_name("DTYPE");
  sub->add_option("--shape", o->shapes, "MxNxK (repeatable; 'N' for a cube); default 8192^3 on cuda, 2048^3 on cpu")->type_name("MxNxK");
  sub->add_option("--sweep", o->sweep, "m=START:STOP:STEP,n=...,k=... (each a range or one size; all combinations)")->type_name("RANGES");
  sub->add_option("--batch", o->batch, "Products per call, one strided-batched call (as attention's per-head products run), at most 1048576 [1]")->type_name("N");
  sub->add_option("--iters", o->iters, "Timed products per shape, e.g. 100 or 1e6 (default: about 1 s worth, 5..1000)")->type_name("N");
  sub->add_option("--warmup", o->warmup, "Seconds of warm-up before the first shape (default 2 on cuda, 0.5 on cpu)")->type_name("SECONDS");
  sub->add_flag("--no-flush", o->no_flush, "Do not flush the L2 (GPU) / last-level (CPU) cache between products");
  sub->add_option("--algos", o->algos, "cuBLASLt algorithms to try per shape; the fastest is kept")->capture_default_str()->type_name("N");
  sub->add_option("--hardware", o->hardware, "Spec whose dense peak MFU divides by (default: detected from the device name)")->type_name("NAME|FILE");
  sub->add_option("--peak", o->peak, "MFU's denominator: measured (the CPU's FMA microkernel), spec (the spec's dense peak; the CPU's nominal "
                 "cores × clock × FLOP/cycle), or a FLOP/s figure such as 989.5T [measured on the CPU, else the spec]")
      ->type_name("measured|spec|FLOPS");
  auto* json = sub->add_flag("--json", o->json, "Print JSON: {device, hardware, results}");
  sub->add_flag("--csv", o->csv, "Print CSV, one row per shape (or per device with --list-devices)")->excludes(json);
  sub->add_flag("--list-devices", o->list_devices, "List the devices napkin can bench and whether each is available (and why not)");
  sub->add_flag("--memory", o->memory,
                "Measure memory bandwidth and MBU instead: STREAM copy and triad on the CPU, a device copy on a GPU");
  sub->add_option("--size", o->size, "--memory: bytes of each array, e.g. 1GiB (default: 4x the last-level cache, 256MiB at least; 1GiB on a GPU)")
      ->type_name("BYTES");
  sub->add_option("--peak-bandwidth", o->peak_bandwidth, "--memory: the bandwidth MBU divides by, e.g. 3.35TB/s (default: the spec's)")
      ->type_name("BW");
  sub->footer(
      "Progress goes to stderr when it is a terminal (NAPKIN_PROGRESS=1: always). Ctrl-C stops a long run,\n"
      "prints what was measured, and exits 130. The CUDA backend is a module napkin loads when needed:\n"
      "NAPKIN_CUDA_MODULE, beside the executable, or lib/napkin/ of the installation.\n"
      "Examples:\n"
      "  napkin bench                                   # default device, dtype and shape\n"
      "  napkin bench --device cuda --dtype bf16 --shape 8192x8192x8192\n"
      "  napkin bench --dtype fp8 --sweep m=1024:16384:1024,n=8192,k=8192 --csv\n"
      "  napkin bench --device cuda --shape 2048x2048x128 --batch 32   # attention's batched products\n"
      "  napkin bench --device cpu --dtype fp32 --shape 4096 --json\n"
      "  napkin bench --list-devices\n"
      "  napkin bench --memory                          # memory bandwidth and MBU\n"
      "  napkin bench --memory --device cpu --size 1GiB --peak-bandwidth 80GB/s --json");
  sub->callback([&ctx, o, sub] { run(ctx, *o, *sub); });
}

}  // namespace napkin::cli
