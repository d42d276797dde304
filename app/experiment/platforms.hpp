// The platform profiles a run can name: the shipped ones and profile files.
#pragma once

#include <string>
#include <vector>

#include "app/experiment/origin.hpp"
#include "transports/profiles.hpp"

namespace vsim::app {

// A shipped profile file as compiled in (scripts/embed_profiles.cmake):
// its path in the source tree and its bytes.
struct ShippedProfileText {
  const char* path;
  const char* text;
};
const std::vector<ShippedProfileText>& shipped_profile_texts();

// The shipped profiles (experiments/platforms/*.yaml), in name order.
const std::vector<PlatformProfile>& platform_profiles();

// A shipped profile by name, else a profile file loaded (load_profile_file)
// in this process whose name it is; nullptr for neither.
const PlatformProfile* find_profile(const std::string& name);

// The platform a point gets when the experiment names none (issue 51,
// item 5): its transport's newest shipped profile, hyperv-2019 for hv_sock
// and kvm-2024 for virtio_vsock.
const std::string& default_platform(const std::string& transport);

// The source of a profile's value of cost `key` (without "costs."), as
// describe lists it: the provenance's source ("fitted", "held", "prior",
// "given"), "base (NAME: SOURCE)" for a value taken from the base.
std::string cost_source(const PlatformProfile& profile, const std::string& key);

// Reads and checks a profile file (docs/profiles.md), resolves its base (a
// shipped name or a path relative to the file), and keeps it for
// find_profile. Throws InputError with file:line:column for a file that is
// not a valid profile; `at` is where the path was given (for an unreadable
// file). A profile equal in transport and costs to one already known (a
// copy of a shipped file, the same file twice) is that one; another profile
// of a known name is an error.
const PlatformProfile& load_profile_file(const std::string& path, const load::Origin& at);

// Keeps `profile` for find_profile, as load_profile_file does (for a profile
// rebuilt from a result's manifest). Returns the kept one; throws InputError
// (without a position) when another profile of that name, with other values,
// is already known.
const PlatformProfile& add_profile(PlatformProfile profile);

// The profile as a profile file: what load_profile_file reads back to an
// equal profile (app/experiment/profile_file.hpp write_profile).
std::string profile_yaml(const PlatformProfile& profile);

} // namespace vsim::app
