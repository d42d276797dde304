// `vsocksim search FILE.yaml [--output DIR] [--jobs N] [--budget N] [--seed S]
// [-q] [--format table|json|csv]`: the best designs of the experiment's
// `search:` section (app/search/search.hpp, docs/search.md), printed as the
// Pareto front (table or CSV) or as JSON (the front's points in run's point
// form, beside the search's facts and sensitivity).
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/cli/command.hpp"
#include "app/cli/common.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/search_spec.hpp"
#include "app/report/text.hpp"
#include "app/run/output_dir.hpp"
#include "app/run/stop.hpp"
#include "app/search/search.hpp"
#include "transports/simulate.hpp"

namespace vsim::app::cli {

namespace {

struct SearchArgs {
  std::string file, output, format = "table";
  std::vector<std::string> sets;
  unsigned jobs = default_jobs();
  std::int64_t budget = 0;
  std::uint64_t seed = 0;
  CLI::Option* budget_opt = nullptr;
  CLI::Option* seed_opt = nullptr;
  bool quiet = false, force = false, ensemble = false;
};

// The point files a stopped search left in DIR.
std::size_t point_files_in(const std::string& dir)
{
  std::error_code ec;
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    n += name.starts_with("point-") && name.ends_with(".json") ? 1 : 0;
  }
  return n;
}

int search(SearchArgs a, const Context& ctx)
{
  if (a.ensemble)
    a.sets.push_back("sim.ensemble=true");
  const Experiment ex = load_experiment(a.file, a.sets, registry());
  if (!ex.search)
    throw InputError(fmt::format("{}: error: search: the experiment has no search section (allowed: an experiment "
                                 "with `search:` and its space and objectives, docs/search.md; `vsocksim run` "
                                 "runs a sweep)",
                                 a.file));
  prepare(ex, a.file);
  if (!a.output.empty()) {
    check_output_dir(a.output);
    if (auto other = other_experiment_in(a.output, ex.name); other && !a.force)
      throw InputError(fmt::format("--output '{}': error: holds the results of experiment '{}', not '{}' (allowed: "
                                   "an empty or new directory, one of experiment '{}', or --force to replace them)",
                                   a.output, *other, ex.name, ex.name));
  }
  SearchOptions opt;
  if (a.budget_opt->count())
    opt.budget = a.budget;
  if (a.seed_opt->count())
    opt.seed = a.seed;
  std::vector<std::string> warnings;
  const SearchPlan plan = plan_search(ex, opt, &warnings); // every InputError before anything runs or is written
  for (const std::string& w : warnings)
    std::cerr << fmt::format("{}: warning: {}\n", a.file, w);
  SearchHooks hooks{simulate_iteration, run_options(a.jobs, a.quiet), nullptr, ctx.command_line};
  if (!a.quiet)
    hooks.progress = [](const std::string& line) { std::cerr << line << '\n'; };
  SearchResult r;
  try {
    r = run_search(ex, opt, a.output, hooks);
  } catch (const Interrupted&) { // every finished point is kept; a rerun resumes from them
    return stopped(a.output.empty() ? 0 : point_files_in(a.output), static_cast<std::size_t>(plan.budget), a.output);
  }
  if (a.format == "json")
    std::cout << search_json(r).dump(2) << '\n';
  else if (a.format == "csv")
    std::cout << search_csv(r);
  else
    std::cout << search_table(r);
  // A point whose simulated system hangs, or that is bad input only
  // simulating finds, is a design that does not work: not on the front.
  // Any other failure is an internal error.
  FailedPoints internal;
  for (const Evaluated& e : r.evaluated)
    if (!e.result.failed.empty()) {
      if (e.result.hang() || e.result.bad_input())
        std::cerr << fmt::format("vsocksim: note: {} is not on the front: {}\n", point_name(e.point), e.result.failed);
      else
        internal.emplace_back(point_name(e.point), &e.result);
    }
  if (internal.empty())
    return 0;
  std::cout.flush();
  return points_failed(internal, fmt::format("{} of {} evaluated point(s) failed with an internal error",
                                             internal.size(), r.evaluated.size()));
}

} // namespace

Command add_search(CLI::App& app, const Context& ctx)
{
  auto a = std::make_shared<SearchArgs>();
  auto* sub = app.add_subcommand("search", "find the best designs of an experiment's search: section (a Pareto "
                                           "front, within a budget of simulated points)");
  sub->add_option("file", a->file, "experiment file (YAML) with a search: section")->required();
  sub->add_option("--set", a->sets, "override a key of the experiment: KEY=VALUE (repeatable)");
  sub->add_option("--output", a->output,
                  "keep every evaluated point here as a normal result (show, compare, plot, explain, reproduce read "
                  "it), with search.json and the objective-space figure; a rerun resumes from it");
  sub->add_option("--jobs", a->jobs, "simulations run at once (results are identical for any value)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  a->budget_opt = sub->add_option("--budget", a->budget, "simulated points at most (default: search.budget)");
  a->seed_opt = sub->add_option("--seed", a->seed,
                                "the seed of the search's own random choices (default: the experiment's seed)");
  sub->add_option("--format", a->format, "the front on stdout")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  sub->add_flag("--quiet,-q", a->quiet, "no progress lines on stderr");
  sub->add_flag("--force", a->force, "write into an --output directory that holds another experiment's results");
  sub->add_flag(
      "--ensemble", a->ensemble,
      "run every member of the platform profile's ensemble at each point too (sim.ensemble: true): "
      "the points gain p10..p90 intervals; the search ranks by the central member unless search.rank is median "
      "or pessimistic");
  sub->footer("\nThe search: keys: `vsocksim describe search`; docs/search.md. Exit status: 0 done; 2 a bad "
              "experiment or search section (nothing run or written); 1 an internal error.");
  Command c{sub, [a, &ctx] { return search(*a, ctx); }};
  c.handles_stop = [] { return true; };
  return c;
}

} // namespace vsim::app::cli
