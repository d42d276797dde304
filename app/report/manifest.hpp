// The manifest of a run (the code, configuration and libraries that made it)
// and the versions of this build.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "app/experiment/experiment.hpp"

namespace vsim::app {

struct Manifest {
  std::string version, git_commit, config_sha256, simgrid_version, command_line;
  std::int64_t seed = 0;
  std::map<std::string, std::string> dependencies; // yaml-cpp, fmt, boost, nlohmann_json, openssl
  double wall_seconds = 0;                         // the only wall-clock facts; filled by the caller
  std::string wall_started_utc;                    // e.g. "2024-05-01T12:34:56Z"
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

} // namespace vsim::app
