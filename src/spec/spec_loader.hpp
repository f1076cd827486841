#pragma once
// Reads hardware and model spec files (TOML). Strict: a syntax error, a wrong type, a
// missing required key, an unknown key or a non-positive size is an Error whose message
// is "file:line:col: key: message".
#include <string>
#include <string_view>
#include <variant>

#include "core/hardware.hpp"
#include "core/model.hpp"

namespace napkin {

using Spec = std::variant<Hardware, Model>;

// `display_path` is what error messages name; `key` is the spec's name (the file stem).
// The kind is told from the content: a [dense_tflops] table makes a hardware spec,
// a `layers` key a model spec.
Spec parse_spec(std::string_view text, const std::string& display_path, const std::string& key);
// What a spec file is, told from its keys as parse_spec tells it (an engine by memory_fraction or
// kv_block_tokens, a framework by kernels_per_layer or zero_stages); unknown when the text is not
// TOML or has none of them (parsing it then gives the error).
enum class SpecKind { hardware, model, engine, framework, unknown };
SpecKind spec_kind(std::string_view text);

Hardware parse_hardware(std::string_view text, const std::string& display_path, const std::string& key);
Model parse_model(std::string_view text, const std::string& display_path, const std::string& key);

}  // namespace napkin
