// `vsocksim validate`: the shipped validation experiments (every YAML file of
// experiments/validation/, each naming its published figures through
// `validation.measurements`) run together, and every published row set
// against the model's prediction: per row, per study and overall.
//
// Everything is loaded and checked before anything runs: an experiment
// without measurements, a malformed measurements file or a row that matches
// no point is bad input (exit 2, file:line:column).
#pragma once

#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"
#include "app/validation/measurements.hpp"

namespace vsim::app {

// The directory validate reads when given none, relative to the current
// directory (the repository's top directory).
inline constexpr const char* kValidationDir = "experiments/validation";

// One validation experiment with its published figures.
struct Study {
  std::string file; // the experiment file, as found
  Experiment ex;
  std::string measurements_file; // relative to the current directory
  std::vector<Measurement> measurements;
  std::vector<PointResult> results; // one per point of ex, once run
  Comparison comparison;            // once run
};

// The experiment files named by `paths`: a directory stands for its *.yaml
// and *.yml files (not below), sorted by name; a file for itself. A file
// named twice counts once. Throws InputError for a path that does not exist
// or a directory without experiments.
std::vector<std::string> validation_files(const std::vector<std::string>& paths);

// Loads every file (after the --set entries) with its measurements and
// checks that each row matches exactly one point. With `ensemble`, a study
// whose platform profile has an ensemble runs it (sim.ensemble: true); the
// others run as they are. Throws InputError.
std::vector<Study> load_studies(const std::vector<std::string>& files, const std::vector<std::string>& sets,
                                bool ensemble = false);

// One experiment holding every study's points, in order, renumbered from 0:
// what runs, so that the pool of jobs stays full across the studies.
Experiment combined(const std::vector<Study>& studies);

// Runs every point of every study in one pool of opt.jobs simulations, then
// compares. A point that fails (PointResult::failed) leaves its rows out of
// the comparison (Comparison::failed) and the others run on. Throws
// InputError when a row's metric is not in the results (with its
// file:line:column), and whatever run_points throws.
void run_studies(std::vector<Study>& studies, const IterationFn& fn, const RunOptions& opt);

// The report: per study its rows (study, key values, metric, unit, stat,
// measured, predicted, error), a summary line (rows, mean absolute error,
// worst row) and a line per row not compared as its point failed; then the
// overall line. Text columns, or a Markdown document
// whose top says how to regenerate it (`command`). With `worst` > 0 the
// report ends with (Markdown: its summary has) the `worst` design effects
// larger than 10% whose predicted size is furthest off, of every study.
std::string validation_text(const std::vector<Study>& studies, std::size_t worst = 0);
std::string validation_markdown(const std::vector<Study>& studies, const std::string& command, std::size_t worst = 0);

// Predicted against measured, log-log with +-15% guides: one figure per
// study and one with all (SVG and PNG under `dir`). Returns the files
// written.
std::vector<std::string> plot_validation(const std::vector<Study>& studies, const std::string& dir);

} // namespace vsim::app
