// `vsocksim calibrate`: a platform profile fitted to measured figures.
//
// A calibration experiment names its starting profile (`platform:`), its
// points (the sweep) and its measured figures (`validation.measurements`,
// app/validation/measurements.hpp). An evaluation runs every point with
// candidate `costs.*` values (the same values on every point) and compares
// each row's prediction with its figure. The fit (docs/calibration.md, "How
// calibrate fits"):
//
//  1. which costs: named (--fit), or chosen by a sensitivity analysis
//     (identify.hpp): each candidate's elasticity on each fit row, the costs
//     no row moves and those collinear with others left at their value;
//  2. a bounded derivative-free search from NLopt (optimiser.hpp) inside each
//     cost's plausible range, in log space for positive ranges, minimising
//     the mean squared log ratio predicted / measured over the fit rows;
//  3. the rows evaluated again with the experiment's own iterations, before
//     and after, held-out rows (--hold-out) and K-fold cross-validation
//     (--folds) reported apart from the fit rows.
//
// Everything that can be checked is checked before anything runs (exit 2).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/run/runner.hpp"
#include "app/validation/validate.hpp"
#include "transports/costs.hpp"
#include "transports/profiles.hpp"

namespace vsim::app {

// The default number of folds of the cross-validation (0 = none).
inline constexpr unsigned kDefaultFolds = 3;
// The most costs the sensitivity analysis chooses (the largest effects
// first): each costs the search about two evaluations more.
inline constexpr unsigned kDefaultMaxCosts = 6;
// The main search's default budget for n costs, and its least.
unsigned default_evaluations(std::size_t n);

struct CalibrateOptions {
  std::vector<std::string> sets;     // --set KEY=VALUE, applied to the experiment
  std::vector<std::string> fit;      // cost names (without "costs."); empty: the sensitivity analysis decides
  std::vector<std::string> hold_out; // --hold-out filters as given, "KEY=VALUE[,KEY=VALUE]"
  unsigned folds = kDefaultFolds;
  std::string optimiser = "bobyqa";      // optimiser.hpp: optimiser_names()
  unsigned max_evaluations = 0;          // of the main search; 0: the default for the number of costs
  unsigned fold_evaluations = 0;         // of each fold's search; 0: the default (a third of the main search's)
  unsigned max_costs = kDefaultMaxCosts; // the sensitivity analysis chooses at most this many
  unsigned search_iterations = 1;        // iterations per point during the search; 0: the experiment's own
  unsigned ensemble = 0;                 // members to find (0: none): cost vectors within the rows' noise
  double noise_percent = 5;              // the rows' noise, % (one figure for every row)
  // The costs the ensemble's members vary: "fitted" (the fitted ones),
  // "seen" (also every cost the sensitivity analysis found moving a row but
  // did not fit: the rows see it, and cannot tell it from those fitted) or
  // "all" (also the costs no row moves: only their plausible range bounds them).
  std::string ensemble_costs = "seen";
  // No search: the start's values stay (the profile is the start's, fit
  // report and all) and only the ensemble around them is found.
  bool ensemble_only = false;
  // Write the fit even when its K-fold cross-validation error is not below
  // the start's error on the fit rows by 1% of it (by default the start is kept then:
  // a fit that does not predict rows it did not see better than the start
  // has moved costs the rows cannot pin down, issue 50).
  bool keep_unvalidated = false;
  bool allow_bound = false;       // write a profile with a fitted cost at a bound of its range
  bool allow_broken_ties = false; // write a profile that breaks a tie of its transport
  std::string name;               // the new profile's name
  // --hardware KEY=VALUE: what the new profile says of its machine (keys of
  // hardware_keys()); a profile of another name than the start's says only
  // these (the start's machine is not the new one's).
  std::vector<std::pair<std::string, std::string>> hardware;
  std::string experiment_arg; // the experiment files as given on the command line, ", " between
};

// A --hold-out filter: rows matching every pair are kept out of the fit.
struct HoldOut {
  std::string text;
  std::vector<std::pair<std::string, std::string>> pairs; // key -> value, as the rows write them
};

// A cost that may move: its declaration and starting value. A cost of a
// tie (transports/costs.hpp CostTie) moves with the tie's other members,
// as one cost: `decl` is the member that stands for it (the tie's first
// member, or the one --fit named), its plausible range narrowed to the
// situation's, and `tied` the others, which take its value.
struct FitCost {
  CostDecl decl;
  double start = 0;              // the experiment's value (the starting profile's, or a --set/`costs:` one)
  std::string tie;               // the tie's name ("" for none)
  std::vector<std::string> tied; // the tie's other members
  bool log_scale() const { return decl.plausible_min > 0; }
};

// `d` as calibrate fits it under `transport`: alone, or standing for its tie
// (the range narrowed to the situation's, the other members listed).
FitCost fit_cost(const CostDecl& d, double start, const std::string& transport);

// The values of `costs` (one per cost, in order) as cost name -> value, each
// tie's other members with its cost's value.
std::map<std::string, double> fitted_values(const std::vector<FitCost>& costs, const std::vector<double>& values);

// One measured row of a calibration: which experiment, which of its
// measurements, the point it matches.
struct RowRef {
  std::size_t study = 0, m = 0;
  long point = 0;
};

// Everything calibrate needs, loaded and checked. A joint fit has several
// experiments of one machine (one starting profile, one transport, the same
// cost values): their rows are fitted together, study by study in file
// order ("rows" below index `rows`).
struct CalibrationInput {
  std::vector<Study> studies;         // the experiments with their matched measurements, as given
  std::vector<RowRef> rows;           // every measurement of every study
  const PlatformProfile* start;       // the starting profile
  std::vector<HoldOut> holds;         //
  std::vector<std::size_t> fit_rows;  // rows fitted on, in order
  std::vector<std::size_t> held_rows; // rows held out, in order
  std::vector<CostDecl> candidates;   // the costs the sensitivity analysis considers (or --fit's)
  std::vector<FitCost> named;         // --fit's costs (empty without --fit)
  std::vector<std::pair<std::string, std::string>> excluded; // cost -> why it is no candidate

  // The first experiment: its base gives the transport, the platform and the
  // costs every experiment shares.
  const Study& study() const { return studies.front(); }
  const Measurement& measurement(std::size_t row) const
  {
    return studies.at(rows.at(row).study).measurements.at(rows[row].m);
  }
  const Point& point(std::size_t row) const
  {
    return studies.at(rows.at(row).study).ex.points.at(static_cast<std::size_t>(rows[row].point));
  }
  // A row's label: its keys and metric, after its experiment's name when
  // there are several.
  std::string row_label(std::size_t row) const;
  // "NAME: " of a row's experiment when there are several, else "".
  std::string study_prefix(std::size_t row) const;
  // Whether a row is fitted on (not held out).
  bool is_fit(std::size_t row) const;
};

// Loads the experiments and their measurements and checks every option
// against them. Throws InputError (exit 2) for: experiments of different
// platforms, transports or cost values; an experiment without
// validation.measurements, a measurements file without rows, a row that
// matches no point, an unknown cost or one of another transport in --fit, a
// --hold-out with an unknown key or one leaving no fit row, more folds than
// fit rows, more costs than fit rows.
CalibrationInput load_calibration(const std::vector<std::string>& files, const CalibrateOptions& opt);
inline CalibrationInput load_calibration(const std::string& file, const CalibrateOptions& opt)
{
  return load_calibration(std::vector<std::string>{file}, opt);
}

// Why a cost is no candidate of the sensitivity analysis for `transport`
// ("" when it is one): another transport's, the clock, a jitter (a
// fraction), or a plausible range of no width.
std::string candidate_rule(const CostDecl& d, const std::string& transport);

// The K folds of the fit rows: fit row j (in file order) is in fold j mod K.
// Each fold: the positions in `fit_rows` it holds.
std::vector<std::vector<std::size_t>> fold_rows(std::size_t fit_rows, unsigned k);

// Mean absolute relative error, %, of predictions against figures over rows.
double mae_percent(const std::vector<double>& predicted, const std::vector<double>& measured,
                   const std::vector<std::size_t>& rows);

// The figure each measurement is compared with (its mean, else its median).
std::vector<double> measured_values(const CalibrationInput& in);

// Reports (progress lines go to `progress`, never to the result).
struct CalibrateHooks {
  IterationFn iteration;                            // simulate_iteration, or a test's
  RunOptions run;                                   // jobs and stop; its progress is not used
  std::function<void(const std::string&)> progress; // one line: evaluations, time left; nullptr: quiet
};

struct CostMove {
  std::string name, unit;
  double before = 0, after = 0, plausible_min = 0, plausible_max = 0;
  bool at_bound = false;
  std::string tie;               // the tie it stands for ("" for none)
  std::vector<std::string> tied; // the tie's other members, moved with it
};

struct CalibrationResult {
  std::vector<std::string> elasticity_costs;                   // the columns of the table (empty with --fit)
  std::vector<std::vector<double>> elasticity;                 // [fit row][column]
  std::vector<FitCost> fitted;                                 // in declaration order
  std::vector<std::pair<std::string, std::string>> not_fitted; // cost -> why, in declaration order
  std::vector<double> before, after;                           // per measurement, the experiment's iterations
  std::vector<std::vector<double>> fold_after;                 // per fold: the predictions of the fold's fit
  std::vector<double> fold_mae;                                // per fold, % over its rows
  std::vector<CostMove> moves;
  std::string optimiser;    // "NLopt LN_BOBYQA"
  unsigned evaluations = 0; // whole row sets simulated (any iterations)
  std::string search_stop;  // why the main search stopped
  bool kept_start = false;  // the start's values stand (kept_why says why)
  // "search": no candidate of the search beat the start with the
  // experiment's own iterations; "cross-validation": the fit did, but its
  // K-fold error (mae_cv) is not below the start's (mae_before). "" when a
  // fit was kept.
  std::string kept_why;
  double mae_before = 0, mae_fit = 0, mae_held_out = -1, mae_cv = -1;
  // The ensemble (opt.ensemble > 0): each member's values of the fitted
  // costs (in `fitted` order), its mean absolute error on the fit rows (at
  // the search's iterations), each draw's objective (kept or not), the
  // band's bound on the objective and the central fit's objective (both at
  // the search's iterations).
  std::vector<std::vector<double>> members;
  std::vector<double> member_mae;
  // The costs the members vary (opt.ensemble_costs: the fitted ones first,
  // then the others in declaration order) and their central values (the
  // fit's, the start's for those not fitted); members hold values in this order.
  std::vector<FitCost> ensemble_costs;
  std::vector<double> ensemble_centre;
  std::vector<double> draw_objectives; // one per draw: their count is the draws made
  double band = 0, central_objective = 0;
  // The noise the ensemble used: --noise, or the central fit's root mean
  // squared log error when larger (a fraction, e.g. 0.072).
  double noise_used = 0;
};

// Runs the fit. Throws Interrupted on a stop request.
CalibrationResult calibrate(const CalibrationInput& in, const CalibrateOptions& opt, const CalibrateHooks& hooks);

// The printed report: the elasticity table and what was not fitted, each
// row (measured, before, after, error), the MAEs, the costs moved.
std::string calibration_text(const CalibrationInput& in, const CalibrationResult& r);

// The span of the data a profile is fitted on (PlatformProfile::calibrated):
// per direction, the calibration quantities (app/report/calibration_span.hpp)
// of the points the rows `use` match, and those rows' throughput in MB/s.
using CalibratedSpan = std::map<std::string, std::map<std::string, std::pair<double, double>>>;
CalibratedSpan calibrated_span(const Experiment& ex, const std::vector<Measurement>& rows,
                               const std::vector<long>& point_of, const std::vector<std::size_t>& use);
// The span covering both (a profile fitted in steps: each step's data).
CalibratedSpan merged_spans(CalibratedSpan a, const CalibratedSpan& b);

// Why the fitted profile `p` is not to be written as it stands (empty: it
// may be): each fitted cost at a bound of its plausible range (unless
// opt.allow_bound) and each tie of the transport it breaks (unless
// opt.allow_broken_ties), one line each, naming the cost or the tie.
std::vector<std::string> refusals(const CalibrationResult& r, const PlatformProfile& p, const CalibrateOptions& opt);

// The new profile: every cost written out, the fitted ones "fitted", the
// others with the starting profile's provenance; hardware copied; span of
// the fit rows' points; the fit report.
PlatformProfile calibrated_profile(const CalibrationInput& in, const CalibrateOptions& opt, const CalibrationResult& r);

} // namespace vsim::app
