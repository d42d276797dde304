// Statistics over iterations and the three output formats of a run: JSON (the
// stable, documented result), CSV (one row per point and metric) and the human
// table (one cell per point holding min/max/avg/median).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/params_json.hpp"
#include "app/run/runner.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

struct Stats {
  double min, max, mean, median;  // median of an even count: mean of the two middle values
};

// Throws std::invalid_argument on an empty list or a NaN value. The result does
// not depend on the order of the values.
Stats summarize(std::vector<double> values);

struct Manifest {
  std::string version, git_commit, config_sha256, simgrid_version, command_line;
  std::int64_t seed = 0;
  std::map<std::string, std::string> dependencies;  // yaml-cpp, fmt, boost, nlohmann_json, openssl
  double wall_seconds = 0;        // the only wall-clock facts; filled by the caller
  std::string wall_started_utc;   // e.g. "2024-05-01T12:34:56Z"
};

// Everything but wall_*: version and commit of this build, the experiment's
// config hash and seed (0 when the experiment has no "seed" key), the SimGrid
// library version and the dependency versions this program was built with.
Manifest make_manifest(const Experiment& ex, const std::string& command_line);
// What `vsocksim --version` prints: version, git commit, SimGrid's version.
std::string version_text();

// ISO 8601 UTC time, second precision ("2024-05-01T12:34:56Z"), for
// Manifest::wall_started_utc.
std::string format_utc(std::chrono::system_clock::time_point t);

// The JSON result (the interface specification; README, "Use"): same inputs give the same dump(2),
// byte for byte. `results` must hold one PointResult per point of ex.points, in
// the same order (as run_points returns them). "points" holds the points
// that ran; the points that failed (PointResult::failed) are listed after it
// in "failed_points" (index, params, label, effective and "failed": the
// message, with "hang": true when the simulated system hangs as its kernel
// would; no figures), which is left out when none failed.
nlohmann::ordered_json to_json(const Experiment& ex, const std::vector<PointResult>& results, const Manifest& m);

// Header `index,<swept keys...>,metric,unit,min,max,mean,median` (zip keys,
// then grid keys), one row per point per metric; numbers in the shortest form
// that reads back exactly; RFC 4180 quoting where needed; "\n" line ends. A
// failed point has one row: metric `failed`, the other cells empty.
std::string to_csv(const Experiment& ex, const std::vector<PointResult>& results);

// The human tables: per metric of `metrics` (all metrics found when empty), one
// table per combination of the outer sweep axes; cells "min/max/avg/median"
// ("failed" for a failed point, "hangs" for one whose simulated system hangs
// as its kernel would; a line after the tables names them).
std::string to_table(const Experiment& ex, const std::vector<PointResult>& results,
                     const std::vector<std::string>& metrics);

// Many metrics at once (`show --metrics all`): one table per group of
// metrics (throughput; times; CPU percentages; per CPU; per thread; counts
// per MB; queue levels; queue occupancy; ring sizes; simulator facts; any
// other), a row per point (its index and swept values) and a column per
// metric, the cells as to_table's. The column headers leave out what every
// metric of the group shares (`thread.` and `_percent`: the title says so).
// No line is wider than `width` columns unless one metric column alone is:
// a wider group is split into several tables, each repeating the point
// column. The notes on failed and extrapolated points end it, as to_table's.
std::string to_grouped_table(const Experiment& ex, const std::vector<PointResult>& results,
                             const std::vector<std::string>& metrics, std::size_t width);

// What follows the tables of `run` and `show`: the effective values that
// differ between points (what the transport actually used), and what the
// units mean.
// effective: each point's effective values (empty: computed from the
// points' parameters).
std::string table_notes(const Experiment& ex, std::vector<std::vector<Effective>> effective = {});

// Every metric name any iteration of the results carries, sorted.
std::set<std::string> metric_names(const std::vector<PointResult>& results);

// Left-aligned columns, three spaces apart, no trailing blanks (UTF-8 aware).
std::string render_columns(const std::vector<std::vector<std::string>>& rows);

// "point K (key=value, ...)": a point by its index and swept values (just
// "point K" when nothing is swept), as failures name it.
std::string point_name(const Point& p);

// "a,b,,c" -> {"a", "b", "c"} (metric lists, --points).
std::vector<std::string> split_commas(const std::string& text);

// Unit shown for a metric in the table header ("" when unknown).
std::string metric_unit(const std::string& metric);

}  // namespace vsim::app
