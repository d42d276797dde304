// hv_sock's platform plan for the analytic bound: its threads, their CPUs
// (the pinning hv_sock.cpp's simulate() uses) and the cycles each spends per
// MB of payload, from the costs and the mechanisms of docs/model.md.
#pragma once

#include "transports/simulate.hpp"

namespace vsim::hv_sock {

// Costs that depend on waiting (signals, interrupts, wake-ups, sleeps) are
// left out and per-batch costs are spread over the largest batch the ring
// allows, so each figure is a lower bound on the cycles per MB.
PlatformPlan platform_plan(const Params& p);

// The critical path of one round trip (workload.pattern ping_pong or
// request_response) with every jitter off, assuming each message fits its
// ring (no ring-full waits) and arrives whole before its reader runs: the
// chain of docs/model.md ("Round trips"), packet by packet.
std::vector<RoundTripStage> round_trip_path(const Params& p);

} // namespace vsim::hv_sock
