// napkin completion bash|zsh: a completion script generated from the CLI definition itself (the
// CLI11 App tree), so a new command or flag completes without anyone editing a script. Hidden from
// help; `cmake --install` runs it and installs the scripts where bash-completion and zsh look.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>

#include "cli/common.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"

namespace napkin::cli {
namespace {

struct OptionInfo {
  std::string flag;         // --tokens (or the positional's name)
  std::vector<std::string> aliases;  // its other long names: --no-dropout beside --dropout
  std::string value_name;   // D; empty for a flag
  std::string description;
  std::vector<std::string> choices;
  bool files = false;       // complete file names too
};

struct CommandInfo {
  std::string path;  // "", "/train", "/hardware/show"
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, description
  std::vector<OptionInfo> options;                               // its own and its parents'
  std::optional<OptionInfo> positional;
};

struct Names {
  std::vector<std::string> models, hardware, engines;
};

bool is_choice_list(const std::string& v) {
  if (v.find('|') == std::string::npos) return false;
  return v.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-|") == std::string::npos;
}

std::vector<std::string> split_bar(const std::string& v) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i <= v.size();) {
    const std::size_t j = std::min(v.find('|', i), v.size());
    out.push_back(v.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// What a value completes to: choices named in the value (0|1|2|3), dtypes, spec names, files.
OptionInfo describe(const CLI::Option* o, const std::string& command, const Names& names) {
  OptionInfo info;
  info.flag = o->get_lnames().empty() ? o->get_name() : fmt::format("--{}", o->get_lnames().front());
  info.description = o->get_description();
  for (std::size_t i = 1; i < o->get_lnames().size(); ++i) info.aliases.push_back(fmt::format("--{}", o->get_lnames()[i]));
  if (o->get_expected_max() == 0) return info;
  info.value_name = o->get_type_name();
  const std::string& v = info.value_name;
  if (is_choice_list(v)) info.choices = split_bar(v);
  if (info.flag == "--dtype")
    for (Dtype d : all_dtypes) info.choices.emplace_back(dtype_name(d));
  if (info.flag == "--device") info.choices = {"auto", "cuda", "cpu"};
  const bool model = info.flag == "--model" || (o->get_positional() && command == "models");
  const bool hardware = info.flag == "--hardware" || (o->get_positional() && command == "hardware");
  if (model) info.choices.insert(info.choices.end(), names.models.begin(), names.models.end());
  if (hardware) info.choices.insert(info.choices.end(), names.hardware.begin(), names.hardware.end());
  const bool engine = info.flag == "--engine" || (o->get_positional() && command == "engines");
  if (engine) info.choices.insert(info.choices.end(), names.engines.begin(), names.engines.end());
  info.files = model || hardware || engine || v.find("PATH") != std::string::npos || v.find("FILE") != std::string::npos;
  return info;
}

void walk(CLI::App* app, const std::string& path, std::vector<OptionInfo> inherited, const Names& names,
          std::vector<CommandInfo>& out) {
  CommandInfo c;
  c.path = path;
  const std::string parent_name = app->get_parent() ? app->get_parent()->get_name() : "";
  for (const CLI::Option* o : app->get_options()) {
    OptionInfo info = describe(o, parent_name, names);
    if (o->get_positional()) c.positional = info;
    else inherited.push_back(info);
  }
  c.options = inherited;
  std::vector<CLI::App*> subs = app->get_subcommands([](CLI::App* s) { return !s->get_group().empty(); });
  for (CLI::App* s : subs) c.subcommands.emplace_back(s->get_name(), s->get_description());
  out.push_back(c);
  for (CLI::App* s : subs) walk(s, path + "/" + s->get_name(), inherited, names, out);
}

// Single-quoted for the shell.
std::string sq(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

// The command path from the words typed so far: the same loop in both shells.
std::string transitions(const std::vector<CommandInfo>& commands) {
  std::string cases;
  for (const auto& c : commands)
    for (const auto& [name, desc] : c.subcommands) cases += fmt::format("      {}) cmdpath={} ;;\n", sq(c.path + "/" + name), sq(c.path + "/" + name));
  return cases;
}

std::string bash_script(const std::vector<CommandInfo>& commands) {
  std::string values, words;
  for (const auto& c : commands) {
    for (const auto& o : c.options) {
      if (o.value_name.empty()) continue;
      std::string reply = o.choices.empty() ? "" : fmt::format("$(compgen -W {} -- \"$cur\")", sq(joined(o.choices)));
      if (o.files) reply += reply.empty() ? "$(compgen -f -- \"$cur\")" : " $(compgen -f -- \"$cur\")";
      values += fmt::format("    {}) COMPREPLY=({}); return ;;\n", sq(c.path + ":" + o.flag), reply);
    }
    std::vector<std::string> w;
    for (const auto& [name, desc] : c.subcommands) w.push_back(name);
    for (const auto& o : c.options) {
      w.push_back(o.flag);
      w.insert(w.end(), o.aliases.begin(), o.aliases.end());
    }
    std::string positional;
    if (c.positional) {
      positional = fmt::format(" {}", sq(joined(c.positional->choices)));
      if (c.positional->files) positional += " files";
    }
    words += fmt::format("    {}) words={}; positional=({}) ;;\n", sq(c.path), sq(joined(w)), positional);
  }
  return fmt::format(R"(# bash completion for napkin. Generated by 'napkin completion bash' from napkin's own
# command definitions; install it as /usr/share/bash-completion/completions/napkin, or source it.
_napkin() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} cmdpath="" i words="" positional=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "$cmdpath/${{COMP_WORDS[i]}}" in
{}    esac
  done
  case "$cmdpath:$prev" in
{}  esac
  case "$cmdpath" in
{}  esac
  if [[ $cur != -* && ${{#positional[@]}} -gt 0 ]]; then
    COMPREPLY=($(compgen -W "${{positional[0]}}" -- "$cur"))
    [[ ${{positional[1]}} == files ]] && COMPREPLY+=($(compgen -f -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -F _napkin napkin
)",
                     transitions(commands), values, words);
}

// _describe items: "name:description", colons in the description escaped.
std::string describe_item(const std::string& name, const std::string& description) {
  std::string item = name + ":";
  for (char c : description) {
    if (c == ':') item += '\\';
    item += c;
  }
  return sq(item);
}

std::string zsh_script(const std::vector<CommandInfo>& commands) {
  std::string values, lists;
  for (const auto& c : commands) {
    for (const auto& o : c.options) {
      if (o.value_name.empty()) continue;
      std::string action = fmt::format("_message {}", sq(o.value_name + ": " + o.description));
      if (!o.choices.empty()) action = fmt::format("compadd -- {}", joined(o.choices));
      if (o.files) action += "; _files";
      values += fmt::format("    {}) {}; return ;;\n", sq(c.path + ":" + o.flag), action);
    }
    std::string subs, opts, positional;
    // fmt, not " " + std::string: GCC 12 warns falsely (-Wrestrict) on that.
    for (const auto& [name, desc] : c.subcommands) subs += fmt::format(" {}", describe_item(name, desc));
    for (const auto& o : c.options) {
      opts += fmt::format(" {}", describe_item(o.flag, o.description));
      for (const auto& alias : o.aliases) opts += fmt::format(" {}", describe_item(alias, o.description));
    }
    if (c.positional) {
      if (!c.positional->choices.empty()) positional = fmt::format("compadd -- {}", joined(c.positional->choices));
      if (c.positional->files) positional += "; _files";
    }
    lists += fmt::format("    {}) subs=({}); opts=({}); positional={} ;;\n", sq(c.path), subs, opts, sq(positional));
  }
  return fmt::format(R"(#compdef napkin
# zsh completion for napkin. Generated by 'napkin completion zsh' from napkin's own command
# definitions; install it as _napkin in a folder on $fpath (e.g. /usr/share/zsh/site-functions).
_napkin() {{
  local cmdpath="" i positional=""
  local -a subs opts
  for (( i = 2; i < CURRENT; i++ )); do
    case "$cmdpath/${{words[i]}}" in
{}    esac
  done
  case "$cmdpath:${{words[CURRENT-1]}}" in
{}  esac
  case "$cmdpath" in
{}  esac
  if [[ $PREFIX == -* ]]; then
    _describe -t options 'option' opts
  elif (( ${{#subs}} )); then
    _describe -t commands 'command' subs
  elif [[ -n $positional ]]; then
    eval "$positional"
  else
    _describe -t options 'option' opts
  fi
}}
_napkin "$@"
)",
                     transitions(commands), values, lists);
}

}  // namespace

void setup_completion(CLI::App& app, Context& ctx) {
  auto shell = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("completion", "Print a bash or zsh completion script");
  sub->group("");  // hidden: a tool for installers, not for the tour
  sub->add_option("shell", *shell, "bash or zsh")->required()->type_name("bash|zsh");
  sub->callback([&app, &ctx, shell] {
    if (*shell != "bash" && *shell != "zsh") throw Error(fmt::format("completion: bash or zsh, not '{}'", *shell));
    Names names;
    for (const auto& [key, m] : ctx.registry().all_models()) names.models.push_back(key);
    for (const auto& [key, h] : ctx.registry().all_hardware()) names.hardware.push_back(key);
    for (const auto& [key, e] : ctx.registry().all_engines()) names.engines.push_back(key);
    std::vector<CommandInfo> commands;
    walk(&app, "", {}, names, commands);
    emit(*shell == "bash" ? bash_script(commands) : zsh_script(commands));
  });
}

}  // namespace napkin::cli
