// `vsocksim show RESULT [--metrics M,...|all] [--stat S] [--format F]`: a
// result (JSON or --output directory) printed again, without simulating.
#include <iostream>
#include <memory>

#include "app/cli/command.hpp"
#include "app/report/results.hpp"
#include "app/report/show.hpp"

namespace vsim::app::cli {

namespace {

struct ShowArgs {
  std::string path, metrics, format = "table", stat;
};

} // namespace

Command add_show(CLI::App& app)
{
  auto a = std::make_shared<ShowArgs>();
  auto* sub = app.add_subcommand("show", "re-print a result (JSON or --output directory) without simulating");
  sub->add_option("result", a->path, "RESULT.json (run --format json) or a run --output directory")->required();
  sub->add_option("--metrics", a->metrics,
                  "comma-separated metrics to show (default: the run's report.metrics; "
                  "'all': every metric)");
  sub->add_option("--stat", a->stat, "what a table cell shows (default: the run's report.stat)")
      ->check(CLI::IsMember({"all", "mean", "ci", "range"}));
  sub->add_option("--format", a->format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  return {sub, [a] {
            std::cout << show_result(a->path, split_commas(a->metrics), a->format, a->stat, terminal_columns());
            return 0;
          }};
}

} // namespace vsim::app::cli
