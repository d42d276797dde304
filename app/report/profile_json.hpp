// A platform profile as a result's manifest holds it (manifest.platforms):
// every field of vsim::PlatformProfile, so that `vsocksim reproduce` can
// rebuild a profile that came from a file without the file, and every
// result that uses a value outside its plausible range says so.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "transports/profiles.hpp"

namespace vsim::app {

// origin, sha256, transport, description, hardware, base, costs (every
// value), implausible (transports/profiles.hpp implausible_costs), ties (each
// of its transport's ties: name, kept, why not; transport.hpp tie_states),
// caveats (profiles.hpp profile_caveats), then the
// data it was fitted on (calibrated), the provenance of each cost that has
// one and the fit report, when there is one. The name is the key it is kept
// under.
nlohmann::ordered_json profile_json(const PlatformProfile& profile);

// The profile back from profile_json's output (implausible is derived, not
// read). Throws InputError naming `where` (e.g. "manifest.platforms.NAME")
// for a member of the wrong type.
PlatformProfile profile_from_json(const std::string& name, const nlohmann::ordered_json& j, const std::string& where);

} // namespace vsim::app
