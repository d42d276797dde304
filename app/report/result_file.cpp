#include "app/report/result_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "app/run/output_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace vsim::app {

namespace {

const char* kAllowed = "allowed: the JSON of `vsocksim run --format json`, or a `run --output` directory";

std::string message(ResultFileError::Kind kind, const std::string& file)
{
  return kind == ResultFileError::Kind::Unreadable
             ? fmt::format("{}: error: cannot read the result ({})", file, kAllowed)
             : fmt::format("{}: error: not valid JSON ({})", file, kAllowed);
}

Value value_of(const json& v, const std::string& where)
{
  if (v.is_boolean())
    return v.get<bool>();
  if (v.is_number_integer())
    return v.get<std::int64_t>();
  if (v.is_number())
    return v.get<double>();
  if (v.is_string())
    return v.get<std::string>();
  throw InputError(fmt::format("{}: error: a parameter that is not a boolean, number or text ({})", where, kAllowed));
}

} // namespace

ResultFileError::ResultFileError(Kind k, std::string f, std::string d)
    : InputError(message(k, f)), kind(k), file(std::move(f)), detail(std::move(d))
{
}

ResultJson read_result_json(const std::string& path)
{
  ResultJson r;
  r.file = path;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    r.file = (fs::path(path) / "result.json").string();
  std::ifstream in(r.file);
  if (!in)
    throw ResultFileError(ResultFileError::Kind::Unreadable, r.file, "");
  try {
    r.doc = json::parse(in);
  } catch (const json::exception& e) {
    throw ResultFileError(ResultFileError::Kind::NotJson, r.file, e.what());
  }
  return r;
}

ResultFile read_result(const std::string& path)
{
  ResultFile r;
  ResultJson read = read_result_json(path);
  const std::string file = read.file;
  r.doc = std::move(read.doc);
  const bool has_failed = r.doc.is_object() && r.doc.contains("failed_points") && r.doc["failed_points"].is_array();
  if (!r.doc.is_object() || !r.doc.contains("points") || !r.doc["points"].is_array() ||
      (r.doc["points"].empty() && (!has_failed || r.doc["failed_points"].empty())))
    throw InputError(fmt::format("{}: error: not a vsocksim result: no points ({})", file, kAllowed));
  r.path = file;
  r.ex.file = file;
  r.ex.name = r.doc.value("experiment", std::string("result"));
  // The points that ran and those that failed, in the order of their indices.
  std::vector<const json*> entries;
  for (const char* list : {"points", "failed_points"})
    if (list == std::string("points") || has_failed)
      for (const json& p : r.doc[list]) {
        const bool failed = list != std::string("points");
        if (!p.is_object() || !p.contains("index") || !p["index"].is_number_unsigned() || !p.contains("params") ||
            (failed ? !p.contains("failed") : !p.contains("iterations") || !p["iterations"].is_array()))
          throw InputError(fmt::format("{}: error: {} ({})", file,
                                       failed ? "a failed point without index, params or failed"
                                              : "a point without index, params or iterations",
                                       kAllowed));
        entries.push_back(&p);
      }
  if (has_failed)
    std::stable_sort(entries.begin(), entries.end(), [](const json* a, const json* b) {
      return a->at("index").get<std::size_t>() < b->at("index").get<std::size_t>();
    });
  for (const json* entry : entries) {
    const json& p = *entry;
    const bool failed = p.contains("failed");
    r.effective.push_back(p.value("effective", json::object()));
    Point pt;
    pt.index = p["index"].get<std::size_t>();
    for (const auto& [k, v] : p["params"].items())
      pt.params.set(k, value_of(v, file));
    if (p.contains("label"))
      for (const auto& [k, v] : p["label"].items()) {
        pt.label.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
        if (std::find(r.ex.grid_keys.begin(), r.ex.grid_keys.end(), k) == r.ex.grid_keys.end())
          r.ex.grid_keys.push_back(k);
      }
    if (p.contains("ensemble") && p["ensemble"].is_object() && p["ensemble"].contains("costs")) {
      // sim.ensemble: each member's parameters, the point's with its own costs
      const json& e = p["ensemble"];
      if (!e["costs"].is_array() || !e.contains("weights") || !e["weights"].is_array() ||
          e["weights"].size() != e["costs"].size())
        throw InputError(fmt::format("{}: error: point {}: an ensemble without one weight per member's costs ({})",
                                     file, pt.index, kAllowed));
      for (std::size_t m = 0; m < e["costs"].size(); ++m) {
        MemberPoint mp{e["weights"][m].is_number() ? e["weights"][m].get<double>() : 0.0, pt.params};
        if (e["costs"][m].is_object())
          for (const auto& [k, v] : e["costs"][m].items())
            mp.params.set("costs." + k, value_of(v, file));
        pt.members.push_back(std::move(mp));
      }
    }
    PointResult pr{pt.index, {}, {}, {}, {}, {}, {}};
    if (failed) {
      pr.failed = p["failed"].is_string() ? p["failed"].get<std::string>() : p["failed"].dump();
      if (p.value("hang", false) == true)
        pr.kind = FailureKind::Hang;
    } else
      pr = point_figures_from_json(pt.index, p);
    r.ex.points.push_back(std::move(pt));
    r.results.push_back(std::move(pr));
  }
  return r;
}

} // namespace vsim::app
