#include "app/run/shard.hpp"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

namespace vsim::app {

namespace {

std::optional<std::size_t> to_size(const std::string& s)
{
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

}  // namespace

Shard parse_shard(const std::string& text)
{
  auto slash = text.find('/');
  std::optional<std::size_t> i, n;
  if (slash != std::string::npos) {
    i = to_size(text.substr(0, slash));
    n = to_size(text.substr(slash + 1));
  }
  if (!i || !n || *n == 0 || *i >= *n)
    throw InputError(fmt::format("--shard '{}': error: expected I/N with 0 <= I < N (e.g. 0/4)", text));
  return {*i, *n};
}

std::optional<Shard> shard_from_slurm()
{
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (id == nullptr || count == nullptr)
    return std::nullopt;
  const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
  auto i = to_size(id), n = to_size(count), m = to_size(min ? min : "0");
  if (!i || !n || !m || *i < *m || *n == 0 || *i - *m >= *n)
    throw InputError(fmt::format("SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_COUNT={} SLURM_ARRAY_TASK_MIN={}: error: "
                                 "not a task of the array (expected MIN <= ID < MIN + COUNT)",
                                 id, count, min ? min : "unset"));
  return Shard{*i - *m, *n};
}

void keep_shard(Experiment& ex, const Shard& shard)
{
  std::vector<Point> kept;
  for (Point& p : ex.points)
    if (p.index % shard.count == shard.index)
      kept.push_back(std::move(p));
  ex.points = std::move(kept);
}

nlohmann::ordered_json merge_results(const std::vector<std::string>& dirs)
{
  using json = nlohmann::ordered_json;
  if (dirs.empty())
    throw InputError("merge: error: name at least one result directory");
  json merged;
  std::map<std::size_t, json> points;
  std::map<std::size_t, std::string> failed;  // a point that failed -> the directory it failed in
  std::size_t total = 0;
  for (const std::string& dir : dirs) {
    std::string path = dir + "/result.json";
    std::ifstream f(path);
    if (!f)
      throw InputError(fmt::format("{}: error: cannot read (is '{}' a result directory of `run --output`?)", path, dir));
    json r;
    try {
      r = json::parse(f);
    } catch (const json::exception& e) {
      throw InputError(fmt::format("{}: error: not a result: {}", path, e.what()));
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
          throw InputError(fmt::format("{}: error: manifest.{} differs from {}'s: not shards of one run", path, key,
                                       dirs.front()));
      if (r["experiment"] != merged["experiment"] || this_total != total)
        throw InputError(fmt::format("{}: error: another experiment or sweep than {}'s", path, dirs.front()));
    }
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
      throw InputError(fmt::format("merge: error: point {} is in none of the directories ({} points expected)", i,
                                   total));
    }
  merged["points"] = json::array();
  for (auto& [index, p] : points)
    merged["points"].push_back(std::move(p));
  merged.erase("failed_points");  // every point ran, in one shard or another
  merged["manifest"].erase("shard");
  merged["manifest"].erase("points_total");
  merged.erase("validation");  // a shard compares only its own points
  return merged;
}

}  // namespace vsim::app
