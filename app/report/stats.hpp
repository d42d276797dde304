// Statistics over the iterations of the points of a run.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

struct Stats {
  double min, max, mean, median; // median of an even count: mean of the two middle values
};

// Throws std::invalid_argument on an empty list or a NaN value. The result does
// not depend on the order of the values.
Stats summarize(std::vector<double> values);

// Every metric name any iteration of the results carries, sorted.
std::set<std::string> metric_names(const std::vector<PointResult>& results);

// Metric name -> values over the iterations that report it, in iteration order.
std::map<std::string, std::vector<double>> metric_values(const PointResult& r);

// Throws std::invalid_argument unless `results` holds one PointResult per
// point of ex.points, in the same order.
void check_results(const Experiment& ex, const std::vector<PointResult>& results);

// Iterations of the point whose figures were extrapolated from the steady
// state (sim.run_length: auto).
std::size_t extrapolated_iterations(const PointResult& r);

// Member values: one per ensemble member, in member order; nullopt where
// the member failed or does not have the figure.
using MemberValues = std::vector<std::optional<double>>;

// The spread of one figure over an ensemble's members (sim.ensemble).
struct EnsembleSpread {
  std::size_t members = 0; // members with a value
  double p10 = 0, p50 = 0, p90 = 0;
  MemberValues values; // each member's, in member order
};

// The weighted 10th, 50th and 90th percentiles of the members that have a
// value: each member, sorted, stands at the middle of its weight's share
// of the cumulative weight ((W_before + w/2) / W), percentiles linear in
// between and the outermost value beyond. nullopt when no member has a
// value. Throws std::invalid_argument when the sizes differ, a weight is
// not positive or a value is NaN. Independent of the members' order.
std::optional<EnsembleSpread> ensemble_spread(const MemberValues& values, const std::vector<double>& weights);

// The spread of a positive figure over the members with the model's own
// error on top (transports/profiles.hpp, effect_discrepancy): each member
// stands for a log-normal of median its value and log standard deviation
// `sigma`; the weighted mixture's 10th, 50th and 90th percentiles (found by
// bisection of its distribution function in log space, to 1e-12).
// Members without a value or with one not above 0 are left out; nullopt
// when none is left. sigma 0 is ensemble_spread's percentiles of those
// members. Throws std::invalid_argument as ensemble_spread does, and for a
// sigma below 0 or not finite.
std::optional<EnsembleSpread> spread_with_error(const MemberValues& values, const std::vector<double>& weights,
                                                double sigma);

// A metric of each member of the point's ensemble (PointResult::members).
MemberValues member_values(const PointResult& r, const std::string& metric);
// The weights of the point's ensemble members.
std::vector<double> member_weights(const PointResult& r);

// Member by member, b's value over a's (an effect's ratio, taken within
// each member): nullopt where either has none or a's is 0; empty when the
// two ensembles have different sizes (no member-by-member pairing).
MemberValues member_ratios(const MemberValues& a, const MemberValues& b);

} // namespace vsim::app
