// The one registry of every declared parameter: experiment-level keys,
// each transport's keys and the platform cost parameters.
#pragma once
#include "sim/params.hpp"

namespace vsim::app {
// Built once, on first use; declaration order is the order `describe` prints.
const ParamRegistry& registry();
// Experiment-level keys (name, platform, transport, workload.*, ...).
void declare_experiment_params(ParamRegistry& reg);
// Declares `validation.measurements` (the CSV path, relative to the
// experiment file).
void declare_validation_params(ParamRegistry& reg);
} // namespace vsim::app
