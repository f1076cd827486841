#include "cli/help_format.hpp"

#include "cli/common.hpp"

#include <algorithm>
#include "report/text.hpp"

namespace napkin::cli {
namespace {

class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(const Context& ctx) : ctx_(ctx) {}

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return entry(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
  }

  // CLI11 appends a negated flag's value ("--no-flash-attention{false}"): the description says it.
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional), out;
    int depth = 0;
    for (char c : name) {
      if (c == '{') ++depth;
      else if (c == '}') depth = std::max(0, depth - 1);
      else if (depth == 0) out += c;
    }
    return out;
  }

  // The value's name, its default and REQUIRED; not CLI11's "Excludes: --params" and "Needs: ...",
  // which the descriptions say in words.
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    std::string out;
    if (opt->get_type_size() == 0) return out;
    if (!opt->get_type_name().empty()) out += " " + get_label(opt->get_type_name());
    if (!opt->get_default_str().empty()) out += "=" + opt->get_default_str();
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
    else if (opt->get_expected_min() > 1) out += " x " + std::to_string(opt->get_expected());
    if (opt->get_required()) out += " " + get_label("REQUIRED");
    return out;
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    return entry(sub->get_display_name(true), sub->get_description());
  }

  std::string make_description(const CLI::App* app) const override { return wrapped(CLI::Formatter::make_description(app)); }
  std::string make_footer(const CLI::App* app) const override { return wrapped(CLI::Formatter::make_footer(app)); }

 private:
  // "  name          description", the description wrapped to the terminal under its column;
  // a name wider than the column puts the description on the next line (as CLI11 does).
  std::string entry(const std::string& name, const std::string& description) const {
    const std::size_t column = get_column_width();
    const std::size_t columns = ctx_.columns();
    const std::size_t room = columns > column + 20 ? columns - column : 0;  // never narrower than 20
    std::string out = "  " + name;
    if (description.empty()) return out + "\n";
    const std::vector<std::string> lines = wrap_words(description, room, false);  // "bf16-mixed" is a value: never split
    if (display_width(out) >= column) out += "\n" + std::string(column, ' ');
    else out += std::string(column - display_width(out), ' ');
    for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + std::string(column, ' ') : "") + lines[i];
    return out + "\n";
  }

  // Free text (description, footer): long lines wrap at spaces, indentation kept; never inside a
  // word ("bf16-mixed" is one value). An example command ("napkin ...") wraps as the shell
  // continues a line, " \\" and the rest indented, so that it still runs when copied.
  std::string wrapped(const std::string& text) const {
    const std::size_t columns = ctx_.columns();
    if (columns == 0) return text;
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string line = text.substr(start, end - start);
      const std::size_t indent = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
      const bool command = line.compare(indent, 7, "napkin ") == 0;
      const std::size_t room = columns > indent + 20 ? columns - indent : 20;
      const auto parts = wrap_words(line.substr(indent), command ? room - 6 : room, false);
      for (std::size_t i = 0; i < parts.size(); ++i)
        out += std::string(indent + (i ? (command ? 4 : 2) : 0), ' ') + parts[i] +
               (i + 1 < parts.size() ? (command ? " \\\n" : "\n") : "");
      if (end < text.size()) out += '\n';
      start = end + 1;
    }
    return out;
  }

  const Context& ctx_;
};

}  // namespace

void use_wrapping_help(CLI::App& app, const Context& ctx) { app.formatter(std::make_shared<WrappingFormatter>(ctx)); }

}  // namespace napkin::cli
