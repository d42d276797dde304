// Loading an experiment (app/experiment/experiment.cpp), its internals: a
// value as the user gave it, converted and checked, with where it came from.
#pragma once

#include <string>

#include "app/experiment/origin.hpp"
#include "sim/params.hpp"

namespace vsim::app::load {

// A value as given by the user (or a default), validated.
struct Given {
  Value value;
  std::string raw; // as written, e.g. "64KiB"
  Origin at;
};

} // namespace vsim::app::load
