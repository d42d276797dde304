// Predicted against measured: published figures (a CSV kept beside the
// experiment) matched to the points of a run.
//
// CSV: '#' lines are comments; the header names experiment keys (a point
// matches a row when its resolved value of every such key, as text, equals
// the row's), then `metric`, any of `min,max,mean,median`, and `source`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment.hpp"
#include "app/runner.hpp"

namespace vsim::app {

struct Measurement {
  int line = 0;
  std::vector<std::pair<std::string, std::string>> keys;  // experiment key -> value text
  std::string metric;
  std::map<std::string, double> stats;  // of min, max, mean, median: those given
  std::string source;
};

// Declares `validation.measurements` (the CSV path, relative to the
// experiment file).
void declare_validation_params(ParamRegistry& reg);

// Throws InputError (file:line:column) on a malformed file, an unknown
// column or key, or a metric that no transport reports.
std::vector<Measurement> load_measurements(const std::string& path, const ParamRegistry& reg);

struct ComparisonRow {
  const Measurement* m;
  std::size_t point;  // Point::index
  std::string stat;   // "mean" when published, else "median"
  double measured;
  double predicted;
  double error_percent;  // (predicted - measured) / measured x 100
};

struct Comparison {
  std::string file;
  std::vector<ComparisonRow> rows;
  std::size_t unmatched = 0;       // rows no point of this run matches
  double mean_abs_error_percent = 0;
  std::size_t worst = 0;           // index into rows
};

// For each measurement, the index of the point it matches, or -1 when no
// point of this run matches. Throws InputError when a row matches several.
std::vector<long> match_measurements(const Experiment& ex, const std::vector<Measurement>& measurements,
                                     const std::string& file);

Comparison compare(const Experiment& ex, const std::vector<PointResult>& results,
                   const std::vector<Measurement>& measurements, const std::string& file);
std::string comparison_table(const Comparison& c);
nlohmann::ordered_json comparison_json(const Comparison& c);

}  // namespace vsim::app
