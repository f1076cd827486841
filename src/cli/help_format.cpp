#include "cli/help_format.hpp"

#include "cli/common.hpp"
#include "report/text.hpp"

namespace napkin::cli {
namespace {

class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(const Context& ctx) : ctx_(ctx) {}

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return entry(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
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
    const std::vector<std::string> lines = wrap_words(description, room);
    if (display_width(out) >= column) out += "\n" + std::string(column, ' ');
    else out += std::string(column - display_width(out), ' ');
    for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + std::string(column, ' ') : "") + lines[i];
    return out + "\n";
  }

  // Free text (description, footer): long lines wrap, indentation kept.
  std::string wrapped(const std::string& text) const {
    const std::size_t columns = ctx_.columns();
    if (columns == 0) return text;
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string line = text.substr(start, end - start);
      const std::size_t indent = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
      const std::size_t room = columns > indent + 20 ? columns - indent : 20;
      const auto parts = wrap_words(line.substr(indent), room);
      for (std::size_t i = 0; i < parts.size(); ++i)
        out += std::string(indent + (i ? 2 : 0), ' ') + parts[i] + (i + 1 < parts.size() ? "\n" : "");
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
