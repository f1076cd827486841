// napkin hardware list|show NAME, napkin models list|show NAME and napkin engines list|show NAME.
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/engine_report.hpp"
#include "report/framework_report.hpp"
#include "report/model_toml.hpp"
#include "spec/framework_spec.hpp"
#include "spec/spec_loader.hpp"
#include "report/spec_report.hpp"

namespace napkin::cli {
namespace {

struct SpecOptions {
  std::string name;
  bool json = false;
};

template <typename ListFn, typename ShowFn>
void add_list_show(CLI::App* parent, Context& ctx, const char* noun, ListFn list, ShowFn show) {
  auto opts = std::make_shared<SpecOptions>();
  CLI::App* ls = parent->add_subcommand("list", std::string("List every known ") + noun);
  ls->add_flag("--json", opts->json, "Print JSON");
  ls->callback([&ctx, opts, list] { list(ctx, opts->json); });
  CLI::App* sh = parent->add_subcommand("show", std::string("Show one ") + noun + " in full");
  sh->add_option("name", opts->name, std::string("A name from 'list', or a path to a .toml spec") +
                                         (std::string(noun) == "model" ? ", a config.json or a folder holding one" : ""))
      ->required();
  sh->add_flag("--json", opts->json, "Print JSON");
  sh->callback([&ctx, opts, show] { show(ctx, opts->name, opts->json); });
}

}  // namespace

void setup_hardware(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand("hardware", "List and show accelerator specs");
  sub->require_subcommand(1);
  sub->footer("Examples:\n  napkin hardware list\n  napkin hardware show h100-sxm --json");
  add_list_show(
      sub, ctx, "accelerator",
      [](Context& c, bool json) {
        const auto& all = c.registry().all_hardware();
        if (json) {
          nlohmann::json arr = nlohmann::json::array();
          for (const auto& [k, h] : all) arr.push_back(hardware_json(h));
          emit_json(arr);
        } else {
          emit(hardware_list_text(all, c.columns()));
        }
      },
      [](Context& c, const std::string& name, bool json) {
        const Hardware h = c.registry().hardware(name);
        if (json) emit_json(hardware_json(h));
        else emit(hardware_show_text(h, c.columns()));
      });
}

void setup_frameworks(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand("frameworks", "List and show training frameworks (what plan prices for --framework)");
  sub->require_subcommand(1);
  sub->footer("Examples:\n  napkin frameworks list\n  napkin frameworks show torchtitan --json");
  add_list_show(
      sub, ctx, "framework",
      [](Context& c, bool json) {
        (void)c.registry();  // a --spec folder's frameworks/ is refused there, not skipped here
        const auto all = builtin_frameworks();
        if (json) {
          nlohmann::json arr = nlohmann::json::array();
          for (const Framework& f : all) arr.push_back(framework_json(f));
          emit(json_text(arr));
        } else {
          emit(frameworks_list_text(all, c.columns()));
        }
      },
      [](Context& c, const std::string& name, bool json) {
        (void)c.registry();
        const Framework f = load_framework(name);
        emit(json ? json_text(framework_json(f)) : framework_show_text(f));
      });
}

void setup_models(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand("models", "List and show model architectures and their parameter counts");
  sub->require_subcommand(1);
  add_list_show(
      sub, ctx, "model",
      [](Context& c, bool json) {
        const auto& all = c.registry().all_models();
        if (json) {
          nlohmann::json arr = nlohmann::json::array();
          for (const auto& [k, m] : all) arr.push_back(model_json(m));
          emit_json(arr);
        } else {
          emit(models_list_text(all, c.columns()));
        }
      },
      [](Context& c, const std::string& name, bool json) {
        const Model m = c.registry().model(name);
        if (json) emit_json(model_json(m));
        else emit(model_show_text(m, c.columns()));
      });
  // napkin models import config.json: the napkin TOML a Hugging Face config amounts to.
  auto path = std::make_shared<std::string>();
  CLI::App* im = sub->add_subcommand("import", "Print the napkin TOML spec of a Hugging Face config.json (or a folder holding one)");
  im->add_option("config", *path, "Path to config.json, or to a folder holding one")->required()->type_name("PATH");
  im->callback([&ctx, path] {
    const auto hf = ctx.registry().hf_model(*path);
    if (!hf) throw Error(*path + ": models import reads a Hugging Face config.json (a .json file or a folder holding config.json)");
    std::vector<std::string> header = {
        "napkin model spec imported by `napkin models import` from " + hf->model.source,
        "(model_type \"" + hf->model_type + "\", read as napkin's " + hf->family + " family). A comment names the",
        "config.json key each value comes from; keys the config leaves out say which default they take."};
    for (const auto& n : hf->notes) header.push_back("Note: " + n);
    const std::string spec = model_toml(hf->model, hf->derivations, header);
    // What import writes, the loader must take back (issue 16, class 2): load it before printing,
    // so a spec napkin would refuse is never written.
    try {
      (void)parse_model(spec, *path + " (imported spec)", hf->model.key);
    } catch (const Error& e) {
      throw Error(std::string("models import: the spec written from this config would not load: ") + e.what(), ExitCode::failure);
    }
    emit(spec);
  });
  sub->footer("Examples:\n  napkin models list\n  napkin models show llama3-8b --json\n"
              "  napkin models show path/to/config.json\n  napkin models import path/to/model-folder > my-model.toml");
}

void setup_engines(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand("engines", "List and show serving engines (napkin infer --engine)");
  sub->require_subcommand(1);
  sub->footer("Examples:\n  napkin engines list\n  napkin engines show vllm --json");
  add_list_show(
      sub, ctx, "serving engine",
      [](Context& c, bool json) {
        const auto all = c.registry().all_engines();
        if (json) {
          nlohmann::json arr = nlohmann::json::array();
          for (const auto& [k, e] : all) arr.push_back(engine_json(e));
          emit(json_text(arr));
        } else {
          emit(engines_list_text(all, c.columns()));
        }
      },
      [](Context& c, const std::string& name, bool json) {
        const Engine e = c.registry().engine(name);
        emit(json ? json_text(engine_json(e)) : engine_show_text(e, c.columns()));
      });
}

}  // namespace napkin::cli
