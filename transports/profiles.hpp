// Platform profiles: named, calibrated sets of cost parameters (`costs.*`).
//
// The transports' algorithms say "charge a 4 KiB copy_from_user"; the profile
// says how many cycles that takes on the platform that was measured. Each
// cost parameter is declared once, with the field it fills, by the transport
// that charges it (transports/<t>/costs.cpp; the shared ones in
// transports/costs.cpp); each profile gives every one of them a value, with
// where it comes from. Profiles are files (docs/profiles.md), read by
// app/experiment/profile_file.cpp; the shipped ones are
// experiments/platforms/*.yaml (app/experiment/platforms.hpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/params.hpp"

namespace vsim {

// Where one cost value of a profile comes from (the `source` of the cost in
// a profile file, docs/profiles.md).
struct CostProvenance {
  // "fitted" (by `vsocksim calibrate`, on the rows of the profile's fit
  // report), "held" (held inside a bound of its plausible range that a fit
  // went to), "base" (the base profile's value, unchanged), "prior" (a
  // published figure or a plausible value, docs/cost-sources.md) or "given"
  // (written by the file's author, nothing more said).
  std::string source;
  std::string note;   // free text: the rows, the literature, ... ("" when none)
  std::string reason; // why a value outside the plausible range is right; required for one
  // Not in the file: a cost declared after the file was written, at its
  // declared "off" (ParamSpec::absent). Written back only if it changed.
  bool implicit = false;
};

// One row of a fit report: a measured figure, the prediction before and
// after the fit.
struct FitRow {
  std::string keys;   // the row's experiment keys, "key=value, key=value"
  std::string metric; // the row's metric cell
  std::string role;   // "fit" or "held-out"
  double measured = 0;
  double before = 0; // predicted with the starting profile
  double after = 0;  // predicted with the fitted profile
};

// The report of the fit that made a profile (`vsocksim calibrate`).
struct FitReport {
  std::string experiment;          // the calibration experiment, as given on the command line
  std::string measurements;        // its validation.measurements file, as the experiment names it
  std::string optimiser;           // e.g. "NLopt LN_BOBYQA"
  std::vector<std::string> fitted; // cost names, in declaration order
  std::vector<std::pair<std::string, std::string>> not_fitted; // cost name -> why it was left alone
  std::vector<std::string> hold_out;                           // the --hold-out filters as given
  unsigned folds = 0;                                          // K of the cross-validation; 0: none
  unsigned evaluations = 0;                                    // simulations of the whole row set
  double mae_before = 0;                                       // % over the fit rows, starting profile
  double mae_fit = 0;                                          // % over the fit rows, fitted profile
  double mae_held_out = -1;                                    // % over held-out rows; -1: none
  double mae_cv = -1;                                          // % of K-fold cross-validation; -1: none
  std::vector<FitRow> rows;
};

// An ensemble of cost vectors that fit the profile's rows within their noise
// (issue 50; written by `vsocksim calibrate --ensemble N`): each member gives
// the fitted costs values of its own (the other costs are the profile's),
// with a weight; the profile's own values are the central member.
struct EnsembleMember {
  double weight = 0;
  std::map<std::string, double> costs; // key as in PlatformProfile::costs
};
struct Ensemble {
  double noise_percent = 5; // the rows' noise the members fit within
  std::string method;       // how the members were found
  std::vector<EnsembleMember> members;
};

struct PlatformProfile {
  std::string name;
  std::string transport;               // the transport it was calibrated for
  std::string doc;                     // the file's `description`
  std::map<std::string, double> costs; // key: path without the "costs." prefix
  // The span of the data the costs were fitted on, per direction: for each
  // quantity app/report/calibration_span.hpp names (message size, connections, the
  // buffer bounding the data in flight, the measured throughput in MB/s),
  // its smallest and largest value over the points of
  // experiments/calibration/<name>.yaml (throughput: over their published
  // figures). A test derives it from those files and checks it is this.
  std::map<std::string, std::map<std::string, std::pair<double, double>>> calibrated = {};
  // What the file says of the measured machine, in the file's order of the
  // known keys (cpu, cpu_ghz, host_kernel, guest_kernel, hypervisor, vmm,
  // vcpus, pinning, notes); values as text.
  std::vector<std::pair<std::string, std::string>> hardware = {};
  std::string base = {};                                 // the profile it starts from ("" for none)
  std::map<std::string, CostProvenance> provenance = {}; // key as in costs
  std::optional<FitReport> fit = {};
  std::optional<Ensemble> ensemble = {}; // not inherited by a profile that names this one as its base
  // Where it was read from: "shipped" for a shipped profile, else the file's
  // path as the experiment (or command line) gave it, resolved.
  std::string origin = {};
  std::string sha256 = {}; // of the file's bytes
};

// Whether the profile has an ensemble to run (sim.ensemble).
inline bool has_ensemble(const PlatformProfile& p)
{
  return p.ensemble && !p.ensemble->members.empty();
}

// How far the profile's predicted ratios between two of its own fit rows
// stray from the measured ratios (issue 50): the model's error on an
// effect, which no spread of the costs shows (an ensemble's members share
// the model's mechanisms and so its blind spots). Over every pair of fit
// rows of the same metric and the same `direction` in the fit report,
// d = log(after_b / measured_b) - log(after_a / measured_a); sigma is the
// root mean square of d, times the report's cross-validation inflation
// (mae_cv / mae_fit when both are known and the ratio exceeds 1: rows a fit
// did not see are predicted that much worse). nullopt without a fit report
// or with fewer than kMinDiscrepancyPairs pairs.
struct EffectDiscrepancy {
  double sigma = 0;      // of the log ratio, after the inflation
  double pair_rms = 0;   // before it
  double inflation = 1;  // mae_cv / mae_fit, at least 1
  std::size_t pairs = 0; // pairs of fit rows it is taken over
};
inline constexpr std::size_t kMinDiscrepancyPairs = 2;
std::optional<EffectDiscrepancy> effect_discrepancy(const PlatformProfile& profile);

// A profile value outside its cost's plausible range (ParamSpec::plausible_*):
// a fit that needs it stands in for a mechanism the model lacks.
struct ImplausibleCost {
  std::string key; // without "costs."
  double value;
  double plausible_min;
  double plausible_max;
  std::string unit;
};
// The profile's values outside their plausible ranges, in declaration order.
std::vector<ImplausibleCost> implausible_costs(const PlatformProfile& profile);

// What makes the profile a less consistent machine than its intervals
// assume, one sentence each: its broken ties (costs that are the same
// physics at different values) and its costs outside their plausible
// ranges. Empty for a profile that keeps every tie inside every range.
std::vector<std::string> profile_caveats(const PlatformProfile& profile);

// Declares every `costs.*` parameter (their defaults come from the profile).
void declare_cost_params(ParamRegistry& reg);

} // namespace vsim
