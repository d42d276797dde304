// `vsocksim explain RESULT.json [--point K]`: per point, what limits it
// (app/report/explain.hpp).
#include <iostream>
#include <memory>
#include <optional>

#include "app/cli/command.hpp"
#include "app/report/explain.hpp"

namespace vsim::app::cli {

namespace {

struct ExplainArgs {
  std::string path;
  long long point = -1;
  bool advise = false;
  CLI::Option* point_opt = nullptr;
};

} // namespace

Command add_explain(CLI::App& app)
{
  auto a = std::make_shared<ExplainArgs>();
  auto* sub = app.add_subcommand(
      "explain", "say per point what limits it: the saturated resource, the waits, the stages, the analytic bound");
  sub->add_option("result", a->path, "RESULT.json: the JSON of run --format json, or result.json of --output")
      ->required();
  a->point_opt = sub->add_option("--point", a->point, "only this point (its position in the result, from 0)");
  sub->add_flag("--advise", a->advise,
                "for a run with --ensemble: per effect (two points that differ in one swept key) whose interval is "
                "wide, the measurement (a figure of one point) that would narrow it most, judged from the members");
  return {sub, [a] {
            if (a->advise) {
              std::cout << advise_result(a->path);
              return 0;
            }
            std::optional<long long> k;
            if (a->point_opt->count())
              k = a->point;
            std::cout << explain_result(a->path, k);
            return 0;
          }};
}

} // namespace vsim::app::cli
