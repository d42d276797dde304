// The --output directory: one file per point, the merged result and the
// manifest, each written atomically (temporary file, then rename).
#pragma once

#include <string>
#include <vector>

#include "app/experiment.hpp"
#include "app/results.hpp"
#include "app/runner.hpp"

namespace vsim::app {

// Throws InputError if DIR exists and is not a directory, or cannot be
// created; creates nothing itself.
void check_output_dir(const std::string& dir);
// `result` is the merged JSON result (to_json, plus any extra sections).
void write_output_dir(const std::string& dir, const nlohmann::ordered_json& result);
// Atomic write: DIR/name.tmp then rename to DIR/name.
void write_file_atomic(const std::string& path, const std::string& content);

// Every metric name, comma-separated (for error messages).
std::string known_metrics_list();

}  // namespace vsim::app
