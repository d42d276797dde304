// Platform profile files (docs/profiles.md): reading one, with the checks an
// experiment file gets, and writing one.
#pragma once

#include <functional>
#include <string>

#include "transports/profiles.hpp"

namespace vsim::app {

// Finds the base profile a file names (`base:`), given the name or path as
// written and where it was written (FILE:LINE:COLUMN prefix); throws
// InputError when there is none.
using BaseLookup = std::function<const PlatformProfile&(const std::string& base, const std::string& at_prefix)>;

// The profile in TEXT, read from the file shown as `file`. Throws InputError
// (file:line:column, the key path, what is allowed) for invalid YAML, an
// unknown or duplicate key, a value of the wrong type, an unknown cost or one
// of another transport, a cost missing with no base to take it from, a value
// outside the cost's hard range, or one outside its plausible range without a
// `reason`. origin and sha256 are left empty (the caller knows them).
PlatformProfile parse_profile(const std::string& text, const std::string& file, const BaseLookup& find_base);

// The profile as a file parse_profile reads back to an equal profile:
// every key in a fixed order, every cost of the profile's transport written
// out (with the base named, when there is one, for the record), numbers in
// the shortest form that reads back exactly, text double-quoted.
std::string write_profile(const PlatformProfile& profile);

// Whether a `platform` (or `base`) value names a profile file rather than a
// shipped profile: it ends in .yaml or .yml.
bool is_profile_path(const std::string& s);

// The hardware keys a profile file may give, in the order they are written.
const std::vector<std::string>& hardware_keys();

// The words a cost's `source` may be (CostProvenance::source).
const std::vector<std::string>& provenance_sources();

} // namespace vsim::app
