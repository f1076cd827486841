#pragma once
// CLI11's help, fitted to the terminal: option and subcommand descriptions wrap at the width
// cli::Context::columns() gives (COLUMNS, the tty, nothing under --wide or into a pipe), under
// their column, instead of running to 170 characters.
#include <CLI/CLI.hpp>

#include <memory>

namespace napkin::cli {

struct Context;

// Installs the wrapping formatter on `app` (subcommands inherit it). `ctx` is read when help is
// printed, after --wide has been parsed.
void use_wrapping_help(CLI::App& app, const Context& ctx);

}  // namespace napkin::cli
