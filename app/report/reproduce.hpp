// `vsocksim reproduce RESULT`: a result read back as what reruns it (its
// points with their resolved parameters, the experiment's configuration and
// measurements, the platform profiles, all from the result itself), and the
// rerun's result compared with the original.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/report/manifest.hpp"
#include "app/report/result_file.hpp"
#include "app/run/shard.hpp"
#include "transports/profiles.hpp"

namespace vsim::app {

// Everything a rerun needs, rebuilt from a result.
struct RerunSource {
  std::string file;           // the JSON file read (RESULT/result.json for a directory)
  nlohmann::ordered_json doc; // the result as read
  // name, file (as the run was given it), base (manifest.experiment.config's
  // params), sweep keys, points (those that ran and those that failed, by
  // index), canonical and config_sha256 recomputed from the configuration
  Experiment ex;
  MeasurementsText measurements;
  std::vector<PlatformProfile> profiles; // manifest.platforms, rebuilt, in name order
  std::string command_line;              // the original's
  std::optional<Shard> shard;            // manifest.shard
  std::size_t points_total = 0;          // manifest.points_total (0: none)
  std::optional<long long> traced_point; // manifest.traced_point
};

// Throws InputError (ResultFileError when not JSON) for a file that is not a
// result, or a result too old to hold what a rerun needs (manifest.experiment
// and manifest.platforms, which results made before `reproduce`
// existed lack): the message says which.
RerunSource read_rerun_source(const std::string& path);

// Makes find_profile know each profile of the source that this build does
// not (a profile file, or one no longer shipped): rebuilt with add_profile. A
// shipped profile is this build's own; compare_rerun names any value of it
// that differs from the result's.
void use_profiles(const RerunSource& source);

// What a result says of its points that its own configuration contradicts: a
// point's value of a key that is not swept (nor derives from a swept key,
// like costs.* from platform) other than manifest.experiment.config's, one
// line per point and key, "point K: KEY is A in its params, B in
// manifest.experiment.config". A sign of a result edited after its run.
std::vector<std::string> params_against_config(const RerunSource& source);

struct RerunComparison {
  bool identical = false;
  std::string text; // "identical: ..." or what differs and its likely cause
};

// The rerun against the original, both with manifest.wall removed: identical
// when their JSON texts (dump(2)) are. Otherwise, point by point (by index,
// with its label) the parameters and metrics (old mean, new mean, relative
// change) and other fields that differ, then the manifest's and the other
// top-level fields that do, then the likely cause: another version, commit,
// SimGrid or library (manifest.version, git_commit, simgrid_version,
// dependencies against this build's), else `suspect` (params_against_config)
// or a result edited after its run, else a simulation that is not
// deterministic.
RerunComparison compare_rerun(nlohmann::ordered_json original, nlohmann::ordered_json rerun,
                              const std::vector<std::string>& suspect);

} // namespace vsim::app
