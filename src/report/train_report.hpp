#pragma once
// What `napkin train` prints: the estimate, the arithmetic behind it, and JSON.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/training.hpp"

namespace napkin {

struct AttentionTerm {
  double seq_len = 0;
  std::string seq_source;                // "--seq", or where the model's seq_len comes from
  long long window = 0, windowed_layers = 0;  // sliding-window layers, if any
  double noncausal_flops_per_token = 0;  // 12·L·H·Q·T (PaLM appendix B)
  double causal_flops_per_token = 0;     // half of it
  long long layers = 0, heads = 0, d_qk = 0, d_v = 0;
};

// A LoRA/QLoRA run (--lora): what the FLOP count and the dequantisation time rest on.
struct TrainLora {
  long long rank = 0;
  std::string targets, base_weights, finetune_lib;
  double adapter_params = 0;           // per token (MoE: the top-k experts' adapters)
  double dequant_bytes_per_pass = 0;   // read at the base's bits + written in bf16
  int passes = 3;
  double tokens_per_micro_batch = 0;
  double bandwidth_bytes_per_s = 0;
};

struct TrainReport {
  std::string model_key;        // empty when --params was given
  std::string model_name;
  bool moe = false;
  double total_params = 0;      // MoE: all experts; else = run.params
  std::string hardware_key;
  std::string hardware_name;
  std::string device = "GPU";   // what one part is called in text: Hardware::device_word ("chip" on a TPU)
  Dtype dtype = Dtype::bf16;
  bool sparse = false;
  std::string mfu_source;       // "default", "--mfu", "measured on ...", ...
  FlopsModel flops_model = FlopsModel::six_pd;
  std::optional<AttentionTerm> attention;
  std::optional<TrainLora> lora;
  std::optional<double> budget_flops;   // --budget
  bool tokens_chinchilla = false;       // --tokens chinchilla
  TrainingRun run;
  CostInputs cost_inputs;
  RunCosts costs;
  std::vector<std::string> warnings;
  // --mfu predicted: the days at the ends of the plan's MFU error bar (slow end first).
  std::optional<double> days_low, days_high;
};

// max_width: the terminal's columns for the key-value blocks (0: no limit); prose is wrapped by the caller.
std::string train_text(const TrainReport& r, std::size_t max_width = 0);
std::string train_explain(const TrainReport& r, std::size_t max_width = 0);
// The arithmetic, one step per string, for --explain (numbered) and --json --explain (a list).
std::vector<std::string> explain_steps(const TrainReport& r);
nlohmann::json train_json(const TrainReport& r);
std::string flops_model_name(FlopsModel m);

}  // namespace napkin
