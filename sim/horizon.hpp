// The time before which nothing can change any more while a simulation runs:
// the engine's clock (every thread is at or past it). Statistics keep what is
// stamped later pending, because the run may end before it: a daemon thread
// (an interrupt context, vhost, a host DPC) running ahead of the engine may
// act after the last byte was delivered, and that is not part of the run.
// Without a World (unit tests) the horizon is +infinity: nothing is pending.
#pragma once

#include "sim/timed_value.hpp"

namespace vsim {

using HorizonClock = Time (*)();
void set_horizon(HorizonClock clock);  // World: its engine's clock; nullptr: none
Time horizon();

}  // namespace vsim
