#include "app/report/manifest.hpp"

#include "vsim_git.hpp" // generated at build time: kVsimGitCommit

#include <cstdlib>
#include <ctime>
#include <set>

#include <dlfcn.h>

#include <boost/version.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/opensslv.h>
#include <yaml-cpp/yaml.h>
// clang-format off
#include <xbt/base.h>  // simgrid/version.h needs its macros
#include <simgrid/version.h>
// clang-format on

#include "app/experiment/platforms.hpp"
#include "app/experiment/sha256.hpp"
#include "app/report/profile_json.hpp"

namespace vsim::app {
namespace {

// yaml-cpp's headers carry no version macro. The build may pass one
// (VSIM_YAML_CPP_VERSION, from CMake's yaml-cpp_VERSION); otherwise the version
// is read from the file name of the shared library that holds YAML::Load
// (libyaml-cpp.so.0.7.0 -> "0.7.0"), or "unknown".
std::string yaml_cpp_version()
{
#ifdef VSIM_YAML_CPP_VERSION
  return VSIM_YAML_CPP_VERSION;
#else
  auto* load = static_cast<YAML::Node (*)(const std::string&)>(&YAML::Load);
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(load), &info) == 0 || info.dli_fname == nullptr)
    return "unknown";
  std::string path = info.dli_fname;
  if (char* real = ::realpath(info.dli_fname, nullptr)) {
    path = real; // libyaml-cpp.so.0.7 -> libyaml-cpp.so.0.7.0
    std::free(real);
  }
  static const std::string marker = "libyaml-cpp.so.";
  auto pos = path.rfind(marker);
  if (pos == std::string::npos || pos + marker.size() == path.size())
    return "unknown";
  return path.substr(pos + marker.size());
#endif
}

std::map<std::string, std::string> dependency_versions()
{
  return {
      {"boost", fmt::format("{}.{}.{}", BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000, BOOST_VERSION % 100)},
      {"fmt", fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
      {"nlohmann_json",
       fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
      {"openssl", OPENSSL_VERSION_STR},
      {"yaml-cpp", yaml_cpp_version()},
  };
}

// The experiment as loaded: its file as given, the configuration its
// config_sha256 is the hash of (Experiment::canonical, as JSON) and the
// measurements it is compared with.
nlohmann::ordered_json experiment_json(const Experiment& ex, const MeasurementsText& measurements)
{
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["file"] = ex.file;
  j["config"] = ex.canonical.empty() ? nlohmann::ordered_json::object() : nlohmann::ordered_json::parse(ex.canonical);
  if (!measurements.file.empty())
    j["measurements"] = {
        {"file", measurements.file}, {"sha256", sha256_hex(measurements.text)}, {"text", measurements.text}};
  return j;
}

} // namespace

nlohmann::ordered_json platforms_json(const std::vector<Point>& points)
{
  std::set<std::string> names;
  for (const Point& p : points)
    if (p.params.has("platform"))
      names.insert(p.params.text("platform"));
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const std::string& name : names)
    if (const PlatformProfile* profile = find_profile(name))
      out[name] = profile_json(*profile);
  return out;
}

Manifest make_manifest(const Experiment& ex, const std::string& command_line, const MeasurementsText& measurements)
{
  Manifest m;
  m.version = VSIM_VERSION;
  m.git_commit = kVsimGitCommit;
  m.config_sha256 = ex.config_sha256;
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch); // the library actually running the simulations
  m.simgrid_version = fmt::format("{}.{}.{}", major, minor, patch);
  m.command_line = command_line;
  m.seed = ex.base.has("seed") ? ex.base.integer("seed") : 0;
  m.dependencies = dependency_versions();
  m.platforms = platforms_json(ex.points);
  m.experiment = experiment_json(ex, measurements);
  return m;
}

std::string version_text()
{
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return fmt::format("vsocksim {} (git {}), SimGrid {}.{}.{}", VSIM_VERSION, kVsimGitCommit, major, minor, patch);
}

std::string format_utc(std::chrono::system_clock::time_point t)
{
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace vsim::app
