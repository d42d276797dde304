#include "app/report/merge.hpp"

#include <map>

#include <fmt/format.h>

#include "app/report/result_file.hpp"

namespace vsim::app {

nlohmann::ordered_json merge_results(const std::vector<std::string>& dirs)
{
  using json = nlohmann::ordered_json;
  if (dirs.empty())
    throw InputError("merge: error: name at least one result directory");
  json merged;
  std::map<std::size_t, json> points;
  std::map<std::size_t, std::string> failed; // a point that failed -> the directory it failed in
  std::size_t total = 0;
  std::map<std::string, json> platforms; // manifest.platforms of every shard, by name
  for (const std::string& dir : dirs) {
    std::string path = dir + "/result.json";
    json r;
    try {
      r = read_result_json(path).doc;
    } catch (const ResultFileError& e) {
      if (e.kind == ResultFileError::Kind::Unreadable)
        throw InputError(
            fmt::format("{}: error: cannot read (is '{}' a result directory of `run --output`?)", path, dir));
      throw InputError(fmt::format("{}: error: not a result: {}", path, e.detail));
    }
    if (!r.contains("manifest") || !r.contains("points") || !r.contains("experiment"))
      throw InputError(fmt::format("{}: error: not a result (no experiment, manifest or points)", path));
    const json& m = r["manifest"];
    std::size_t this_total = m.value("points_total", r["points"].size());
    if (merged.is_null()) {
      merged = r;
      total = this_total;
    } else {
      for (const char* key : {"config_sha256", "version", "git_commit"})
        if (m.value(key, json()) != merged["manifest"].value(key, json()))
          throw InputError(
              fmt::format("{}: error: manifest.{} differs from {}'s: not shards of one run", path, key, dirs.front()));
      if (r["experiment"] != merged["experiment"] || this_total != total)
        throw InputError(fmt::format("{}: error: another experiment or sweep than {}'s", path, dirs.front()));
    }
    if (m.contains("platforms") && m["platforms"].is_object()) // each shard names its own points' profiles
      for (const auto& [name, profile] : m["platforms"].items())
        platforms.emplace(name, profile);
    for (const json& p : r["points"]) {
      std::size_t index = p.at("index").get<std::size_t>();
      if (!points.emplace(index, p).second)
        throw InputError(fmt::format("{}: error: point {} is also in another directory", path, index));
    }
    if (r.contains("failed_points") && r["failed_points"].is_array())
      for (const json& p : r["failed_points"])
        failed.emplace(p.at("index").get<std::size_t>(), dir);
  }
  for (std::size_t i = 0; i < total; ++i)
    if (!points.count(i)) {
      if (failed.count(i))
        throw InputError(fmt::format("merge: error: point {} failed in {} (allowed: shards whose every point ran; a "
                                     "rerun of that shard into it simulates only its failed points)",
                                     i, failed.at(i)));
      throw InputError(
          fmt::format("merge: error: point {} is in none of the directories ({} points expected)", i, total));
    }
  merged["points"] = json::array();
  for (auto& [index, p] : points)
    merged["points"].push_back(std::move(p));
  merged.erase("failed_points"); // every point ran, in one shard or another
  merged["manifest"].erase("shard");
  merged["manifest"].erase("points_total");
  if (merged["manifest"].contains("platforms")) {
    merged["manifest"]["platforms"] = json::object();
    for (auto& [name, profile] : platforms)
      merged["manifest"]["platforms"][name] = std::move(profile);
  }
  merged.erase("validation"); // a shard compares only its own points
  if (merged["manifest"].contains("experiment") && merged["manifest"]["experiment"].is_object())
    merged["manifest"]["experiment"].erase("measurements"); // so that reproduce compares none either
  return merged;
}

} // namespace vsim::app
