#include "app/run/output_dir.hpp"

#include "app/experiment/params_json.hpp"
#include "app/experiment/sha256.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include <unistd.h>

#include "app/run/stop.hpp"
#include "transports/simulate.hpp"

namespace fs = std::filesystem;

namespace vsim::app {

void check_output_dir(const std::string& dir)
{
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(fmt::format("--output '{}': error: exists and is not a directory", dir));
  if (dir.empty())
    throw InputError("--output '': error: needs a directory path");
  // Missing parents are created with DIR, when its first file is written;
  // the nearest one that exists must be a directory this process may write in.
  const fs::path path = fs::absolute(dir, ec).lexically_normal();
  fs::path existing = path;
  while (!fs::exists(existing, ec) && existing.has_relative_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    throw InputError(fmt::format("--output '{}': error: '{}' is not a directory", dir, existing.string()));
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    throw InputError(
        fmt::format("--output '{}': error: cannot write in '{}': {}", dir, existing.string(), std::strerror(errno)));
}

void write_file_atomic(const std::string& path, const std::string& content)
{
  std::string tmp = path + ".tmp";
  stop::writing(tmp.c_str()); // a second stop request removes it before the process ends
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << content;
    f.flush();
    if (!f) {
      stop::writing(nullptr);
      throw std::runtime_error("cannot write " + tmp);
    }
  }
  fs::rename(tmp, path);
  stop::writing(nullptr);
}

namespace {

// Removes DIR's regular files whose name `doomed` picks.
void remove_files_if(const std::string& dir, const std::function<bool(const std::string&)>& doomed)
{
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return;
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (doomed(e.path().filename().string()) && e.is_regular_file(ec))
      stale.push_back(e.path());
  for (const fs::path& p : stale)
    fs::remove(p, ec);
}

} // namespace

void remove_temporaries(const std::string& dir)
{
  remove_files_if(dir, [](const std::string& name) {
    return name == "result.json.tmp" || name == "manifest.json.tmp" ||
           (name.starts_with("point-") && name.ends_with(".json.tmp"));
  });
}

namespace {

std::string point_path(const std::string& dir, std::size_t index)
{
  return fmt::format("{}/point-{:04}.json", dir, index);
}

// The code that produced a point: version and commit (a dirty tree's with a
// hash of its diff).
nlohmann::ordered_json code_identity(const nlohmann::ordered_json& manifest)
{
  nlohmann::ordered_json id;
  for (const char* key : {"version", "git_commit"})
    id[key] = manifest.at(key);
  return id;
}

// What a point file records of the point: its parameters' hash (the key it
// is reused by) and the experiment it belongs to.
std::string params_sha256(const nlohmann::ordered_json& params)
{
  return sha256_hex(params.dump());
}

// Every point file of DIR, parsed (damaged ones left out), by file name.
std::map<std::string, nlohmann::ordered_json> point_files(const std::string& dir)
{
  std::map<std::string, nlohmann::ordered_json> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!(name.starts_with("point-") && name.ends_with(".json")) || !e.is_regular_file(ec))
      continue;
    std::ifstream f(e.path());
    try {
      out.emplace(name, nlohmann::ordered_json::parse(f));
    } catch (const nlohmann::ordered_json::exception&) {
      continue; // a damaged file is recomputed
    }
  }
  return out;
}

} // namespace

void write_point_file(const std::string& dir, nlohmann::ordered_json point, const nlohmann::ordered_json& manifest,
                      const std::string& experiment)
{
  fs::create_directories(dir);
  nlohmann::ordered_json run = code_identity(manifest);
  run["experiment"] = experiment;
  run["params_sha256"] = params_sha256(point.at("params"));
  point["run"] = std::move(run);
  write_file_atomic(point_path(dir, point.at("index").get<std::size_t>()), point.dump(2) + "\n");
}

FinishedPoints::FinishedPoints(const std::string& dir, const nlohmann::ordered_json& manifest)
{
  const nlohmann::ordered_json code = code_identity(manifest);
  if (code["git_commit"] == "unknown")
    return; // no well-defined code version: recompute everything
  // The finished points in DIR by the hash of their parameters: a point
  // whatever its index (a sweep with a value added reuses the others).
  for (auto& [name, j] : point_files(dir)) {
    const nlohmann::ordered_json run = j.value("run", nlohmann::ordered_json());
    if (!run.is_object() || run.value("version", nlohmann::ordered_json()) != code["version"] ||
        run.value("git_commit", nlohmann::ordered_json()) != code["git_commit"] || !run.contains("params_sha256") ||
        !run["params_sha256"].is_string())
      continue;
    by_hash_.emplace(run["params_sha256"].get<std::string>(), std::move(j));
  }
}

std::optional<PointResult> FinishedPoints::find(const Point& p) const
{
  auto it = by_hash_.find(params_sha256(params_json(p.params)));
  if (it == by_hash_.end())
    return std::nullopt;
  const nlohmann::ordered_json& j = it->second;
  try {
    if (j.contains("run_length"))
      (void)j.at("run_length").at("iterations"); // a damaged file is recomputed
    PointResult r = point_figures_from_json(p.index, j);
    if (static_cast<std::int64_t>(r.iterations.size()) == p.params.integer("iterations") &&
        r.members.size() == p.members.size())
      return r;
  } catch (const nlohmann::ordered_json::exception&) {
  } // a damaged file is recomputed
  return std::nullopt;
}

std::map<std::size_t, PointResult> reusable_points(const std::string& dir, const Experiment& ex,
                                                   const nlohmann::ordered_json& manifest)
{
  std::map<std::size_t, PointResult> out;
  const FinishedPoints finished(dir, manifest);
  for (const Point& p : ex.points)
    if (std::optional<PointResult> r = finished.find(p))
      out.emplace(p.index, std::move(*r));
  return out;
}

std::optional<std::string> other_experiment_in(const std::string& dir, const std::string& experiment)
{
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return std::nullopt;
  std::ifstream f(dir + "/result.json");
  if (f) {
    try {
      const auto r = nlohmann::ordered_json::parse(f);
      if (r.contains("experiment") && r["experiment"].is_string() && r["experiment"] != experiment)
        return r["experiment"].get<std::string>();
    } catch (const nlohmann::ordered_json::exception&) {
    }
  }
  for (const auto& [name, j] : point_files(dir)) {
    const auto run = j.value("run", nlohmann::ordered_json());
    if (run.is_object() && run.contains("experiment") && run["experiment"].is_string() &&
        run["experiment"] != experiment)
      return run["experiment"].get<std::string>();
  }
  return std::nullopt;
}

void remove_stale_points(const std::string& dir, std::size_t points)
{
  remove_files_if(dir, [points](const std::string& name) {
    std::size_t index = 0;
    return name.starts_with("point-") && name.ends_with(".json") &&
           std::sscanf(name.c_str(), "point-%zu.json", &index) == 1 && index >= points;
  });
}

void write_output_dir(const std::string& dir, const nlohmann::ordered_json& all)
{
  fs::create_directories(dir);
  for (const auto& point : all["points"])
    write_point_file(dir, point, all["manifest"], all.value("experiment", std::string()));
  // A failed point has no file: one of an earlier run at its index would be
  // taken for it (a rerun still finds by its parameters any point it held).
  if (all.contains("failed_points"))
    for (const auto& point : all["failed_points"]) {
      std::error_code ec;
      fs::remove(point_path(dir, point.at("index").get<std::size_t>()), ec);
    }
  write_file_atomic(dir + "/manifest.json", all["manifest"].dump(2) + "\n");
  write_file_atomic(dir + "/result.json", all.dump(2) + "\n");
}

Metrics metrics_from_json(const nlohmann::ordered_json& obj)
{
  Metrics m;
  for (const auto& [name, value] : obj.items())
    if (value.is_boolean())
      m[name] = value.get<bool>() ? 1 : 0;
    else if (value.is_number())
      m[name] = value.get<double>();
  return m;
}

PointResult point_figures_from_json(std::size_t index, const nlohmann::ordered_json& point)
{
  PointResult r{index, {}, {}, {}, {}, {}, {}};
  for (const auto& it : point.at("iterations"))
    r.iterations.push_back(metrics_from_json(it));
  if (point.contains("run_length") && point["run_length"].contains("iterations"))
    for (const auto& it : point["run_length"]["iterations"])
      r.run_length.push_back(metrics_from_json(it));
  r.run_length.resize(r.iterations.size());
  if (point.contains("rtt_histogram"))
    for (const auto& it : point["rtt_histogram"].at("iterations"))
      r.rtt_histograms.push_back(metrics_from_json(it));
  r.rtt_histograms.resize(r.iterations.size());
  if (point.contains("round_trip_stages"))
    for (const auto& it : point["round_trip_stages"].at("iterations"))
      r.rtt_stages.push_back(metrics_from_json(it));
  r.rtt_stages.resize(r.iterations.size());
  if (point.contains("ensemble")) { // sim.ensemble: the members, from each metric's values
    for (const auto& w : point["ensemble"].at("weights"))
      r.members.push_back(MemberResult{w.get<double>(), {}, {}});
    for (const auto& [name, stats] : point.at("metrics").items())
      if (stats.contains("ensemble")) {
        const auto& values = stats["ensemble"].at("values");
        for (std::size_t m = 0; m < r.members.size() && m < values.size(); ++m)
          if (!values[m].is_null())
            r.members[m].metrics[name] = values[m].get<double>();
      }
    if (point["ensemble"].contains("failed"))
      for (const auto& f : point["ensemble"]["failed"])
        r.members.at(f.at("member").get<std::size_t>()).failed = f.at("why").get<std::string>();
  }
  return r;
}

} // namespace vsim::app
