#include "app/report/reproduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "app/experiment/platforms.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/sha256.hpp"
#include "app/report/profile_json.hpp"
#include "app/report/text.hpp"

namespace vsim::app {

namespace {

using json = nlohmann::ordered_json;

// The text of a JSON value in a message: strings unquoted.
std::string text_of(const json& v)
{
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// What a rerun needs that results made before `reproduce` existed lack.
void check_rerunnable(const json& doc, const std::string& file)
{
  const json manifest = doc.value("manifest", json::object());
  std::vector<std::string> missing;
  if (!manifest.is_object() || !manifest.contains("experiment") || !manifest["experiment"].is_object() ||
      !manifest["experiment"].contains("config"))
    missing.push_back("manifest.experiment (the configuration and measurements)");
  if (!manifest.is_object() || !manifest.contains("platforms") || !manifest["platforms"].is_object())
    missing.push_back("manifest.platforms (the platform profiles)");
  if (missing.empty())
    return;
  const std::string made_by =
      manifest.is_object() && manifest.contains("version") && manifest.contains("git_commit")
          ? fmt::format(" (made by vsocksim {}, git {})", text_of(manifest["version"]), text_of(manifest["git_commit"]))
          : "";
  throw InputError(fmt::format("{}: error: a result too old to be reproduced{}: it lacks {} (allowed: a result of "
                               "`run` by a vsocksim that has `reproduce`; rerun the experiment file with `run`)",
                               file, made_by, fmt::join(missing, " and ")));
}

Value config_value(const nlohmann::json& v, const std::string& where)
{
  if (v.is_boolean())
    return v.get<bool>();
  if (v.is_number_integer())
    return v.get<std::int64_t>();
  if (v.is_number())
    return v.get<double>();
  if (v.is_string())
    return v.get<std::string>();
  throw InputError(fmt::format("{}: error: manifest.experiment.config: a parameter that is not a boolean, number or "
                               "text",
                               where));
}

// The experiment's base parameters, sweep keys, canonical text and its hash
// from manifest.experiment.config (the canonical JSON the loader hashed).
void rebuild_config(Experiment& ex, const json& experiment, const std::string& file)
{
  const nlohmann::json config = nlohmann::json::parse(experiment.at("config").dump());
  try {
    for (const auto& [key, v] : config.at("params").items())
      ex.base.set(key, config_value(v, file));
    ex.grid_keys.clear();
    for (const char* kind : {"grid", "zip"})
      for (const auto& axis : config.at("sweep").at(kind))
        (kind == std::string("grid") ? ex.grid_keys : ex.zip_keys).push_back(axis.at("key").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(
        fmt::format("{}: error: manifest.experiment.config: not an experiment's configuration ({})", file, e.what()));
  }
  ex.canonical = config.dump();
  ex.config_sha256 = sha256_hex(ex.canonical);
  if (experiment.contains("file") && experiment["file"].is_string())
    ex.file = experiment["file"].get<std::string>();
}

MeasurementsText measurements_of(const json& experiment, const std::string& file)
{
  if (!experiment.contains("measurements"))
    return {};
  const json& m = experiment["measurements"];
  if (!m.is_object() || !m.contains("file") || !m["file"].is_string() || !m.contains("text") || !m["text"].is_string())
    throw InputError(
        fmt::format("{}: error: manifest.experiment.measurements: expected an object with file and text", file));
  return {m["file"].get<std::string>(), m["text"].get<std::string>()};
}

// "+1.25%" from a to b; "" when either is not a number.
std::string change_text(const json& a, const json& b)
{
  if (!a.is_number() || !b.is_number())
    return "";
  const double x = a.get<double>(), y = b.get<double>();
  if (x == 0)
    return y == 0 ? "" : " (from 0)";
  return fmt::format(" ({:+.3g}%)", (y - x) / std::abs(x) * 100);
}

// Each point of a result by index: those that ran and those that failed.
std::map<std::size_t, const json*> points_by_index(const json& doc)
{
  std::map<std::size_t, const json*> out;
  for (const char* list : {"points", "failed_points"})
    if (doc.contains(list) && doc[list].is_array())
      for (const json& p : doc[list])
        if (p.is_object() && p.contains("index") && p["index"].is_number_unsigned())
          out.emplace(p["index"].get<std::size_t>(), &p);
  return out;
}

std::string label_of(const json& p)
{
  std::string s;
  if (p.contains("label") && p["label"].is_object())
    for (const auto& [k, v] : p["label"].items())
      s += (s.empty() ? "" : ", ") + k + "=" + text_of(v);
  return s.empty() ? "(no swept keys)" : s;
}

// The members of two objects that differ, each as "PATH: A -> B", descending
// into objects; `limit` lines at most, then how many more.
void object_differences(const json& a, const json& b, const std::string& path, std::vector<std::string>& out)
{
  if (a == b)
    return;
  if (!a.is_object() || !b.is_object()) {
    const std::string va = a.is_null() ? "(absent)" : text_of(a), vb = b.is_null() ? "(absent)" : text_of(b);
    auto shorten = [](const std::string& s) { return s.size() > 60 ? s.substr(0, 57) + "..." : s; };
    out.push_back(fmt::format("{}: {} -> {}", path, shorten(va), shorten(vb)));
    return;
  }
  std::vector<std::string> keys;
  for (const auto& [k, v] : a.items())
    keys.push_back(k);
  for (const auto& [k, v] : b.items())
    if (!a.contains(k))
      keys.push_back(k);
  for (const std::string& k : keys)
    object_differences(a.value(k, json()), b.value(k, json()), path.empty() ? k : path + "." + k, out);
}

void append_limited(std::string& text, const std::vector<std::string>& lines, const std::string& indent,
                    std::size_t limit)
{
  for (std::size_t i = 0; i < lines.size() && i < limit; ++i)
    text += indent + lines[i] + "\n";
  if (lines.size() > limit)
    text += fmt::format("{}... and {} more\n", indent, lines.size() - limit);
}

// |b - a| / |a| of two metrics' means; infinite for a metric on one side
// only or a mean from 0, 0 for equal means.
double relative_change(const json& a, const json& b)
{
  const json ma = a.is_object() ? a.value("mean", json()) : json(),
             mb = b.is_object() ? b.value("mean", json()) : json();
  if (!ma.is_number() || !mb.is_number())
    return std::numeric_limits<double>::infinity();
  const double x = ma.get<double>(), y = mb.get<double>();
  if (x == y)
    return 0;
  return x == 0 ? std::numeric_limits<double>::infinity() : std::abs(y - x) / std::abs(x);
}

// A metric's stats in the original and the rerun: the mean's change, or
// which of the other statistics changed.
std::string metric_line(const std::string& name, const json& a, const json& b)
{
  if (a.is_null())
    return fmt::format("{}: only in the rerun", name);
  if (b.is_null())
    return fmt::format("{}: only in the result", name);
  const json ma = a.value("mean", json()), mb = b.value("mean", json());
  if (ma != mb)
    return fmt::format("{}: mean {} -> {}{}", name, text_of(ma), text_of(mb), change_text(ma, mb));
  std::vector<std::string> stats;
  for (const auto& [stat, v] : a.items())
    if (b.value(stat, json()) != v)
      stats.push_back(fmt::format("{} {} -> {}", stat, text_of(v), text_of(b.value(stat, json()))));
  return fmt::format("{}: same mean {}; {}", name, text_of(ma), fmt::join(stats, ", "));
}

// What differs between a point of the result and the rerun's.
std::string point_differences(std::size_t index, const json& a, const json& b)
{
  std::string out = fmt::format("  point {} ({}):\n", index, label_of(a));
  std::vector<std::string> params;
  object_differences(a.value("params", json::object()), b.value("params", json::object()), "", params);
  if (!params.empty()) {
    out += "    params:\n";
    append_limited(out, params, "      ", 10);
  }
  if (a.value("failed", json()) != b.value("failed", json()))
    out += fmt::format("    failed: {} -> {}\n", a.contains("failed") ? text_of(a["failed"]) : "(ran)",
                       b.contains("failed") ? text_of(b["failed"]) : "(ran)");
  const json ma = a.value("metrics", json::object()), mb = b.value("metrics", json::object());
  std::vector<std::string> metrics;
  std::set<std::string> names;
  for (const json* m : {&ma, &mb})
    for (const auto& [name, v] : m->items())
      names.insert(name);
  std::vector<std::pair<double, std::string>> changed; // the largest relative change of the mean first
  for (const std::string& name : names)
    if (const json a_m = ma.value(name, json()), b_m = mb.value(name, json()); a_m != b_m)
      changed.emplace_back(-relative_change(a_m, b_m), metric_line(name, a_m, b_m));
  std::stable_sort(changed.begin(), changed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [change, line] : changed)
    metrics.push_back(std::move(line));
  if (!metrics.empty()) {
    out += "    metrics (result -> rerun):\n";
    append_limited(out, metrics, "      ", 20);
  }
  std::vector<std::string> other;
  std::set<std::string> fields;
  for (const json* p : {&a, &b})
    for (const auto& [k, v] : p->items())
      if (k != "params" && k != "metrics" && k != "failed")
        fields.insert(k);
  for (const std::string& k : fields)
    if (a.value(k, json()) != b.value(k, json()))
      other.push_back(k);
  if (!other.empty())
    out += fmt::format("    also: {}\n", fmt::join(other, ", "));
  return out;
}

// The points that differ, by index.
std::string points_text(const json& original, const json& rerun, std::size_t& differing)
{
  const auto a = points_by_index(original), b = points_by_index(rerun);
  std::set<std::size_t> indices;
  for (const auto* m : {&a, &b})
    for (const auto& [i, p] : *m)
      indices.insert(i);
  std::string out;
  for (std::size_t i : indices) {
    const auto pa = a.find(i), pb = b.find(i);
    if (pa == a.end() || pb == b.end()) {
      out += fmt::format("  point {} ({}): only in the {}\n", i, label_of(pa == a.end() ? *pb->second : *pa->second),
                         pa == a.end() ? "rerun" : "result");
      ++differing;
    } else if (*pa->second != *pb->second) {
      out += point_differences(i, *pa->second, *pb->second);
      ++differing;
    }
  }
  return out;
}

// What differs in the code: the result's versions against this build's.
std::vector<std::string> code_differences(const json& original, const json& rerun)
{
  std::vector<std::string> out;
  const json ma = original.value("manifest", json::object()), mb = rerun.value("manifest", json::object());
  for (const char* key : {"version", "git_commit", "simgrid_version", "dependencies"}) {
    std::vector<std::string> lines;
    object_differences(ma.value(key, json()), mb.value(key, json()), key, lines);
    for (std::string& l : lines)
      out.push_back(std::move(l));
  }
  return out;
}

bool dirty(const json& doc)
{
  const json m = doc.value("manifest", json::object());
  return m.contains("git_commit") && m["git_commit"].is_string() &&
         m["git_commit"].get<std::string>().ends_with("-dirty");
}

std::string likely_cause(const json& original, const json& rerun, const std::vector<std::string>& suspect)
{
  std::string out = "likely cause: ";
  if (const std::vector<std::string> code = code_differences(original, rerun); !code.empty()) {
    out += "another build made the result (result -> this build):\n";
    append_limited(out, code, "  ", 10);
    return out;
  }
  const json ma = original.value("manifest", json::object()), mb = rerun.value("manifest", json::object());
  if (ma.value("config_sha256", json()) != mb.value("config_sha256", json()))
    return out + "manifest.experiment.config does not hash to the result's manifest.config_sha256: the result was "
                 "edited after its run\n";
  if (const json pa = ma.value("platforms", json::object()), pb = mb.value("platforms", json::object()); pa != pb) {
    std::vector<std::string> names;
    for (const auto& [name, profile] : pa.items())
      if (pb.value(name, json()) != profile)
        names.push_back(name);
    return out + fmt::format("this build's profile {} is not the one the result was made with (its values above); "
                             "the points' own costs are in their params\n",
                             fmt::join(names, ", "));
  }
  if (!suspect.empty()) {
    out += "the result was edited after its run: its points' parameters contradict its configuration:\n";
    append_limited(out, suspect, "  ", 10);
    return out;
  }
  out += "the same version, commit, SimGrid and libraries made the result, yet its figures do not follow from its "
         "parameters: the result was edited after its run (a figure, or a parameter together with its "
         "configuration), or the simulation is not deterministic (a bug: please report it with the result)";
  if (dirty(original) || dirty(rerun))
    out += "; the commit is marked -dirty: uncommitted changes may make two builds of one commit differ";
  return out + "\n";
}

} // namespace

RerunSource read_rerun_source(const std::string& path)
{
  ResultFile r = read_result(path);
  check_rerunnable(r.doc, r.path);
  RerunSource s;
  s.file = r.path;
  s.doc = std::move(r.doc);
  s.ex = std::move(r.ex);
  const json& manifest = s.doc["manifest"];
  rebuild_config(s.ex, manifest["experiment"], s.file);
  s.measurements = measurements_of(manifest["experiment"], s.file);
  for (const auto& [name, profile] : manifest["platforms"].items())
    s.profiles.push_back(profile_from_json(name, profile, s.file + ": manifest.platforms." + name));
  s.command_line = manifest.value("command_line", std::string());
  if (manifest.contains("shard") && manifest["shard"].is_string())
    s.shard = parse_shard(manifest["shard"].get<std::string>());
  if (manifest.contains("points_total") && manifest["points_total"].is_number_unsigned())
    s.points_total = manifest["points_total"].get<std::size_t>();
  if (manifest.contains("traced_point") && manifest["traced_point"].is_number_integer())
    s.traced_point = manifest["traced_point"].get<long long>();
  return s;
}

void use_profiles(const RerunSource& source)
{
  for (const PlatformProfile& p : source.profiles)
    if (find_profile(p.name) == nullptr)
      add_profile(p);
}

std::vector<std::string> params_against_config(const RerunSource& source)
{
  std::set<std::string> swept(source.ex.grid_keys.begin(), source.ex.grid_keys.end());
  swept.insert(source.ex.zip_keys.begin(), source.ex.zip_keys.end());
  auto follows_sweep = [&](const std::string& key) {
    const ParamSpec* spec = registry().find(key);
    return swept.count(key) || swept.count("transport") ||
           (spec && std::any_of(spec->derives_from.begin(), spec->derives_from.end(),
                                [&](const std::string& k) { return swept.count(k) != 0; }));
  };
  std::vector<std::string> out;
  for (const Point& p : source.ex.points)
    for (const auto& [key, value] : p.params.all())
      if (source.ex.base.has(key) && !follows_sweep(key) && source.ex.base.get(key) != value)
        out.push_back(fmt::format("point {}: {} is {} in its params, {} in manifest.experiment.config", p.index, key,
                                  value_to_string(value), value_to_string(source.ex.base.get(key))));
  return out;
}

RerunComparison compare_rerun(json original, json rerun, const std::vector<std::string>& suspect)
{
  for (json* j : {&original, &rerun})
    if (j->contains("manifest") && (*j)["manifest"].is_object())
      (*j)["manifest"].erase("wall");
  RerunComparison c;
  if (original.dump(2) == rerun.dump(2)) {
    const std::size_t points = points_by_index(original).size();
    const std::size_t metrics = original.value("units", json::object()).size();
    c.identical = true;
    c.text = fmt::format("identical: {} point{}, {} metric{} (the JSON text, manifest.wall aside)\n", points,
                         points == 1 ? "" : "s", metrics, metrics == 1 ? "" : "s");
    return c;
  }
  std::size_t differing = 0;
  const std::string points = points_text(original, rerun, differing);
  c.text = fmt::format("different: {} of {} point(s) differ\n", differing, points_by_index(original).size()) + points;
  std::vector<std::string> manifest;
  object_differences(original.value("manifest", json::object()), rerun.value("manifest", json::object()), "manifest",
                     manifest);
  for (const auto& [key, v] : original.items())
    if (key != "points" && key != "failed_points" && key != "manifest" && v != rerun.value(key, json()))
      manifest.push_back(key + " differs");
  for (const auto& [key, v] : rerun.items())
    if (!original.contains(key))
      manifest.push_back(key + ": only in the rerun");
  if (!manifest.empty()) {
    c.text += "  besides the points (result -> rerun):\n";
    append_limited(c.text, manifest, "    ", 15);
  }
  c.text += likely_cause(original, rerun, suspect);
  return c;
}

} // namespace vsim::app
