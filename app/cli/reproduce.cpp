// `vsocksim reproduce RESULT [--output DIR] [--jobs N]`: reruns a result
// from what it holds (its points' resolved parameters, the experiment's
// configuration and measurements, the platform profiles: app/report/
// reproduce.hpp), the way `run` runs an experiment file (run_plan, app/cli/
// run.cpp), and says whether the new result is the same JSON text apart from
// manifest.wall; if not, which points and metrics differ and the likely
// cause. Exit 0 identical, 1 different, 2 for a file that is not a result or
// a result too old to be reproduced (nothing written then).
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/cli/command.hpp"
#include "app/cli/common.hpp"
#include "app/report/reproduce.hpp"

namespace fs = std::filesystem;

namespace vsim::app::cli {

namespace {

struct ReproduceArgs {
  std::string result, output;
  unsigned jobs = default_jobs();
  bool quiet = false;
};

// The rerun must not replace the result it is compared with.
void check_not_the_result(const std::string& output, const std::string& result_file)
{
  std::error_code ec;
  if (!output.empty() && fs::equivalent(fs::path(output) / "result.json", result_file, ec))
    throw InputError(fmt::format("--output '{}': error: holds the result being reproduced, which the rerun would "
                                 "replace (allowed: another directory)",
                                 output));
}

int reproduce(const ReproduceArgs& a)
{
  RerunSource source = read_rerun_source(a.result);
  check_not_the_result(a.output, source.file);
  use_profiles(source);
  const std::vector<std::string> suspect = params_against_config(source);
  RunPlan plan;
  plan.prep = prepare_with(source.ex, source.measurements);
  plan.manifest = make_manifest(source.ex, source.command_line, source.measurements);
  plan.shard = source.shard;
  plan.points_total = source.points_total;
  plan.traced_point = source.traced_point;
  plan.ex = std::move(source.ex);
  nlohmann::ordered_json rerun;
  const int status = run_plan(std::move(plan), a.output, a.jobs, a.quiet, rerun);
  if (rerun.is_null()) // stopped
    return status;
  const RerunComparison c = compare_rerun(source.doc, rerun, suspect);
  std::cout << c.text;
  if (!a.output.empty())
    std::cout << fmt::format("the rerun is in {}\n", a.output);
  return c.identical ? 0 : 1;
}

} // namespace

Command add_reproduce(CLI::App& app)
{
  auto a = std::make_shared<ReproduceArgs>();
  auto* sub =
      app.add_subcommand("reproduce", "rerun a result from what it holds and say whether the new result is identical");
  sub->add_option("result", a->result,
                  "RESULT: the JSON of run --format json, or a run --output directory; it holds every point's "
                  "resolved parameters, the platform profiles, the configuration and measurements, so no experiment "
                  "or profile file is read")
      ->required();
  sub->add_option("--output", a->output, "also write the rerun to this directory, as run --output does");
  sub->add_option("--jobs", a->jobs, "simulations run at once (results are identical for any value)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub->add_flag("--quiet,-q", a->quiet, "no progress lines on stderr");
  sub->footer("\nPrints `identical: N points, M metrics` when the rerun's JSON text equals the result's (apart from "
              "manifest.wall; the rerun's manifest keeps the result's command_line), else each point that differs "
              "(index, swept values) with its parameters and metrics (result mean -> rerun mean, relative change), "
              "what else differs, and the likely cause: another version, commit, SimGrid or library (the result's "
              "manifest against this build), or a result edited after its run. Exit status: 0 identical, 1 "
              "different, 2 a file that is not a result, or one too old to hold what a rerun needs.");
  Command c{sub, [a] { return reproduce(*a); }};
  c.handles_stop = [] { return true; };
  return c;
}

} // namespace vsim::app::cli
