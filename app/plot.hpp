// `vsocksim plot RESULT`: figures of a result (JSON of `run`) rendered with
// gnuplot to SVG and PNG: throughput against the swept key with the most
// values (or --x KEY; log x for sizes spanning 8x or more), one line per
// design choice, y from 0, error bars from the iterations; CPU cost per GB
// (guest and host) as bars labelled by the points' swept values; predicted
// against measured when the result carries published figures. The data
// files and the gnuplot script are kept beside the figures.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vsim::app {

// Figures of predicted against measured (validate --plot).
struct PvmSeries {
  std::string title;                             // legend entry
  std::vector<std::pair<double, double>> points;  // (measured, predicted)
};
struct PvmFigure {
  std::string stem;  // file name without extension
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

struct PlotOptions {
  std::string x_key;   // the x axis (a swept key); empty: the swept key with the most values
  bool log_y = false;  // throughput on a log scale (otherwise from 0)
};

// Returns the files written. Throws InputError for an unreadable result or
// an --x key the result does not sweep, std::runtime_error when gnuplot is
// missing or fails.
std::vector<std::string> plot_result(const std::string& result_path, const std::string& out_dir,
                                     const PlotOptions& opt = {});

// `vsocksim plot --timeline TRACE.json`: the trace's window drawn with
// gnuplot (one row per CPU, a box per slice coloured by thread, hatched by
// category, the counters below on the same time axis) to OUT (.png or
// .svg); keeps OUT's stem .dat files and .gp script beside it. Returns the
// files written. InputError for an unreadable or malformed trace.
std::vector<std::string> plot_timeline(const std::string& trace_path, const std::string& out);

}  // namespace vsim::app
