// `vsocksim compare A B` or `compare A --points I,J [--metrics M,...|all]`:
// what differs between two results (or two points of one), then each metric
// side by side with the relative change.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "app/cli/command.hpp"
#include "app/report/results.hpp"
#include "app/report/show.hpp"

namespace vsim::app::cli {

namespace {

struct CompareArgs {
  std::vector<std::string> paths;
  std::string points, metrics;
};

// --points I,J: two point indices.
std::pair<std::size_t, std::size_t> parse_points(const std::string& text)
{
  const std::vector<std::string> ij = split_commas(text);
  std::size_t i = 0, j = 0;
  auto number = [](const std::string& t, std::size_t& out) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 9)
      return false;
    out = std::stoul(t);
    return true;
  };
  if (ij.size() != 2 || !number(ij[0], i) || !number(ij[1], j))
    throw InputError(fmt::format("--points '{}': error: needs two point indices (allowed: I,J, e.g. 0,3)", text));
  return {i, j};
}

int compare(const CompareArgs& a)
{
  std::optional<std::pair<std::size_t, std::size_t>> pts;
  if (!a.points.empty())
    pts = parse_points(a.points);
  std::cout << compare_results(a.paths.at(0), a.paths.size() > 1 ? a.paths[1] : "", pts, split_commas(a.metrics));
  return 0;
}

} // namespace

Command add_compare(CLI::App& app)
{
  auto a = std::make_shared<CompareArgs>();
  auto* sub = app.add_subcommand(
      "compare", "each metric of two results (or two points of one) side by side, with the relative change");
  sub->add_option("results", a->paths, "RESULT_A [RESULT_B] (JSON or --output directories)")
      ->required()
      ->expected(1, 2);
  sub->add_option("--points", a->points, "I,J: compare points I and J of the one result given");
  sub->add_option("--metrics", a->metrics,
                  "comma-separated metrics (default: the run's report.metrics; 'all': every metric)");
  return {sub, [a] { return compare(*a); }};
}

} // namespace vsim::app::cli
