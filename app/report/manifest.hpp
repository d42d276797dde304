// The manifest of a run (the code, configuration and libraries that made it)
// and the versions of this build.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"

namespace vsim::app {

struct Manifest {
  std::string version, git_commit, config_sha256, simgrid_version, command_line;
  std::int64_t seed = 0;
  std::map<std::string, std::string> dependencies; // yaml-cpp, fmt, boost, nlohmann_json, openssl
  double wall_seconds = 0;                         // the only wall-clock facts; filled by the caller
  std::string wall_started_utc;                    // e.g. "2024-05-01T12:34:56Z"
  // What `vsocksim reproduce` reruns the result from, besides each point's
  // params: each platform profile the points use, whole (by name, in name
  // order; app/report/profile_json.hpp), and the experiment as loaded (its
  // file, its resolved configuration before the sweep, whose SHA-256 is
  // config_sha256, and its measurements file, text and all).
  nlohmann::ordered_json platforms = nlohmann::ordered_json::object();
  nlohmann::ordered_json experiment = nlohmann::ordered_json::object();
};

// The measurements a run compares with (validation.measurements): the path
// as the run resolved it and the file's text; empty for none.
struct MeasurementsText {
  std::string file, text;
};

// Everything but wall_*: version and commit of this build, the experiment's
// config hash and seed (0 when the experiment has no "seed" key), the SimGrid
// library version, the dependency versions this program was built with, the
// platforms of ex.points and the experiment block.
Manifest make_manifest(const Experiment& ex, const std::string& command_line,
                       const MeasurementsText& measurements = {});

// manifest.platforms of ex.points (the profiles as find_profile gives them).
nlohmann::ordered_json platforms_json(const std::vector<Point>& points);
// What `vsocksim --version` prints: version, git commit, SimGrid's version.
std::string version_text();

// ISO 8601 UTC time, second precision ("2024-05-01T12:34:56Z"), for
// Manifest::wall_started_utc.
std::string format_utc(std::chrono::system_clock::time_point t);

} // namespace vsim::app
