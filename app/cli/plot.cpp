// `vsocksim plot RESULT.json [--output DIR] [--metrics M,...] [--log|--linear]
// [--x KEY] [-q]`: a result's figures; `plot --timeline TRACE.json
// [--output FIGURE]`: a trace's timeline (app/report/plot.hpp,
// app/run/timeline.hpp).
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/cli/command.hpp"
#include "app/report/plot.hpp"
#include "app/report/results.hpp"
#include "app/run/timeline.hpp"

namespace fs = std::filesystem;

namespace vsim::app::cli {

namespace {

struct PlotArgs {
  std::string result, timeline, dir, metrics;
  PlotOptions opt;
  bool log = false, linear = false;
};

int plot(PlotArgs& a)
{
  if (!a.timeline.empty()) {
    if (a.dir.empty())
      a.dir = (fs::path(a.timeline).parent_path() / fs::path(a.timeline).stem()).string();
    for (const std::string& f : plot_timeline(a.timeline, a.dir))
      std::cout << f << '\n';
    return 0;
  }
  if (a.result.empty())
    throw InputError("vsocksim: error: plot needs a RESULT (or --timeline TRACE)");
  if (a.dir.empty())
    a.dir = (fs::path(a.result).parent_path() / fs::path(a.result).stem()).string() + "-plots";
  a.opt.metrics = split_commas(a.metrics);
  a.opt.y_scale = a.log ? PlotOptions::Scale::Log : a.linear ? PlotOptions::Scale::Linear : PlotOptions::Scale::Auto;
  for (const std::string& f : plot_result(a.result, a.dir, a.opt))
    std::cout << f << '\n';
  return 0;
}

} // namespace

Command add_plot(CLI::App& app)
{
  auto a = std::make_shared<PlotArgs>();
  auto* sub = app.add_subcommand("plot", "draw a result's figures, or a trace's timeline, with gnuplot (SVG and PNG)");
  auto* result_opt = sub->add_option("result", a->result, "JSON result (run --format json, or DIR/result.json)");
  sub->add_option("--timeline", a->timeline,
                  "instead of a result, draw the trace of run --trace: one row per CPU (boxes coloured by thread, "
                  "a strip by category), kernel functions marked, ring, queue and credit levels below "
                  "(docs/trace.md)")
      ->excludes(result_opt);
  sub->add_option("--output,-o", a->dir,
                  "directory for the figures (default: RESULT without .json, plus -plots); with --timeline: the "
                  "figure (FILE.png or FILE.svg) or the stem of both (default: TRACE without .json)");
  sub->add_option("--x", a->opt.x_key, "the swept key on the x axis (default: the one with the most values)");
  sub->add_option("--metrics", a->metrics,
                  "comma-separated metrics to draw, a figure each, in their units; cpu_per_GB for the CPU cost "
                  "(default: the run's report.metrics, and cpu_per_GB)");
  auto* log_opt = sub->add_flag("--log", a->log,
                                "every y axis on a log scale, leaving out values not above 0 (default: log "
                                "when the values drawn span more than 20x, else linear)");
  sub->add_flag("--linear", a->linear, "every y axis on a linear scale, from 0")->excludes(log_opt);
  sub->add_flag("--quiet,-q", a->opt.quiet, "no note on stderr of the scales chosen");
  return {sub, [a] { return plot(*a); }};
}

} // namespace vsim::app::cli
