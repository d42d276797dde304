// `vsocksim validate [DIR_OR_FILE...] [--jobs N] [--set KEY=VALUE]...
// [--markdown] [--plot DIR] [--worst N] [-q]`: the validation studies run
// together and every published row set against the prediction
// (app/validation/validate.hpp).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/cli/command.hpp"
#include "app/cli/common.hpp"
#include "app/experiment/estimate.hpp"
#include "app/report/results.hpp"
#include "app/run/output_dir.hpp"
#include "app/run/stop.hpp"
#include "app/validation/validate.hpp"
#include "transports/simulate.hpp"

namespace vsim::app::cli {

namespace {

struct ValidateArgs {
  std::vector<std::string> paths, sets;
  unsigned jobs = default_jobs();
  std::string plot_dir;
  std::size_t worst = 0;
  bool markdown = false, quiet = false, ensemble = false;
};

// The command that regenerates a Markdown report: what changes its content
// (the --set entries, --worst and the paths), not --jobs or --plot.
std::string markdown_command(const std::vector<std::string>& sets, const std::vector<std::string>& paths,
                             std::size_t worst)
{
  std::string cmd = "build/vsocksim validate --markdown";
  if (worst > 0)
    cmd += fmt::format(" --worst {}", worst);
  for (const std::string& s : sets)
    cmd += " --set '" + s + "'";
  if (paths != std::vector<std::string>{kValidationDir})
    for (const std::string& p : paths)
      cmd += " " + p;
  return cmd + " > docs/validation.md";
}

// The end of a validate in which points failed: their rows were not compared.
int failed_points(const std::vector<Study>& studies)
{
  FailedPoints failed; // "FILE: point K (...)", result
  std::size_t points = 0, rows = 0;
  for (const Study& s : studies) {
    points += s.results.size();
    rows += s.comparison.failed.size();
    for (std::size_t k = 0; k < s.results.size(); ++k)
      if (!s.results[k].failed.empty())
        failed.emplace_back(s.file + ": " + point_name(s.ex.points[k]), &s.results[k]);
  }
  if (failed.empty())
    return 0;
  std::cout.flush();
  return points_failed(failed, fmt::format("{} of {} point(s) failed; their {} row(s) were not compared, the "
                                           "others are printed",
                                           failed.size(), points, rows));
}

int validate(ValidateArgs a)
{
  if (a.paths.empty())
    a.paths.push_back(kValidationDir);
  std::vector<Study> studies = load_studies(validation_files(a.paths), a.sets, a.ensemble);
  if (!a.plot_dir.empty())
    check_output_dir(a.plot_dir);
  if (!a.quiet)
    std::cerr << fmt::format("validate: {} {}, {}\n", studies.size(), studies.size() == 1 ? "study" : "studies",
                             describe_estimate(estimate(combined(studies)), a.jobs));
  if (stop::requested())
    return stopped(0, 0, "");
  try {
    run_studies(studies, simulate_iteration, run_options(a.jobs, a.quiet));
  } catch (const Interrupted&) {
    return stopped(0, 0, "");
  }
  if (stop::requested())
    return stopped(0, 0, "");
  std::cout << (a.markdown ? validation_markdown(studies, markdown_command(a.sets, a.paths, a.worst), a.worst)
                           : validation_text(studies, a.worst));
  if (!a.plot_dir.empty())
    for (const std::string& f : plot_validation(studies, a.plot_dir))
      if (!a.quiet)
        std::cerr << "wrote " << f << '\n';
  return failed_points(studies);
}

} // namespace

Command add_validate(CLI::App& app)
{
  auto a = std::make_shared<ValidateArgs>();
  auto* sub = app.add_subcommand(
      "validate", "run the validation experiments and print predicted against published figures, per row and study");
  sub->add_option("paths", a->paths,
                  fmt::format("directories of validation experiments (every .yaml in them) or experiment files "
                              "(default: {}, relative to the current directory)",
                              kValidationDir));
  sub->add_option("--set", a->sets, "override a key in every experiment: KEY=VALUE (repeatable)");
  sub->add_option("--jobs", a->jobs, "simulations run at once (results are identical for any value)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub->add_option("--plot", a->plot_dir, "also draw predicted against measured (SVG and PNG) into this directory");
  sub->add_flag("--ensemble", a->ensemble,
                "run every member of the ensemble of each study's platform profile that has one (sim.ensemble: "
                "true): each effect gains its member-by-member p10..p90 interval, and the report how often it "
                "covers the published ratio");
  sub->add_flag("--markdown", a->markdown, "print the report as a Markdown document (docs/validation.md)");
  sub->add_option("--worst", a->worst,
                  "also list the N design effects larger than 10% whose predicted size is furthest from the "
                  "published, of every study (0: none)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000}))
      ->capture_default_str();
  sub->add_flag("--quiet,-q", a->quiet, "no progress lines on stderr");
  Command c{sub, [a] { return validate(*a); }};
  c.handles_stop = [] { return true; };
  return c;
}

} // namespace vsim::app::cli
