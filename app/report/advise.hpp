// `vsocksim explain RESULT.json --advise` (issue 50, item 5): what to measure
// next. For each effect of an ensemble run (sim.ensemble) whose interval is
// wide, the measurement of the machine that would narrow it most, judged
// from the members: a figure whose value tells the members apart in the way
// the effect does.
//
// The effects: every pair of points of the result whose labels differ in
// exactly one swept key (one change, everything else equal), on the
// throughput (round trips: the mean round trip). Within the members the
// effect is e_m = ln(b_m / a_m). A candidate measurement is one metric of
// one point (throughput, round-trip mean and p99, guest and host CPU, each
// simulated thread's busy share) that keeps the base's value of the changed
// key (what can be measured before the change is built), within the
// members l_m = ln(y_m). Measured
// with a relative noise s, the members' weights become their likelihood of
// the measured value; to first order (e and l jointly normal over the
// members) the effect's variance shrinks by the share
//   r = cov(e, l)^2 / (var(e) (var(l) + s^2)),
// and its interval's half-width by sqrt(1 - r). The candidate with the
// largest r is the advice.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vsim::app {

// The relative noise of a measurement the advice assumes (5%, calibrate's default).
inline constexpr double kAdviceNoise = 0.05;

// An effect whose p10..p90 half-width is below this is narrow already: no advice.
inline constexpr double kAdviceWidth = 0.02;

// The advice for the result `doc` (its "points"), or a line saying why
// there is none (no ensemble, no one-change pair of points). `file` names
// the result in messages.
std::string advise_text(const nlohmann::json& doc, const std::string& file, double noise = kAdviceNoise);

} // namespace vsim::app
