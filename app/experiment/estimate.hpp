// Size and expected wall time of an experiment, before running it: what
// `check` prints and what `run` refuses beyond a limit unless --allow-large.
#pragma once

#include <string>

#include "app/experiment/experiment.hpp"

namespace vsim::app {

struct Estimate {
  double simulations = 0;
  double messages = 0;     // send() calls simulated in all
  double bytes = 0;        // payload simulated in all
  double core_seconds = 0; // expected wall time on one core of the development machine
};

// Rates measured by bench/ on the development machine (2019-era hv_sock
// model), taken conservatively: 0.5 million messages and 2.5 GB of payload
// per second and core.
Estimate estimate(const Experiment& ex);

// One simulation of a point (simulations = 1). Keys a point lacks count as
// no bytes and no messages (the run driver does not require them).
Estimate point_estimate(const Params& p);
std::string describe_estimate(const Estimate& e, unsigned jobs);

// Runs longer than this on one core are refused unless --allow-large.
inline constexpr double kLargeCoreSeconds = 2 * 24 * 3600.0;

} // namespace vsim::app
