#include "report/calibrate_report.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/bench_report.hpp"
#include "report/calibration_file.hpp"
#include "report/format.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

namespace napkin {
namespace {

std::string ms(double seconds) { return format_sig(seconds * 1e3, 4) + " ms"; }

std::string shape(const Gemm& g) { return fmt::format("{}x{}x{}", g.m, g.n, g.k); }

// The caveats every calibration carries; the CLI adds its own (a dtype fallback, ...).
std::vector<std::string> notes(const CalibrateReport& r) {
  std::vector<std::string> n;
  n.push_back(
      "Only matrix products are timed: norms, softmax, activation functions, the optimizer step and "
      "communication are not, so the measured MFU is an upper bound on what training reaches.");
  n.push_back(
      "Attention under the causal mask: FLOPs count the useful half of Q·Kᵀ and P·V (napkin's convention); "
      "each is timed as a dense product and charged half its time, as a causal kernel skips masked tiles.");
  n.push_back("Batched attention products (one per sequence and head) are timed as one strided-batched call, as "
              "training runs them.");
  if (r.model.moe) n.push_back("MoE experts assume even routing: tokens × top-k / experts tokens per expert.");
  if (r.step.tp > 1)
    n.push_back(fmt::format("Shapes are one GPU's share under tensor parallelism {} (column/row split); "
                            "its all-reduces are not timed.", r.step.tp));
  n.insert(n.end(), r.notes.begin(), r.notes.end());
  return n;
}

std::string header(const CalibrateReport& r, std::size_t max_width) {
  return wrap_paragraph(fmt::format("napkin calibrate: {}, micro-batch {} x seq {} = {} tokens, {}{}{}", r.model.name,
                     r.step.micro_batch, r.step.seq, r.step.micro_batch * r.step.seq, dtype_name(r.dtype),
                     r.step.tp > 1 ? fmt::format(", tp {}", r.step.tp) : "",
                     r.device.empty() ? "" : ", on " + r.device), max_width, "", "  ");
}

}  // namespace

// Ctrl-C: each distinct product timed so far, on its own; nothing summed or extrapolated, as
// a step time, an MFU and days to train need every product.
std::string interrupted_text(const CalibrateReport& r, std::size_t max_width) {
  std::string out = header(r, max_width) + "\n";
  out += fmt::format("INTERRUPTED (Ctrl-C): {} of the step's {} distinct products timed; no step time, MFU or days to train,\n"
                     "which need them all. The last row may rest on fewer calls than asked.\n\n",
                     r.timed.size(), r.distinct_products);
  Table t;
  t.max_width = max_width;
  t.header = {"m x n x k", "batch", "calls", "time/call", "FLOP/s", "products"};
  t.align = {Align::right, Align::right, Align::right, Align::right, Align::right, Align::left};
  for (const TimedShape& s : r.timed) {
    std::string names;
    for (const auto& n : s.products) names += (names.empty() ? "" : ", ") + n;
    t.add({fmt::format("{}x{}x{}", s.shape.m, s.shape.n, s.shape.k), format_count(static_cast<double>(s.shape.batch)),
           format_count(static_cast<double>(s.calls)), ms(s.time_per_call_s), format_si(s.flops_per_s, "FLOP/s"), names});
  }
  if (!r.timed.empty()) out += t.render();
  return out;
}

nlohmann::json interrupted_json(const CalibrateReport& r) {
  nlohmann::json j{{"model", r.model.key}, {"micro_batch", r.step.micro_batch}, {"seq_len", r.step.seq}, {"tp", r.step.tp},
                   {"dtype", std::string(dtype_name(r.dtype))}, {"dry_run", false}, {"interrupted", true},
                   {"distinct_products", r.distinct_products}};
  j["device"] = device_json(r.backend, r.device_name, r.device);
  nlohmann::json timed = nlohmann::json::array();
  for (const TimedShape& s : r.timed)
    timed.push_back({{"m", s.shape.m}, {"n", s.shape.n}, {"k", s.shape.k}, {"batch", s.shape.batch}, {"calls", s.calls},
                     {"time_per_call_s", s.time_per_call_s}, {"flops_per_s", s.flops_per_s}, {"products", s.products}});
  j["timed"] = timed;
  return j;
}

std::string calibrate_text(const CalibrateReport& r, std::size_t max_width) {
  if (r.interrupted) return interrupted_text(r, max_width);
  std::string out = header(r, max_width) + "\n";
  Table t;
  const bool timed = r.result.has_value();
  t.max_width = max_width;
  t.header = {"product", "m x n x k", "batch", "count", "GFLOP/step"};
  if (timed) t.header.insert(t.header.end(), {"time/step", "FLOP/s", "share"});
  t.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
  // Too narrow: shorter headers, then batch and count (the shape and GFLOP/step say the work).
  t.short_header = {"", "m×n×k", "", "", "GFLOP", "time", "", ""};
  t.drop_rank = {0, 0, 2, 1, 0, 0, 0, 0};
  if (timed) {
    for (const TimedGemm& g : r.result->products)
      t.add({g.gemm.name, shape(g.gemm), format_count(static_cast<double>(g.gemm.batch)),
             format_count(static_cast<double>(g.gemm.count)), format_sig(g.gemm.flops / 1e9, 4), ms(g.time_s),
             format_si(g.flops_per_s, "FLOP/s"), format_sig(100 * g.share, 3) + "%"});
  } else {
    for (const Gemm& g : r.gemms)
      t.add({g.name, shape(g), format_count(static_cast<double>(g.batch)), format_count(static_cast<double>(g.count)),
             format_sig(g.flops / 1e9, 4)});
  }
  out += t.render() + "\n";

  KeyValues kv;
  kv.max_width = max_width;
  const double tokens = static_cast<double>(r.step.micro_batch * r.step.seq);
  const double flops = total_flops(r.gemms);
  kv.add("GEMM FLOPs per step", format_sci(flops, 4), fmt::format("{} per token on this device", format_sci(flops / tokens, 4)));
  if (timed) {
    const CalibrationResult& c = *r.result;
    kv.add("step matmul time", ms(c.step_matmul_time_s));
    kv.add("GEMM throughput", format_si(c.gemm_flops_per_s, "FLOP/s"),
           fmt::format("{}% of the {} dense peak ({})", format_sig(100 * c.gemm_utilization, 3),
                       format_si(c.peak_flops_per_s, "FLOP/s"), r.peak_source));
    kv.add("tokens/s per device", format_sig(c.tokens_per_s_per_gpu, 4));
    kv.add("measured MFU", format_sig(c.mfu_measured, 3),
           fmt::format("6·P + attention = {} FLOPs/token, as napkin train counts them", format_sci(c.model_flops_per_token, 4)));
    kv.add("assumed MFU", format_sig(c.mfu_assumed, 3),
           fmt::format("{}; measured is {}x that", c.mfu_assumed == 0.5 ? "napkin train's default" : "--assumed-mfu",
                       format_sig(c.mfu_measured / c.mfu_assumed, 3)));
  }
  if (r.run_measured)
    kv.add("days to train (measured MFU)", format_sig(r.run_measured->days(), 4),
           fmt::format("{} tokens on {} GPU{}", format_count(r.run_measured->tokens), format_count(r.run_measured->gpus),
                       r.run_measured->gpus == 1 ? "" : "s"));
  if (r.run_assumed) kv.add("days to train (assumed MFU)", format_sig(r.run_assumed->days(), 4));
  out += kv.render() + "\n";
  for (const std::string& n : notes(r)) out += wrap_paragraph("Note: " + n, max_width, "  ", "        ");
  return out;
}

nlohmann::json calibrate_json(const CalibrateReport& r) {
  if (r.interrupted) return interrupted_json(r);
  nlohmann::json j;
  j["model"] = r.model.key;
  j["micro_batch"] = r.step.micro_batch;
  j["seq_len"] = r.step.seq;
  j["tp"] = r.step.tp;
  j["dtype"] = std::string(dtype_name(r.dtype));
  j["tokens_per_step"] = r.step.micro_batch * r.step.seq;
  j["gemm_flops_per_step"] = total_flops(r.gemms);
  j["dry_run"] = !r.result.has_value();
  j[calibration_file::kProducts] = calibration_file::products_json(r.gemms, r.result);
  if (r.result) {
    const CalibrationResult& c = *r.result;
    j["device"] = device_json(r.backend, r.device_name, r.device);
    j["peak_flops_per_s"] = c.peak_flops_per_s;
    j["peak_source"] = r.peak_source;
    j["step_matmul_time_s"] = c.step_matmul_time_s;
    j["gemm_flops_per_s"] = c.gemm_flops_per_s;
    j["gemm_utilization"] = c.gemm_utilization;
    j["tokens_per_s"] = c.tokens_per_s_per_gpu;  // per GPU
    j["model_flops_per_token"] = c.model_flops_per_token;
    j["mfu"] = c.mfu_measured;  // `mfu`, as train, plan and bench name it; mfu_assumed beside it
    j["mfu_assumed"] = c.mfu_assumed;
  }
  if (r.run_assumed) {
    // Counts as integers, as in train's JSON.
    j["tokens"] = static_cast<long long>(std::llround(r.run_assumed->tokens));
    j["gpus"] = static_cast<long long>(std::llround(r.run_assumed->gpus));
    j["days_assumed"] = r.run_assumed->days();
    j["days_measured"] = r.run_measured ? nlohmann::json(r.run_measured->days()) : nlohmann::json(nullptr);
  }
  j["notes"] = notes(r);
  return j;
}

}  // namespace napkin
