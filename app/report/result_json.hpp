// The JSON result of a run: the stable, documented result.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/report/manifest.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

// The JSON result (the interface specification; README, "Use"): same inputs give the same dump(2),
// byte for byte. `results` must hold one PointResult per point of ex.points, in
// the same order (as run_points returns them). "points" holds the points
// that ran; the points that failed (PointResult::failed) are listed after it
// in "failed_points" (index, params, label, effective and "failed": the
// message, with "hang": true when the simulated system hangs as its kernel
// would; no figures), which is left out when none failed.
nlohmann::ordered_json to_json(const Experiment& ex, const std::vector<PointResult>& results, const Manifest& m);

} // namespace vsim::app
