// `vsocksim search FILE.yaml`: the best designs of an experiment's `search:`
// section (app/experiment/search_spec.hpp; docs/search.md). The points it
// evaluates are simulated as `run` simulates a sweep's (app/run/runner.hpp),
// a batch at a time, each kept under --output as a normal point file (so
// show, compare, plot, explain and reproduce read them, and a killed search
// resumes from them); the method is exhaustive when the space fits the
// budget, else a multi-objective evolutionary method of pagmo2 (NSGA-II or
// MOEA/D) whose every random choice comes from the seed. The result: the
// Pareto front of the feasible points evaluated, with each objective's 95%
// interval and ties, and how much each knob moves each objective.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/search_spec.hpp"
#include "app/report/manifest.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

// What the command line may change of the file's search section.
struct SearchOptions {
  std::optional<std::int64_t> budget;    // --budget
  std::optional<std::uint64_t> seed;     // --seed; default: the experiment's `seed`
  std::optional<std::string> method;     // (tests) instead of search.method
  std::optional<std::size_t> population; // (tests, bench) instead of the size the budget gives
};

// The search as planned before anything runs: the space counted and every
// point that can be known refused or out of bounds before simulating.
struct SearchPlan {
  std::int64_t budget = 0;
  std::uint64_t seed = 0;
  std::string method;            // the method asked for (auto, exhaustive, nsga2, moead)
  std::string chosen;            // the method that runs: exhaustive, nsga2 or moead
  double combinations = 0;       // the product of the knobs' value counts
  bool enumerated = false;       // every combination resolved (the space is small enough)
  std::size_t candidates = 0;    // when enumerated: the combinations that would be simulated
  std::size_t refused = 0;       // when enumerated: those the loader refuses
  std::size_t out_of_bounds = 0; // when enumerated: those a constraint checked before simulating refuses
  // How the constraints checked before simulating cut the space (issue 51,
  // item 4), over the combinations resolved (all when enumerated, else a
  // sample of that many): per knob, per value, whether some combination
  // with it resolves and meets every such constraint. Empty when no
  // constraint can be checked before simulating.
  std::size_t resolved_before = 0;
  std::vector<std::vector<bool>> can_meet;
};

// Checks the search of `ex` (which must have one) against the options, and
// plans it. Throws InputError (FILE:LINE:COLUMN) for a budget below 1, an
// exhaustive search of a space larger than the budget, and a constraint that
// no point of the space can meet (known when the constraints that need no
// simulation are checked on every combination, or on a sample of a larger
// space: then a warning in `warnings`).
SearchPlan plan_search(const Experiment& ex, const SearchOptions& opt, std::vector<std::string>* warnings = nullptr);

// One objective of a point: the mean over its iterations and the half-width
// of its 95% interval (Student t; 0 for one iteration).
struct ObjectiveValue {
  double mean = 0, half_width = 0;
};

// A point the search evaluated (simulated, or reused from --output).
struct Evaluated {
  Point point;                     // index: order of evaluation
  std::vector<std::size_t> choice; // each knob's value index
  PointResult result;
  std::vector<ObjectiveValue> objectives; // empty when the point failed
  std::vector<double> constraints;        // each constraint's expression, mean over the iterations
  bool feasible = false;                  // ran, and meets every constraint
  bool reused = false;                    // read back from --output
};

struct SensitivityRow {
  std::string knob;
  std::size_t objective = 0;
  std::size_t values_seen = 0; // of the knob's values, those some feasible evaluated point has
  std::size_t values = 0;      // the knob's values
  double moves = 0;            // largest minus smallest of the objective's mean per value of the knob
  double share = 0;            // of the objective's variance over the points, the part the knob's values explain
};

struct SearchResult {
  SearchPlan plan;
  Experiment ex;                              // the evaluated points, by index (the result's)
  std::vector<Evaluated> evaluated;           // by index
  std::vector<std::size_t> front;             // positions in `evaluated`, sorted along the first objective
  std::vector<std::vector<std::size_t>> ties; // per front point: the front points (positions in `front`) tied with it
  std::vector<SensitivityRow> sensitivity;
  std::size_t simulated = 0, reused = 0; // of the evaluated points
  std::size_t proposals = 0;             // points the method asked for, repeats included
  std::size_t generations = 0;
  Manifest manifest;
  nlohmann::ordered_json result; // the run-format result of every evaluated point
  bool stopped = false;          // a stop request ended it (nothing merged then)
};

struct SearchHooks {
  IterationFn iteration;                            // simulate_iteration, or a test's
  RunOptions run;                                   // jobs and stop (progress: the lines below)
  std::function<void(const std::string&)> progress; // a line per batch; nullptr: quiet
  std::string command_line;
};

// Runs the search: plans it (throwing InputError as plan_search does before
// anything runs or is written), then evaluates batches until the budget is
// spent or the method has nothing new to ask. With `output`, each finished
// point's file is written at once, and points already there (same code,
// same resolved parameters) are reused, not simulated; the result, the
// search's facts (search.json) and the objective-space figure are written at
// the end. Throws Interrupted on a stop request (every finished point kept).
SearchResult run_search(const Experiment& ex, const SearchOptions& opt, const std::string& output,
                        const SearchHooks& hooks);

// The Pareto front (non-dominated set, minimising each objective after
// negating those to maximise) of the given objective vectors: their
// positions, in order.
std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& minimised);

// The hypervolume the points (minimised objectives) dominate up to `reference`
// (pagmo's hypervolume), the measure a front's quality is compared by.
double hypervolume(const std::vector<std::vector<double>>& minimised, const std::vector<double>& reference);

// The outputs: the front as a table or CSV, the search as JSON (`front`: the
// front's points as `run`'s JSON gives points, beside the search's facts).
std::string search_table(const SearchResult& r);
std::string search_csv(const SearchResult& r);
nlohmann::ordered_json search_json(const SearchResult& r);

} // namespace vsim::app
