// Platform profiles: named, calibrated sets of cost parameters (`costs.*`).
//
// The transports' algorithms say "charge a 4 KiB copy_from_user"; the profile
// says how many cycles that takes on the platform that was measured. Each
// cost parameter is declared once, with the field it fills, by the transport
// that charges it (transports/<t>/costs.cpp; the shared ones in
// transports/costs.cpp); each profile gives every one of them a value, with
// the calibration rows it was fitted on recorded in docs/calibration.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/params.hpp"

namespace vsim {

struct PlatformProfile {
  std::string name;
  std::string transport; // the transport it was calibrated for
  std::string doc;
  std::map<std::string, double> costs; // key: path without the "costs." prefix
  // The span of the data the costs were fitted on, per direction: for each
  // quantity app/report/calibration_span.hpp names (message size, connections, the
  // buffer bounding the data in flight, the measured throughput in MB/s),
  // its smallest and largest value over the points of
  // experiments/calibration/<name>.yaml (throughput: over their published
  // figures). A test derives it from those files and checks it is this.
  std::map<std::string, std::map<std::string, std::pair<double, double>>> calibrated = {};
};

const std::vector<PlatformProfile>& platform_profiles();
const PlatformProfile* find_profile(const std::string& name);

// Where a profile's value of cost `key` (without "costs.") comes from:
// "fitted" (docs/calibration.md says on which rows), "kvm-2019 fit" (kvm-2018
// keeps the kvm-2019 fitted value), "held" (held 5% inside a bound of its
// plausible range that a fit went to, the other costs refitted around it;
// calibration.md, "Costs at a bound"), "loop prior" (the plain loop's user
// cost per call on a profile none of whose fitted rows measures it: the
// value hyperv-2019's loop rows fit) or "prior" (a published figure or a
// plausible value, see ../shared/domain/costs-and-engine.md).
std::string cost_source(const PlatformProfile& profile, const std::string& key);

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

// Declares every `costs.*` parameter (their defaults come from the profile).
void declare_cost_params(ParamRegistry& reg);

} // namespace vsim
