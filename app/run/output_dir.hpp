// The --output directory: one file per point, the merged result and the
// manifest, each written atomically (temporary file, then rename).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

// Throws InputError if DIR exists and is not a directory, or cannot be
// created (the nearest existing one of it and its parents is not a directory
// this process may write in); creates nothing itself: DIR and its missing
// parents are created when the first file is written.
void check_output_dir(const std::string& dir);
// `result` is the merged JSON result (to_json, plus any extra sections):
// writes result.json, manifest.json and every point file, and removes the
// file at the index of each failed point ("failed_points").
void write_output_dir(const std::string& dir, const nlohmann::ordered_json& result);

// One finished point, written as soon as it is done: its JSON (as in the
// result) plus "run": the code that produced it (version and git commit, a
// dirty tree's including a hash of its diff), the experiment's name and the
// SHA-256 of the point's resolved parameters.
void write_point_file(const std::string& dir, nlohmann::ordered_json point, const nlohmann::ordered_json& manifest,
                      const std::string& experiment);

// The finished points DIR holds, read once, found by the SHA-256 of their
// resolved parameters: those written by the same code (version and git
// commit of `manifest`); none when the code's commit is unknown. What
// reusable_points looks points up in, and a search each point it evaluates.
class FinishedPoints {
public:
  FinishedPoints(const std::string& dir, const nlohmann::ordered_json& manifest);
  // The point's figures as its file holds them (with its index), or nullopt
  // when DIR holds none for its parameters, or a damaged one, or one with
  // another number of iterations.
  std::optional<PointResult> find(const Point& p) const;

private:
  std::map<std::string, nlohmann::ordered_json> by_hash_;
};

// Points DIR already holds, read back exactly: any point file written by
// the same code for a point with the same resolved parameters, whatever its
// index (a sweep with a value added or removed reuses every other point);
// a file that does not match is ignored (and overwritten or removed).
std::map<std::size_t, PointResult> reusable_points(const std::string& dir, const Experiment& ex,
                                                   const nlohmann::ordered_json& manifest);
// The name of another experiment whose results DIR holds, if any.
std::optional<std::string> other_experiment_in(const std::string& dir, const std::string& experiment);
// Removes DIR's point files with an index of `points` or more (left by a
// larger sweep).
void remove_stale_points(const std::string& dir, std::size_t points);
// The numbers of a JSON object by name (booleans as 1 and 0; anything else
// left out): an iteration's metrics or run-length entries read back.
Metrics metrics_from_json(const nlohmann::ordered_json& obj);
// The figures of a point's JSON (a point file, or a member of a result's
// "points"): its iterations' metrics and their run-length entries (as many
// as iterations; those of "run_length"."iterations" when it has them).
// Throws nlohmann's exception when it has no "iterations".
PointResult point_figures_from_json(std::size_t index, const nlohmann::ordered_json& point);

// Atomic write: DIR/name.tmp then rename to DIR/name.
void write_file_atomic(const std::string& path, const std::string& content);
// Removes the temporary files (point-*.json.tmp, result.json.tmp,
// manifest.json.tmp) a run killed while writing left in DIR.
void remove_temporaries(const std::string& dir);

} // namespace vsim::app
