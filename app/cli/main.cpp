// vsocksim command line (../shared/spec/interface.md is the contract): one
// file per command in this folder (command.hpp), dispatched from here.
//
// Exit status: 0 success; 2 bad usage or bad experiment (nothing is written
// under --output); 1 internal error (a model invariant or a crash), also when
// only some points of run or validate failed (the others are printed and
// kept; 2 if every failure was bad input found only by simulating).
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli/command.hpp"
#include "app/experiment/experiment.hpp"
#include "app/report/results.hpp"
#include "app/run/stop.hpp"

using namespace vsim::app;

namespace {

// SIGINT, SIGTERM and SIGHUP are handled from before main() on, so a stop
// request is never lost, however early it comes (app/run/stop.hpp): the
// handler is installed from the executable's pre-initialisation array, which
// the dynamic loader runs before any shared library's initialisers
// (SimGrid's and the C++ runtime's take tens of milliseconds; a shell that
// starts `vsocksim run ... &` makes SIGINT ignored until then). Only system
// calls run there. Commands that run no simulation go back to the default
// dispositions in main().
void install_stop_handler(int, char**, char**)
{
  stop::install();
}
[[gnu::section(".preinit_array"), gnu::used]] void (*const preinit_stop_handler)(int, char**,
                                                                                 char**) = install_stop_handler;

std::string join_args(int argc, char** argv)
{
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i)
      s += ' ';
    s += argv[i];
  }
  return s;
}

// An unknown first word is named with the commands there are (CLI11 would
// take it for a positional argument).
bool known_command(CLI::App& app, const std::string& word)
{
  std::string names;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    known = known || sub->get_name() == word;
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  if (!known)
    std::cerr << "vsocksim: error: unknown command '" << word << "' (allowed: " << names << ")\n";
  return known;
}

} // namespace

int main(int argc, char** argv)
{
  CLI::App app{"vsocksim: deterministic simulator of VM socket transports (hv_sock, virtio-vsock)", "vsocksim"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "all commands' options");
  app.set_version_flag(
      "--version", [] { return vsim::app::version_text(); },
      "print the version, the git commit and SimGrid's version, then exit");

  const cli::Context ctx{join_args(argc, argv)};
  const std::vector<cli::Command> commands = {
      cli::add_run(app, ctx),    cli::add_plot(app),     cli::add_merge(app),     cli::add_check(app),
      cli::add_describe(app),    cli::add_validate(app), cli::add_calibrate(app), cli::add_show(app),
      cli::add_compare(app),     cli::add_explain(app),  cli::add_import(app),    cli::add_reproduce(app),
      cli::add_search(app, ctx),
  };

  if (argc > 1 && argv[1][0] != '-' && !known_command(app, argv[1]))
    return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "vsocksim: error: " << e.what() << "\n(run 'vsocksim --help' for usage)\n";
    return 2;
  }

  try {
    for (const cli::Command& c : commands)
      if (*c.sub) {
        // Only the commands that run simulations act on stop requests; the
        // others end as the signal's default action ends them.
        if (!c.handles_stop())
          stop::restore_default();
        return c.run();
      }
  } catch (const InputError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "vsocksim: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
