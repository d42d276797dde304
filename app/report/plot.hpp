// `vsocksim plot RESULT`: figures of a result (JSON of `run`) rendered with
// gnuplot to SVG and PNG. One figure per metric (by default the run's
// report.metrics, in the metric's own unit): its mean against the swept key
// with the most values (or --x KEY), one line per combination of the other
// swept values, the min-max over the iterations as error bars. Round trips:
// each point's distribution (CDF on a log axis) and its percentiles against
// the message size. CPU cost per
// GB (guest and host) as bars labelled by the points' swept values; predicted
// against measured when the result carries published figures. Each y axis
// (and a numeric x axis) is logarithmic when its values span more than 20x,
// unless forced. The data files and the gnuplot script are kept beside the
// figures; the same result gives the same script and figures, byte for byte.
#pragma once

#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace vsim::app {

// Figures of predicted against measured (validate --plot).
struct PvmSeries {
  std::string title;                             // legend entry
  std::vector<std::pair<double, double>> points; // (measured, predicted)
};
struct PvmFigure {
  std::string stem; // file name without extension
  std::string title;
  std::vector<PvmSeries> series;
};

// Renders each figure to DIR/STEM.svg and .png: predicted against measured
// with the line predicted = measured and +-15% guides, on log-log axes
// (figures mixing units and magnitudes stay readable: the guides are
// ratios), linear when a value is not positive. Keeps DIR/STEM.dat and the
// script DIR/SCRIPT. Returns the figures written. Throws std::runtime_error
// when gnuplot is missing or fails.
std::vector<std::string> plot_predicted_vs_measured(const std::vector<PvmFigure>& figures, const std::string& dir,
                                                    const std::string& script);

// A search's objective space (vsocksim search, docs/search.md): one figure
// per pair of objectives, the feasible points evaluated, those that broke a
// constraint, the Pareto front (joined in its order), and a constraint
// whose expression is an axis's objective as a dashed line at its bound.
struct ObjectiveSpaceFigure {
  std::string stem; // file name without extension
  std::string title, x_label, y_label;
  std::vector<std::pair<double, double>> feasible, infeasible, front;
  std::vector<double> x_bounds, y_bounds;
};
// Renders each to DIR/STEM.svg and .png, keeping DIR/STEM.dat and the
// script DIR/SCRIPT; returns the figures written. Throws std::runtime_error
// when gnuplot is missing or fails.
std::vector<std::string> plot_objective_space(const std::vector<ObjectiveSpaceFigure>& figures, const std::string& dir,
                                              const std::string& script);

// The name --metrics takes for the CPU cost figure (no metric: worked out
// from throughput_MBps, guest_cpu_percent and host_cpu_percent).
inline constexpr const char* kCpuPerGbFigure = "cpu_per_GB";
// The names --metrics takes for the round-trip figures (a result whose
// points carry rtt_histogram): the distribution of each point's round
// trips (CDF, log x axis, from the histogram) and rtt_p50/p90/p99/p999_us
// against the message size.
inline constexpr const char* kRttCdfFigure = "rtt_cdf";
inline constexpr const char* kRttPercentilesFigure = "rtt_percentiles";

struct PlotOptions {
  enum class Scale { Auto, Linear, Log };
  std::string x_key; // the x axis (a swept key); empty: the swept key with the most values
  // The figures, by metric name (or kCpuPerGbFigure, kRttCdfFigure,
  // kRttPercentilesFigure); empty: the run's report.metrics (those the
  // result has) and the CPU cost, or, for a result without report.metrics,
  // throughput_MBps and the CPU cost; and for round trips the two
  // round-trip figures.
  std::vector<std::string> metrics;
  // Every y axis: Auto is log when the values drawn are all positive and
  // the largest is more than 20 times the smallest, else linear (from 0
  // unless a value is negative). Log leaves out (with a warning) the points
  // whose value is not positive.
  Scale y_scale = Scale::Auto;
  bool quiet = false; // no note per figure of the scales chosen
};

// Returns the files written; notes (scales chosen, unless quiet) and
// warnings go to `err`. Throws InputError for an unreadable result, an --x
// key the result does not sweep, a --metrics name the result does not have,
// or a figure with nothing to draw on a log axis; std::runtime_error when
// gnuplot is missing or fails.
std::vector<std::string> plot_result(const std::string& result_path, const std::string& out_dir,
                                     const PlotOptions& opt = {}, std::ostream& err = std::cerr);

// `vsocksim plot --timeline TRACE.json`: the trace's window drawn with
// gnuplot (one row per CPU, a box per slice coloured by thread, hatched by
// category, the counters below on the same time axis) to OUT (.png or
// .svg); keeps OUT's stem .dat files and .gp script beside it. Returns the
// files written. InputError for an unreadable or malformed trace.
std::vector<std::string> plot_timeline(const std::string& trace_path, const std::string& out);

} // namespace vsim::app
