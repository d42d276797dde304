// Design effects: what a design choice does, as published and as predicted.
//
// Two compared rows of a study form a design effect when they have the same
// metric and statistic and the same workload (every `workload.*` key and
// `direction` equal) but differ in at least one design key (any other key:
// `hv_sock.*`, `virtio_vsock.*`, ...). The effect is the ratio of the
// changed row's figure to the base row's (the base is the row listed first),
// measured and predicted. A model can reproduce its calibration rows and
// still get effects wrong; this view (validate's "design effects") is what
// the simulator is for: the direction of a change and its size.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/validation/measurements.hpp"

namespace vsim::app {

struct DesignEffect {
  const ComparisonRow* base;
  const ComparisonRow* changed;
  std::string change;  // "hv_sock.sndbuf: default -> 65536" (every design key that differs)
  std::string context; // "direction=guest_to_host, workload.message_size=4096: throughput_MBps"
  double measured_ratio;
  double predicted_ratio;
  // sim.ensemble, both rows on the same ensemble: the ratio taken member by
  // member (changed member m / base member m), its p10, p50 and p90.
  std::optional<EnsembleSpread> interval = {};
  // The same with the model's own error on top (spread_with_error with the
  // rows' ComparisonRow::discrepancy, the larger of the two): what the
  // ensemble cannot know, since its members share the model's mechanisms.
  // Set with `interval` when the profile tells its discrepancy.
  std::optional<EnsembleSpread> with_error = {};
  double discrepancy = 0; // the sigma with_error used
  // The published ratio inside the interval's p10..p90 (false without one).
  bool covered() const;
  // The published ratio inside with_error's p10..p90 (false without one).
  bool covered_with_error() const;
  // The direction at the interval's p50, as direction_right() says it of the
  // central prediction (false without one).
  bool p50_direction_right() const;
  // Larger than 10% as published (|measured_ratio - 1| > 0.1): the effects
  // the direction and size shares count.
  bool large() const;
  // The prediction moves the same way as the measurement, by more than 2%
  // (a predicted ratio in [0.98, 1.02] is no change).
  bool direction_right() const;
  // The predicted ratio within 20% of the measured one:
  // |predicted_ratio / measured_ratio - 1| <= 0.2.
  bool size_within_20() const;
  // Either row is held out (its source ends in "/held-out": a published
  // figure no profile was fitted on, the test set of experiments/testset).
  bool held_out() const;
  // |predicted_ratio / measured_ratio - 1|: how far the predicted size is off.
  double size_error() const;
};

// A row no profile was fitted on: its source ends in "/held-out".
bool is_held_out(const Measurement& m);

// Every design effect among the rows of one comparison, in row order (base
// row first, then the changed row).
std::vector<DesignEffect> design_effects(const Comparison& c);

struct EffectSummary {
  std::size_t effects = 0;         // all pairs
  std::size_t large = 0;           // larger than 10% as published
  std::size_t direction_right = 0; // of the large ones
  std::size_t within_20 = 0;       // of the large ones
  // The large effects with an ensemble interval (DesignEffect::interval):
  // how many, right in direction at the p50, their interval covering the
  // published ratio, and the median of the intervals' half-widths
  // ((p90 - p10) / 2 / p50, of all effects with one).
  std::size_t with_interval = 0;
  std::size_t p50_direction_right = 0;
  std::size_t covered = 0;
  double median_half_width = 0;
  // Of those, the ones with the model's error on top (with_error): how
  // many, covered by it, the median half-width of with_error (of all
  // effects with one) and the discrepancy's sigma (the largest of them).
  std::size_t with_error = 0;
  std::size_t covered_with_error = 0;
  double median_half_width_with_error = 0;
  double discrepancy = 0;
};
// Of every effect, or only of the held-out ones.
EffectSummary summarize(const std::vector<DesignEffect>& effects, bool held_out_only = false);
// "N design effects, K larger than 10%: direction right for X%, size within 20% for Y%"
std::string effect_summary_text(const EffectSummary& s);
// "ensemble: K of the large effects with an interval: ..." ("" when none has one).
std::string ensemble_summary_text(const EffectSummary& s);

// The `n` effects larger than 10% whose predicted size is furthest off
// (size_error, largest first; equal ones in their input order): the list a
// fidelity round starts from (validate --worst N).
std::vector<DesignEffect> worst_effects(const std::vector<DesignEffect>& effects, std::size_t n);

} // namespace vsim::app
