// The --output directory: one file per point, the merged result and the
// manifest, each written atomically (temporary file, then rename).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/experiment.hpp"
#include "app/results.hpp"
#include "app/runner.hpp"

namespace vsim::app {

// Throws InputError if DIR exists and is not a directory, or cannot be
// created; creates nothing itself.
void check_output_dir(const std::string& dir);
// `result` is the merged JSON result (to_json, plus any extra sections):
// writes result.json, manifest.json and every point file.
void write_output_dir(const std::string& dir, const nlohmann::ordered_json& result);

// One finished point, written as soon as it is done: its JSON (as in the
// result) plus "run": the config hash, version and commit that produced it.
void write_point_file(const std::string& dir, nlohmann::ordered_json point, const nlohmann::ordered_json& manifest);

// Points DIR already holds from an earlier run of the same configuration
// (config_sha256) and the same code (version and git commit, a dirty tree's
// including a hash of its diff), read
// back exactly; a file that does not match is ignored (and overwritten).
std::map<std::size_t, PointResult> reusable_points(const std::string& dir, const Experiment& ex,
                                                   const nlohmann::ordered_json& manifest);
// Atomic write: DIR/name.tmp then rename to DIR/name.
void write_file_atomic(const std::string& path, const std::string& content);
// Removes the temporary files (point-*.json.tmp, result.json.tmp,
// manifest.json.tmp) a run killed while writing left in DIR.
void remove_temporaries(const std::string& dir);

// Every metric name, comma-separated (for error messages).
std::string known_metrics_list();

}  // namespace vsim::app
