// `vsocksim describe` and docs/parameters.md, both generated from the
// parameter declarations so they cannot drift from what the loader accepts.
#pragma once

#include <string>

#include "sim/params.hpp"
#include "transports/profiles.hpp"

namespace vsim::app {

// Plain-text description. topic: "" (everything), a key prefix ("hv_sock",
// "workload", "costs", "workload.message_size") or "platforms".
// Throws InputError for an unknown topic, listing the topics.
std::string describe_text(const ParamRegistry& reg, const std::string& topic);

// Markdown reference: one table per section, then the platform profiles.
std::string describe_markdown(const ParamRegistry& reg);

// What a parameter accepts, as error messages and `describe` show it:
// "1B .. 1GiB, or default", "0.1 .. 10 GHz", "fast, exact", "true, false".
// Empty for free text.
std::string allowed_values(const ParamSpec& spec);

// One profile's value of a cost, as `describe` lists it under the cost:
// "kvm-2019: 824.4 cycles", flagged "  (outside the plausible range)".
std::string profile_value_text(const PlatformProfile& profile, const ParamSpec& spec);

// One profile as `describe platforms` shows it: every cost, then the values
// outside their plausible ranges (or that there are none).
std::string describe_profile(const ParamRegistry& reg, const PlatformProfile& profile);

// A number without noise: 2.5, 1500, 9007199254740992, 1e+20.
std::string format_number(double x);

} // namespace vsim::app
