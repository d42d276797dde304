// Predicted against measured: published figures (a CSV kept beside the
// experiment) matched to the points of a run.
//
// CSV: '#' lines are comments; the header names experiment keys (a point
// matches a row when its resolved value of every such key, as text, equals
// the row's), then `metric`, any of `min,max,mean,median`, `source` and
// optionally `unit`.
//
// `metric` names a metric of the result, or is arithmetic over metric names,
// numeric experiment keys (the point's value) and numbers (+ - * /,
// parentheses) for figures published in other units, per amount of data, or
// derived from several metrics; it is evaluated on each iteration, then
// summarised over the iterations like a metric:
//   throughput_MBps*0.008                                    Gbit/s
//   throughput_MBps*8/(host_cpu_percent+guest_cpu_percent)   Mbit/s per %CPU
//   writer_sys_seconds*1e10/workload.total_bytes             s per 10 GB
// `unit` is the published unit, shown beside the figures; for a plain metric
// name it must be that metric's unit.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/metric_expr.hpp"
#include "app/report/stats.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

struct Measurement {
  int line = 0;
  std::vector<std::pair<std::string, std::string>> keys; // experiment key -> value text
  std::vector<int> key_columns;                          // column of each key's cell
  std::string metric;                                    // the cell as written
  MetricExpr expr;
  int metric_column = 0;
  std::string unit;                    // the `unit` cell, else the metric's declared unit, else ""
  std::map<std::string, double> stats; // of min, max, mean, median: those given
  std::string source;

  std::string keys_text() const;                      // "key=value, key=value"
  std::string value_of(const std::string& key) const; // the row's value of a key, "" when it names none
};

// Throws InputError (file:line:column) on a malformed file, an unknown
// column or key, a metric that no transport reports, a malformed metric
// expression, or a unit that is not the named metric's.
std::vector<Measurement> load_measurements(const std::string& path, const ParamRegistry& reg);
// The same from the file's text (a result's manifest.experiment.measurements,
// for reproduce); `path` names it in messages.
std::vector<Measurement> load_measurements_text(const std::string& text, const std::string& path,
                                                const ParamRegistry& reg);
// The file's bytes; InputError when it cannot be read.
std::string read_measurements_text(const std::string& path);

struct ComparisonRow {
  const Measurement* m;
  std::size_t point; // Point::index
  std::string stat;  // "mean" when published, else "median"
  double measured;
  double predicted;
  double error_percent; // (predicted - measured) / measured x 100
  // sim.ensemble: the figure for each member of the point's ensemble (the
  // metric expression on the member's metrics), and the members' weights;
  // empty without one.
  MemberValues members = {};
  std::vector<double> weights = {};
  // sim.ensemble: the model's own error on an effect, as the point's profile
  // knows it (effect_discrepancy(profile).sigma, transports/profiles.hpp);
  // 0 without an ensemble or when the profile cannot tell it.
  double discrepancy = 0;
};

// A row whose point ran but whose metric the run did not report.
struct MissingMetric {
  const Measurement* m;
  std::size_t point;
  std::string metric; // the absent metric
};

// A row whose point failed: nothing to compare.
struct FailedRow {
  const Measurement* m;
  std::size_t point; // Point::index
};

struct Comparison {
  std::string file;
  std::vector<ComparisonRow> rows;
  std::vector<MissingMetric> missing;
  std::vector<FailedRow> failed; // rows whose point failed (PointResult::failed)
  std::size_t unmatched = 0;     // rows no point of this run matches
  double mean_abs_error_percent = 0;
  std::size_t worst = 0; // index into rows
};

// For each measurement, the index of the point it matches, or -1 when no
// point of this run matches. Throws InputError when a row matches several.
std::vector<long> match_measurements(const Experiment& ex, const std::vector<Measurement>& measurements,
                                     const std::string& file);

// Why row `m` matches no point of `ex`, as one InputError line: the first of
// its cells whose value no point has (file:line:column of that cell, with
// the values the points have), else that no point has the combination.
std::string unmatched_row_message(const Experiment& ex, const Measurement& m, const std::string& file);

// The error message for a row whose metric the run did not report.
std::string missing_metric_message(const Experiment& ex, const MissingMetric& mm, const std::string& file);

Comparison compare(const Experiment& ex, const std::vector<PointResult>& results,
                   const std::vector<Measurement>& measurements, const std::string& file);
std::string comparison_table(const Comparison& c);
nlohmann::ordered_json comparison_json(const Comparison& c);

} // namespace vsim::app
