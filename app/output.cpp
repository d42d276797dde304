#include "app/output.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "app/stop.hpp"
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
  fs::path parent = fs::absolute(dir, ec).parent_path();
  if (!fs::exists(parent, ec))
    throw InputError(fmt::format("--output '{}': error: parent directory '{}' does not exist", dir, parent.string()));
  if (!fs::is_directory(parent, ec))
    throw InputError(fmt::format("--output '{}': error: '{}' is not a directory", dir, parent.string()));
}

void write_file_atomic(const std::string& path, const std::string& content)
{
  std::string tmp = path + ".tmp";
  stop::writing(tmp.c_str());  // a second stop request removes it before the process ends
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

void remove_temporaries(const std::string& dir)
{
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return;
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool ours = name == "result.json.tmp" || name == "manifest.json.tmp" ||
                      (name.starts_with("point-") && name.ends_with(".json.tmp"));
    if (ours && e.is_regular_file(ec))
      stale.push_back(e.path());
  }
  for (const fs::path& p : stale)
    fs::remove(p, ec);
}

namespace {

std::string point_path(const std::string& dir, std::size_t index)
{
  return fmt::format("{}/point-{:04}.json", dir, index);
}

nlohmann::ordered_json run_identity(const nlohmann::ordered_json& manifest)
{
  nlohmann::ordered_json id;
  for (const char* key : {"config_sha256", "version", "git_commit"})
    id[key] = manifest.at(key);
  return id;
}

}  // namespace

void write_point_file(const std::string& dir, nlohmann::ordered_json point, const nlohmann::ordered_json& manifest)
{
  fs::create_directories(dir);
  point["run"] = run_identity(manifest);
  write_file_atomic(point_path(dir, point.at("index").get<std::size_t>()), point.dump(2) + "\n");
}

std::map<std::size_t, PointResult> reusable_points(const std::string& dir, const Experiment& ex,
                                                   const nlohmann::ordered_json& manifest)
{
  std::map<std::size_t, PointResult> out;
  const nlohmann::ordered_json id = run_identity(manifest);
  if (id["git_commit"] == "unknown")
    return out;  // no well-defined code version: recompute everything
  for (const Point& p : ex.points) {
    std::ifstream f(point_path(dir, p.index));
    if (!f)
      continue;
    try {
      auto j = nlohmann::ordered_json::parse(f);
      if (j.value("run", nlohmann::ordered_json()) != id || j.at("index").get<std::size_t>() != p.index)
        continue;
      PointResult r{p.index, {}, {}};
      for (const auto& it : j.at("iterations")) {
        Metrics m;
        for (const auto& [name, value] : it.items())
          m[name] = value.get<double>();
        r.iterations.push_back(std::move(m));
      }
      if (j.contains("run_length"))
        for (const auto& it : j.at("run_length").at("iterations")) {
          Metrics info;
          for (const auto& [name, value] : it.items())
            if (value.is_boolean())
              info[name] = value.get<bool>() ? 1 : 0;
            else if (value.is_number())
              info[name] = value.get<double>();
          r.run_length.push_back(std::move(info));
        }
      r.run_length.resize(r.iterations.size());
      if (static_cast<std::int64_t>(r.iterations.size()) == p.params.integer("iterations"))
        out.emplace(p.index, std::move(r));
    } catch (const nlohmann::ordered_json::exception&) {
      continue;  // a damaged file is recomputed
    }
  }
  return out;
}

void write_output_dir(const std::string& dir, const nlohmann::ordered_json& all)
{
  fs::create_directories(dir);
  for (const auto& point : all["points"])
    write_point_file(dir, point, all["manifest"]);
  write_file_atomic(dir + "/manifest.json", all["manifest"].dump(2) + "\n");
  write_file_atomic(dir + "/result.json", all.dump(2) + "\n");
}

std::string known_metrics_list()
{
  std::string s;
  for (const auto& d : metric_docs()) {
    if (!s.empty())
      s += ", ";
    s += d.name;
  }
  return s;
}

}  // namespace vsim::app
