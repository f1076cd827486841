#include "spec/spec_loader.hpp"

#include "core/error.hpp"
#include "spec/toml_reader.hpp"

namespace napkin {
namespace {

Hardware read_hardware(const toml::table& root, const std::string& path, const std::string& key) {
  TomlReader r(root, path);
  Hardware h;
  h.key = key;
  h.origin = path;
  h.name = r.required_string("name");
  h.vendor = r.required_string("vendor");
  h.memory_bytes = r.required_quantity("memory_bytes", QuantityKind::bytes, bounds::kMemoryBytes);
  // What a driver reports as the device's total (nvidia-smi's memory.total), where known.
  h.usable_memory_bytes = r.optional_quantity("usable_memory_bytes", QuantityKind::bytes, bounds::kMemoryBytes);
  h.memory_type = r.optional_string("memory_type").value_or("");
  h.memory_bandwidth_bytes_per_s = r.required_quantity("memory_bandwidth_bytes_per_s", QuantityKind::bytes, bounds::kBandwidthBytesPerS);
  h.tdp_watts = r.optional_quantity("tdp_watts", QuantityKind::count, bounds::kWatts);
  h.tensor_figures_quoted_sparse = r.required_bool("tensor_figures_quoted_sparse");
  h.source = r.required_string("source");
  h.device_names = r.optional_string_array("device_names");
  h.notes = r.optional_string("notes").value_or("");
  const toml::table* peaks = r.optional_table("dense_tflops");
  if (!peaks) r.fail(nullptr, "dense_tflops", "missing required table of dense peak TFLOP/s per dtype");
  TomlReader p(*peaks, path, "dense_tflops");
  for (Dtype d : all_dtypes) {
    if (auto tflops = p.optional_quantity(dtype_name(d), QuantityKind::count, bounds::kPeakTflops))
      h.dense_peak_flops_per_s[d] = *tflops * 1e12;
  }
  p.finish();
  if (h.dense_peak_flops_per_s.empty()) r.fail(peaks, "dense_tflops", "lists no dtype; give at least one (bf16 = 989.5)");
  r.finish();
  return h;
}

template <typename Enum>
Enum choose(TomlReader& r, std::string_view key, const std::vector<std::pair<std::string, Enum>>& options) {
  std::vector<std::string> names;
  for (const auto& [n, e] : options) names.push_back(n);
  const std::string v = r.required_choice(key, names);
  for (const auto& [n, e] : options)
    if (n == v) return e;
  return options.front().second;
}

Model read_model(const toml::table& root, const std::string& path, const std::string& key) {
  TomlReader r(root, path);
  Model m;
  m.key = key;
  m.origin = path;
  m.name = r.required_string("name");
  m.source = r.required_string("source");
  m.notes = r.optional_string("notes").value_or("");
  m.layers = r.required_positive_int("layers", bounds::kLayers);
  m.d_model = r.required_positive_int("d_model", bounds::kWidth);
  m.heads = r.required_positive_int("heads", bounds::kHeads);
  m.kv_heads = r.optional_positive_int("kv_heads", bounds::kHeads).value_or(m.heads);
  if (m.heads % m.kv_heads != 0)
    r.fail(root.get("kv_heads"), "kv_heads", "must divide heads (" + std::to_string(m.heads) + "), found " + std::to_string(m.kv_heads));
  if (auto hd = r.optional_positive_int("head_dim", bounds::kWidth)) {
    m.head_dim = *hd;
  } else {
    if (m.d_model % m.heads != 0)
      r.fail(nullptr, "head_dim", "missing, and d_model is not a multiple of heads; give head_dim");
    m.head_dim = m.d_model / m.heads;
  }
  m.d_ff = r.required_positive_int("d_ff", bounds::kFfn);
  m.mlp = choose<MlpKind>(r, "mlp", {{"gelu", MlpKind::gelu}, {"swiglu", MlpKind::swiglu}});
  m.vocab = r.required_positive_int("vocab", bounds::kVocab);
  m.context = r.required_positive_int("context", bounds::kContext);
  m.tied_embeddings = r.required_bool("tied_embeddings");
  m.positions = choose<Positions>(r, "positions", {{"learned", Positions::learned}, {"rotary", Positions::rotary},
                                                   {"relative", Positions::relative}, {"alibi", Positions::alibi}});
  m.bias = choose<BiasKind>(r, "bias", {{"none", BiasKind::none}, {"qkv", BiasKind::qkv}, {"all", BiasKind::all}});
  m.norm = choose<NormKind>(r, "norm", {{"layernorm", NormKind::layernorm}, {"rmsnorm", NormKind::rmsnorm},
                                        {"nonparametric", NormKind::nonparametric}});
  if (const toml::table* t = r.optional_table("moe")) {
    TomlReader e(*t, path, "moe");
    MoeSpec moe;
    moe.experts = e.required_positive_int("experts", bounds::kExperts);
    moe.experts_per_token = e.required_positive_int("experts_per_token", bounds::kExperts);
    moe.shared_experts = e.optional_nonnegative_int("shared_experts", bounds::kExperts).value_or(0);
    moe.d_ff_expert = e.required_positive_int("d_ff_expert", bounds::kFfn);
    moe.dense_layers = e.optional_nonnegative_int("dense_layers", bounds::kLayers).value_or(0);
    if (moe.experts_per_token > moe.experts)
      e.fail(t->get("experts_per_token"), "experts_per_token", "exceeds experts (" + std::to_string(moe.experts) + ")");
    if (moe.dense_layers >= m.layers)
      e.fail(t->get("dense_layers"), "dense_layers", "must be fewer than layers (" + std::to_string(m.layers) + ")");
    e.finish();
    m.moe = moe;
  }
  if (const toml::table* t = r.optional_table("mla")) {
    TomlReader a(*t, path, "mla");
    MlaSpec mla;
    mla.q_lora_rank = a.optional_nonnegative_int("q_lora_rank", bounds::kWidth).value_or(0);
    mla.kv_lora_rank = a.required_positive_int("kv_lora_rank", bounds::kWidth);
    mla.qk_nope_head_dim = a.required_positive_int("qk_nope_head_dim", bounds::kWidth);
    mla.qk_rope_head_dim = a.required_positive_int("qk_rope_head_dim", bounds::kWidth);
    mla.v_head_dim = a.required_positive_int("v_head_dim", bounds::kWidth);
    a.finish();
    m.mla = mla;
  }
  r.finish();
  return m;
}

}  // namespace

Hardware parse_hardware(std::string_view text, const std::string& display_path, const std::string& key) {
  const toml::table root = parse_toml(text, display_path);
  return read_hardware(root, display_path, key);
}

Model parse_model(std::string_view text, const std::string& display_path, const std::string& key) {
  const toml::table root = parse_toml(text, display_path);
  return read_model(root, display_path, key);
}

Spec parse_spec(std::string_view text, const std::string& display_path, const std::string& key) {
  const toml::table root = parse_toml(text, display_path);
  if (root.contains("dense_tflops")) return read_hardware(root, display_path, key);
  if (root.contains("layers")) return read_model(root, display_path, key);
  throw Error(display_path + ":1:1: cannot tell the kind of spec: a hardware spec has a [dense_tflops] table, a model spec a 'layers' key");
}

}  // namespace napkin
