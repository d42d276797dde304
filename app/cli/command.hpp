// The command line's commands, one file each (app/cli/<command>.cpp). Each
// adds its subcommand with its options to the CLI11 app and returns what
// runs it once the command line is parsed; main.cpp dispatches. A new
// command is a new file here and one line in main.cpp's list.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace vsim::app::cli {

struct Command {
  CLI::App* sub = nullptr;  // the parsed subcommand (true when it was given)
  std::function<int()> run; // runs it: the exit status
  // Whether it acts on stop requests (SIGINT, SIGTERM, SIGHUP: app/run/stop.hpp)
  // as given; the other commands end as the signal's default action ends them.
  std::function<bool()> handles_stop = [] { return false; };
};

// What every command may need beyond its options.
struct Context {
  std::string command_line; // argv joined with spaces, for the manifest
};

// In the order `vsocksim --help` lists them.
Command add_run(CLI::App& app, const Context& ctx);
Command add_plot(CLI::App& app);
Command add_merge(CLI::App& app);
Command add_check(CLI::App& app);
Command add_describe(CLI::App& app);
Command add_validate(CLI::App& app);
Command add_calibrate(CLI::App& app);
Command add_show(CLI::App& app);
Command add_compare(CLI::App& app);
Command add_explain(CLI::App& app);
Command add_import(CLI::App& app);
Command add_reproduce(CLI::App& app);
Command add_search(CLI::App& app, const Context& ctx);

} // namespace vsim::app::cli
