#include "app/experiment/platforms.hpp"

#include <map>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "app/experiment/experiment.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/experiment/sha256.hpp"
#include "app/experiment/text.hpp"

namespace fs = std::filesystem;

namespace vsim::app {

namespace {

using namespace load;

// The shipped profiles, parsed on first use; a base among them is parsed
// before the profile naming it.
class Shipped {
public:
  Shipped()
  {
    for (const ShippedProfileText& t : shipped_profile_texts())
      parse(t);
    std::sort(profiles_.begin(), profiles_.end(),
              [](const PlatformProfile& a, const PlatformProfile& b) { return a.name < b.name; });
  }
  const std::vector<PlatformProfile>& all() const { return profiles_; }

private:
  const PlatformProfile& parse(const ShippedProfileText& t)
  {
    const std::string stem = fs::path(t.path).stem().string();
    for (const PlatformProfile& p : profiles_)
      if (p.name == stem)
        return p;
    if (std::find(parsing_.begin(), parsing_.end(), stem) != parsing_.end())
      throw std::logic_error("shipped profiles name each other as base: " + join(parsing_));
    parsing_.push_back(stem);
    PlatformProfile p = parse_profile(t.text, t.path, [&](const std::string& base, const std::string& at) {
      return std::cref(this->base(base, at));
    });
    parsing_.pop_back();
    if (p.name != stem)
      throw std::logic_error(fmt::format("{} names itself {}", t.path, p.name));
    p.origin = "shipped";
    p.sha256 = sha256_hex(t.text);
    profiles_.push_back(std::move(p));
    return profiles_.back();
  }
  const PlatformProfile& base(const std::string& name, const std::string& at)
  {
    for (const ShippedProfileText& t : shipped_profile_texts())
      if (fs::path(t.path).stem().string() == name)
        return parse(t);
    throw InputError(at + "base: a shipped profile may only name another shipped profile, not " + name);
  }
  std::vector<PlatformProfile> profiles_;
  std::vector<std::string> parsing_;
};

const Shipped& shipped()
{
  static const Shipped s;
  return s;
}

// The profile files loaded in this process (stable addresses).
std::deque<PlatformProfile>& loaded()
{
  static std::deque<PlatformProfile> l;
  return l;
}

bool same_values(const PlatformProfile& a, const PlatformProfile& b)
{
  return a.transport == b.transport && a.costs == b.costs;
}

std::string read_bytes(const std::string& path, const Origin& at)
{
  std::error_code ec;
  if (fs::is_directory(path, ec))
    fail(at, "platform", fmt::format("{} is a directory (allowed: a profile file, docs/profiles.md)", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(at, "platform",
         fmt::format("cannot read the profile file {}: {} (allowed: a shipped profile name, or the path of a profile "
                     "file relative to the experiment file)",
                     path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

const std::vector<PlatformProfile>& platform_profiles()
{
  return shipped().all();
}

const std::string& default_platform(const std::string& transport)
{
  static const std::map<std::string, std::string> newest = {
      {"hv_sock", "hyperv-2019"}, {"virtio_vsock", "kvm-2024"}, {"firecracker_vsock", "firecracker-m6i"}};
  static const std::string fallback = "hyperv-2019";
  const auto it = newest.find(transport);
  return it == newest.end() ? fallback : it->second;
}

const PlatformProfile* find_profile(const std::string& name)
{
  for (const auto& p : platform_profiles())
    if (p.name == name)
      return &p;
  for (const auto& p : loaded())
    if (p.name == name)
      return &p;
  return nullptr;
}

const PlatformProfile& add_profile(PlatformProfile profile)
{
  if (const PlatformProfile* known = find_profile(profile.name)) {
    if (same_values(*known, profile))
      return *known;
    throw InputError(fmt::format(
        "error: platform: two different profiles are named {}: {} and {} (allowed: give each profile file its own "
        "name)",
        profile.name, known->origin, profile.origin));
  }
  loaded().push_back(std::move(profile));
  return loaded().back();
}

const PlatformProfile& load_profile_file(const std::string& path, const Origin& at)
{
  const std::string shown = fs::path(path).lexically_normal().string();
  // The files being read, each naming the next as its base.
  static std::vector<std::string> reading;
  if (std::find(reading.begin(), reading.end(), shown) != reading.end())
    fail(at, "base",
         fmt::format("the profile files name each other as base: {} -> {} (allowed: a chain of bases that ends)",
                     join(reading), shown));
  reading.push_back(shown);
  struct Pop {
    ~Pop() { reading.pop_back(); }
  } pop;
  const std::string bytes = read_bytes(shown, at);
  PlatformProfile p = parse_profile(bytes, shown, [&](const std::string& base, const std::string& base_at) {
    if (!is_profile_path(base)) {
      for (const auto& s : platform_profiles())
        if (s.name == base)
          return std::cref(s);
      std::vector<std::string> names;
      for (const auto& s : platform_profiles())
        names.push_back(s.name);
      throw InputError(
          base_at + "base: " +
          with_allowed("unknown profile " + base, join(names) + ", or a profile file PATH.yaml relative to this file"));
    }
    return std::cref(load_profile_file((fs::path(shown).parent_path() / base).string(), in_file(shown)));
  });
  p.origin = shown;
  p.sha256 = sha256_hex(bytes);
  return add_profile(std::move(p));
}

std::string profile_yaml(const PlatformProfile& profile)
{
  return write_profile(profile);
}

std::string cost_source(const PlatformProfile& profile, const std::string& key)
{
  auto it = profile.provenance.find(key);
  if (it == profile.provenance.end())
    return "given";
  if (it->second.source == "base")
    return "base (" + it->second.note + ")";
  return it->second.source;
}

} // namespace vsim::app
