// napkin bench: achieved matmul FLOP/s and MFU on the local GPU (cuBLASLt) or CPU (OpenBLAS).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "bench/backend.hpp"
#include "bench/harness.hpp"
#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/bench_report.hpp"
#include "report/table.hpp"

namespace napkin::cli {
namespace {

struct BenchOptions {
  std::string device = "auto";
  std::string dtype;
  std::vector<std::string> shapes;
  std::string sweep;
  int iters = 0;
  std::string warmup;
  bool no_flush = false;
  int algos = 4;
  std::string hardware;
  std::string peak;
  bool json = false, csv = false, list_devices = false;
};

// Any dtype napkin knows, narrowed to the ones a matmul backend can time.
Dtype parse_bench_dtype(const std::string& text) {
  const Dtype d = dtype_flag(text);
  if (d == Dtype::int8 || d == Dtype::fp4 || d == Dtype::fp64_tensor)
    throw Error("--dtype: napkin bench times bf16, fp16, tf32, fp32, fp64 or fp8, not " + text);
  return d;
}

void list_devices(bool json) {
  nlohmann::json arr = nlohmann::json::array();
  Table t;
  t.header = {"device", "available", "description", "detail"};
  for (const auto& info : bench::backend_registry()) {
    const auto a = info.make()->availability();
    arr.push_back({{"key", info.key}, {"description", info.description}, {"available", a.available}, {"detail", a.detail}});
    t.add({info.key, a.available ? "yes" : "no", info.description, a.detail});
  }
  emit(json ? arr.dump(2) + "\n" : t.render());
}

void progress_bar(std::size_t done, std::size_t total) {
  constexpr std::size_t width = 30;
  const std::size_t filled = total ? done * width / total : width;
  fmt::print(stderr, "\r[{}{}] {}/{} shapes", std::string(filled, '#'), std::string(width - filled, '.'), done, total);
  if (done == total) fmt::print(stderr, "\n");
  std::fflush(stderr);
}

void run(Context& ctx, const BenchOptions& o) {
  if (o.list_devices) return list_devices(o.json);
  bench::BenchConfig cfg;
  for (const auto& s : o.shapes) cfg.shapes.push_back(bench::parse_shape(s));
  if (!o.sweep.empty())
    for (const auto& s : bench::parse_sweep(o.sweep)) cfg.shapes.push_back(s);
  if (o.iters != 0) cfg.iterations = o.iters;
  if (!o.warmup.empty()) {
    try {
      std::size_t used = 0;
      cfg.warmup_s = std::stod(o.warmup, &used);
      if (used != o.warmup.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw Error("--warmup: '" + o.warmup + "' is not a number of seconds");
    }
  }
  cfg.flush_cache = !o.no_flush;
  cfg.algos = o.algos;
  cfg.peak_flops_per_s = count_flag(o.peak, "--peak");
  if (!o.hardware.empty()) cfg.hardware = ctx.registry().hardware(o.hardware);
  std::optional<Dtype> dtype;
  if (!o.dtype.empty()) dtype = parse_bench_dtype(o.dtype);  // checked before any device work

  auto backend = bench::open_backend(o.device);
  cfg.dtype = dtype.value_or(backend->key() == "cuda" ? Dtype::bf16 : Dtype::fp32);
  const bool bar = cfg.shapes.size() > 1 && isatty(STDERR_FILENO);
  bench::RunControl control;
  if (bar) control.progress = [](const bench::BenchProgress& p) { if (p.done == p.total && p.total) progress_bar(p.shape + 1, p.shapes); };
  const bench::BenchRun result = bench::run_bench(*backend, ctx.registry(), cfg, control);
  if (o.json) emit(bench_json(result).dump(2) + "\n");
  else if (o.csv) emit(bench_csv(result));
  else emit(bench_text(result));
}

}  // namespace

void setup_bench(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Measure achieved matmul FLOP/s and MFU on the local GPU (cuBLASLt) or CPU (OpenBLAS)");
  sub->add_option("--device", o->device, "auto (cuda if present, else cpu), cuda or cpu")->capture_default_str();
  sub->add_option("--dtype", o->dtype, "bf16, fp16, tf32, fp32, fp64 or fp8 (default: bf16 on cuda, fp32 on cpu)");
  sub->add_option("--shape", o->shapes, "MxNxK (repeatable; 'N' for a cube); default 8192^3 on cuda, 2048^3 on cpu")->type_name("MxNxK");
  sub->add_option("--sweep", o->sweep, "m=START:STOP:STEP,n=...,k=... (each a range or one size; all combinations)");
  sub->add_option("--iters", o->iters, "Timed products per shape (default: about 1 s worth, 5..1000)");
  sub->add_option("--warmup", o->warmup, "Seconds of warm-up before the first shape (default 2 on cuda, 0.5 on cpu)")->type_name("SECONDS");
  sub->add_flag("--no-flush", o->no_flush, "Do not flush the L2 (GPU) / last-level (CPU) cache between products");
  sub->add_option("--algos", o->algos, "cuBLASLt algorithms to try per shape; the fastest is kept")->capture_default_str();
  sub->add_option("--hardware", o->hardware, "Spec whose dense peak MFU divides by (default: detected from the device name)");
  sub->add_option("--peak", o->peak, "Peak FLOP/s for MFU, overriding everything (e.g. 989.5T)")->type_name("FLOPS");
  auto* json = sub->add_flag("--json", o->json, "Print JSON: {device, hardware, results}");
  sub->add_flag("--csv", o->csv, "Print CSV, one row per shape")->excludes(json);
  sub->add_flag("--list-devices", o->list_devices, "List the devices napkin can bench and whether each is available");
  sub->footer(
      "Examples:\n"
      "  napkin bench                                   # default device, dtype and shape\n"
      "  napkin bench --device cuda --dtype bf16 --shape 8192x8192x8192\n"
      "  napkin bench --dtype fp8 --sweep m=1024:16384:1024,n=8192,k=8192 --csv\n"
      "  napkin bench --device cpu --dtype fp32 --shape 4096 --json\n"
      "  napkin bench --list-devices");
  sub->callback([&ctx, o] { run(ctx, *o); });
}

}  // namespace napkin::cli
