// `vsocksim check FILE.yaml [--set KEY=VALUE]... [--jobs N]`: the experiment
// loaded and checked as `run` would, its size and time estimate, the
// warnings for clamped or ignored values and the points that are the same
// run; nothing is simulated.
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/command.hpp"
#include "app/cli/common.hpp"
#include "app/experiment/describe.hpp"
#include "app/experiment/effective.hpp"
#include "app/experiment/estimate.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/search_spec.hpp"
#include "app/search/search.hpp"

namespace vsim::app::cli {

namespace {

struct CheckArgs {
  std::string file;
  std::vector<std::string> sets;
  unsigned jobs = default_jobs();
};

int check(const CheckArgs& a)
{
  Experiment ex = load_experiment(a.file, a.sets, registry());
  prepare(ex, a.file);
  if (ex.search) { // what `search` plans before it runs anything
    std::vector<std::string> warnings;
    const SearchPlan plan = plan_search(ex, {}, &warnings);
    std::cout << fmt::format("{}: ok: experiment '{}', a search over {} knob(s), {} combination(s){}; budget {}, "
                             "method {}; config sha256 {}\n",
                             a.file, ex.name, ex.search->space.size(), format_number(plan.combinations),
                             plan.enumerated ? fmt::format(" ({} to simulate)", plan.candidates) : "", plan.budget,
                             plan.chosen, ex.config_sha256);
    for (const std::string& w : warnings)
      std::cout << fmt::format("{}: warning: {}\n", a.file, w);
    return 0;
  }
  std::cout << fmt::format("{}: ok: experiment '{}', {} point(s), {}; config sha256 {}\n", a.file, ex.name,
                           ex.points.size(), describe_estimate(estimate(ex), a.jobs), ex.config_sha256);
  for (const std::string& w : effective_warnings(ex))
    std::cout << fmt::format("{}: warning: {}\n", a.file, w);
  for (const std::string& line : same_run_lines(ex))
    std::cout << fmt::format("{}: note: {}\n", a.file, line);
  // Defaults that stand for a kernel (issue 51, item 5): which one a point
  // gets when the file names none.
  auto runs = [&](const char* transport) {
    return std::any_of(ex.points.begin(), ex.points.end(),
                       [&](const Point& p) { return p.params.text("transport") == transport; });
  };
  auto names = [&](const std::string& key) {
    for (const auto* keys : {&ex.given, &ex.grid_keys, &ex.zip_keys})
      if (std::find(keys->begin(), keys->end(), key) != keys->end())
        return true;
    return false;
  };
  if (!names("platform")) {
    std::set<std::string> platforms;
    for (const Point& p : ex.points)
      platforms.insert(p.params.text("platform"));
    std::cout << fmt::format("{}: note: platform is not given: the points run on {} (the newest shipped profile of "
                             "their transport); set it to pin a machine\n",
                             a.file, fmt::join(platforms, " and "));
  }
  // hv_sock: only when one of the knobs the preset sets is left to it.
  if (runs("hv_sock") && !names("hv_sock.preset")) {
    std::vector<std::string> left;
    for (const ParamSpec& spec : registry().all())
      if (spec.default_text == kFromPreset && spec.scope == "hv_sock" && !names(spec.path))
        left.push_back(spec.path);
    if (!left.empty())
      std::cout << fmt::format("{}: note: hv_sock.preset is not given: {} follow {}'s hv_sock (the default, the "
                               "newest modelled kernel); set it to pin a kernel\n",
                               a.file, fmt::join(left, ", "), registry().find("hv_sock.preset")->default_text);
  }
  if (runs("virtio_vsock") && !names("virtio_vsock.preset"))
    std::cout << fmt::format("{}: note: virtio_vsock.preset is not given: the points model {}'s virtio-vsock (the "
                             "default, the newest modelled kernel); set it to pin a kernel\n",
                             a.file, registry().find("virtio_vsock.preset")->default_text);
  return 0;
}

} // namespace

Command add_check(CLI::App& app)
{
  auto a = std::make_shared<CheckArgs>();
  auto* sub = app.add_subcommand("check", "validate an experiment without simulating");
  sub->add_option("file", a->file, "experiment file (YAML)")->required();
  sub->add_option("--set", a->sets, "override a key: KEY=VALUE (repeatable)");
  sub->add_option("--jobs", a->jobs, "jobs the time estimate assumes")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  return {sub, [a] { return check(*a); }};
}

} // namespace vsim::app::cli
