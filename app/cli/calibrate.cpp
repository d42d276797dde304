// `vsocksim calibrate EXPERIMENT.yaml [EXPERIMENT.yaml...] --output PROFILE.yaml [--fit COST,...]
// [--hold-out KEY=VALUE[,KEY=VALUE]]... [--folds K] [--jobs N] [--name NAME]
// [--set KEY=VALUE]... [--optimiser NAME] [--max-evaluations N] [-q]`: a
// platform profile fitted to the experiment's measured figures
// (app/calibrate/calibrate.hpp), written whole at the end.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/calibrate/calibrate.hpp"
#include "app/calibrate/optimiser.hpp"
#include "app/cli/command.hpp"
#include "app/cli/common.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/experiment/text.hpp"
#include "app/report/text.hpp"
#include "app/run/output_dir.hpp"
#include "app/run/stop.hpp"
#include "transports/simulate.hpp"

namespace fs = std::filesystem;

namespace vsim::app::cli {

namespace {

struct CalibrateArgs {
  std::vector<std::string> files;
  std::string output;
  std::vector<std::string> fit_lists;
  std::vector<std::string> hardware; // --hardware KEY=VALUE
  CalibrateOptions opt;
  unsigned jobs = default_jobs();
  bool quiet = false;
};

// The directory --output goes into must exist: found before anything runs.
void check_output(const std::string& output)
{
  const fs::path dir = fs::path(output).parent_path();
  if (!dir.empty() && !fs::is_directory(dir))
    throw InputError(fmt::format("--output {}: error: no such directory {} (allowed: a file in an existing "
                                 "directory)",
                                 output, dir.string()));
  if (fs::is_directory(output))
    throw InputError(
        fmt::format("--output {}: error: is a directory (allowed: a profile file, e.g. NAME.yaml)", output));
}

std::vector<std::string> fit_names(const std::vector<std::string>& lists)
{
  std::vector<std::string> out;
  for (const std::string& list : lists)
    for (const std::string& name : split_commas(list))
      if (!name.empty())
        out.push_back(name);
  return out;
}

int calibrate_command(CalibrateArgs a)
{
  check_output(a.output);
  if (a.opt.ensemble_only && a.opt.ensemble < 2)
    throw InputError("--ensemble-only: error: there is no ensemble to find (allowed: with --ensemble N, N at least "
                     "2)");
  a.opt.fit = fit_names(a.fit_lists);
  for (const std::string& entry : a.hardware) { // what the new profile says of its machine
    const std::size_t eq = entry.find('=');
    const std::string key = eq == std::string::npos ? entry : entry.substr(0, eq);
    const auto& keys = hardware_keys();
    if (eq == std::string::npos || std::find(keys.begin(), keys.end(), key) == keys.end() || eq + 1 == entry.size())
      throw InputError(fmt::format("--hardware '{}': error: {} (allowed: KEY=VALUE, KEY one of {})", entry,
                                   eq == std::string::npos || eq + 1 == entry.size() ? "expected KEY=VALUE"
                                                                                     : "unknown key '" + key + "'",
                                   join(keys)));
    a.opt.hardware.emplace_back(key, entry.substr(eq + 1));
  }
  a.opt.experiment_arg = join(a.files, ", ");
  if (a.opt.name.empty())
    a.opt.name = fs::path(a.output).stem().string();
  const CalibrationInput in = load_calibration(a.files, a.opt);
  CalibrateHooks hooks{simulate_iteration, run_options(a.jobs, true), nullptr};
  if (!a.quiet)
    hooks.progress = [](const std::string& line) { std::cerr << line << '\n'; };
  if (stop::requested())
    return stopped(0, 0, "");
  CalibrationResult r;
  try {
    r = calibrate(in, a.opt, hooks);
  } catch (const Interrupted&) {
    return stopped(0, 0, "");
  }
  if (stop::requested())
    return stopped(0, 0, "");
  std::cout << calibration_text(in, r);
  const PlatformProfile profile = calibrated_profile(in, a.opt, r);
  if (const std::vector<std::string> why = refusals(r, profile, a.opt); !why.empty()) {
    std::cerr << fmt::format("vsocksim: calibrate: {} not written: the fit breaks {} rule(s) a profile must keep "
                             "(docs/calibration.md, \"Refused fits\"):\n",
                             a.output, why.size());
    for (const std::string& line : why)
      std::cerr << "  " << line << '\n';
    return 1;
  }
  write_file_atomic(a.output, profile_yaml(profile));
  if (!a.quiet)
    std::cerr << "wrote " << a.output << '\n';
  return 0;
}

} // namespace

Command add_calibrate(CLI::App& app)
{
  auto a = std::make_shared<CalibrateArgs>();
  auto* sub = app.add_subcommand("calibrate", "fit a platform profile's costs to an experiment's measured figures "
                                              "and write the profile file");
  sub->add_option("experiment", a->files,
                  "calibration experiments: their platform (the start), points and validation.measurements; several "
                  "(one machine: the same platform, transport and costs) are fitted as one, all their rows at once")
      ->required();
  sub->add_option("--output,-o", a->output, "the profile file to write (at the end, whole)")->required();
  sub->add_option("--fit", a->fit_lists,
                  "costs to fit, COST[,COST...] (default: those the sensitivity analysis finds the rows identify)");
  sub->add_option("--hold-out", a->opt.hold_out,
                  "KEY=VALUE[,KEY=VALUE]: rows matching every pair are not fitted, reported apart (repeatable)");
  sub->add_option("--folds", a->opt.folds, "K-fold cross-validation over the fit rows (0: none)")
      ->capture_default_str();
  sub->add_option("--name", a->opt.name,
                  "the profile's name (default: the output file's stem); another name than a shipped start "
                  "profile's makes a profile of another machine: it keeps none of the start's hardware or "
                  "description, and names the start as the source of every cost it did not fit (a start given as a "
                  "file describes the machine being fitted: kept)");
  sub->add_option("--hardware", a->hardware,
                  "what the profile says of its machine: KEY=VALUE (repeatable; cpu, cpu_ghz, host_kernel, "
                  "guest_kernel, hypervisor, vmm, vcpus, pinning, notes)");
  sub->add_option("--set", a->opt.sets, "override a key of the experiment: KEY=VALUE (repeatable)");
  sub->add_option("--optimiser", a->opt.optimiser, "NLopt's bounded derivative-free optimiser")
      ->check(CLI::IsMember(optimiser_names()))
      ->capture_default_str();
  sub->add_option("--max-evaluations", a->opt.max_evaluations,
                  "the main search's budget of evaluations (default: 4 per cost + 4, at least 12)");
  sub->add_option("--fold-evaluations", a->opt.fold_evaluations,
                  "each fold's budget (default: a third of the main search's)");
  sub->add_option("--max-costs", a->opt.max_costs, "the most costs the sensitivity analysis chooses")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  sub->add_option("--search-iterations", a->opt.search_iterations,
                  "iterations per point during the search (0: the experiment's own; the report always uses them)")
      ->capture_default_str();
  sub->add_option("--jobs", a->jobs, "simulations run at once (the profile is identical for any value)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub->add_option("--ensemble", a->opt.ensemble,
                  "find this many members: cost vectors that fit the rows within their noise, stored in the profile "
                  "(0: none; 16 is the usual)")
      ->check(CLI::Range(0u, 256u))
      ->capture_default_str();
  sub->add_flag("--ensemble-only", a->opt.ensemble_only,
                "no search: keep the starting profile as it is (costs, fit report) and only find its ensemble "
                "(needs --ensemble)");
  sub->add_option("--ensemble-costs", a->opt.ensemble_costs,
                  "what the members vary: fitted (the fitted costs), seen (also the costs the sensitivity analysis "
                  "found moving a row but did not fit), all (also those no row moves: only their plausible range "
                  "bounds them)")
      ->check(CLI::IsMember({"fitted", "seen", "all"}))
      ->capture_default_str();
  sub->add_option("--noise", a->opt.noise_percent, "the rows' noise in %, for the ensemble's band")
      ->check(CLI::Range(0.1, 100.0))
      ->capture_default_str();
  sub->add_flag("--keep-unvalidated", a->opt.keep_unvalidated,
                "write the fit even when its k-fold cross-validation error is not below the starting values' error "
                "on the fit rows (else the start's values are kept: the rows cannot pin down what the fit moved)");
  sub->add_flag("--allow-bound", a->opt.allow_bound,
                "write the profile even with a fitted cost at a bound of its plausible range (else refused, exit 1)");
  sub->add_flag("--allow-broken-ties", a->opt.allow_broken_ties,
                "write the profile even when it breaks a tie of its transport's costs (else refused, exit 1)");
  sub->add_flag("--quiet,-q", a->quiet, "no progress lines on stderr");
  Command c{sub, [a] { return calibrate_command(*a); }};
  c.handles_stop = [] { return true; };
  return c;
}

} // namespace vsim::app::cli
