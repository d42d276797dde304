// What several commands share: the jobs default, the end of a command
// stopped by a request or with failed points, the run options, and the
// validation of what `run` and `check` need besides the experiment.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/report/manifest.hpp"
#include "app/run/runner.hpp"
#include "app/run/shard.hpp"
#include "app/validation/measurements.hpp"

namespace vsim::app::cli {

// --jobs' default: the machine's hardware threads (at least 1).
unsigned default_jobs();

// The end of a command stopped by a request: the line on stderr and the exit
// status (130 SIGINT, 143 SIGTERM, 129 SIGHUP). Finished points under
// --output are complete files a later run reuses. (`finished` counts the
// points that ran to the end, not those that failed.)
int stopped(std::size_t finished, std::size_t total, const std::string& output);

// The end of a run or validate in which points failed (PointResult::failed):
// on stderr, one line per failed point (its name, with its swept values, and
// why), then `summary`. The exit status: 2 when every failure was bad input
// found only by simulating (an InputError), else 1 (an internal error, or a
// point whose simulated system hangs as its kernel would: PointResult::hang).
using FailedPoints = std::vector<std::pair<std::string, const PointResult*>>;
int points_failed(const FailedPoints& failed, const std::string& summary);

// Run options for run and validate: jobs, progress unless quiet, and the
// stop request watched (app/run/stop.hpp).
RunOptions run_options(unsigned jobs, bool quiet);

// What `run` needs besides the experiment, validated before anything runs
// (so `check` rejects exactly what `run` would).
struct Prepared {
  std::vector<std::string> metrics;
  std::string measurements_file, measurements_text; // the file's path as resolved, and its bytes
  std::vector<Measurement> measurements;
};
Prepared prepare(const Experiment& ex, const std::string& file);
// The same with the measurements given (reproduce: from the result's
// manifest.experiment.measurements).
Prepared prepare_with(const Experiment& ex, const MeasurementsText& measurements);

// A run built elsewhere than from an experiment file (reproduce: from a
// result), to be run as `run` runs one.
struct RunPlan {
  Experiment ex;     // the points to simulate, every one (none is reused from --output)
  Prepared prep;     // the measurements the result is compared with
  Manifest manifest; // make_manifest's, with the command line that made the result
  std::optional<Shard> shard;
  std::size_t points_total = 0; // the sweep's points, for a shard or a traced point (0: ex.points')
  std::optional<long long> traced_point;
};

// Simulates every point of plan.ex and merges the result as `run --format
// json` does (app/cli/run.cpp), writing it into `output` (when not empty) as
// `run --output` does; the JSON goes to `result`, not to stdout. The exit
// status is run's: 0; for failed points points_failed's (the result is
// made); stopped's for a stop request (`result` left null).
int run_plan(RunPlan plan, const std::string& output, unsigned jobs, bool quiet, nlohmann::ordered_json& result);

} // namespace vsim::app::cli
