#include "app/report/show.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "app/report/calibration_span.hpp"
#include "app/report/result_file.hpp"
#include "app/report/results.hpp"
#include "app/report/stats.hpp"
#include "app/report/text.hpp"
#include "app/run/output_dir.hpp"
#include "transports/simulate.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace vsim::app {

namespace {

// The metrics to show: those asked for (each must be in the result), else
// the run's report.metrics.
std::vector<std::string> chosen_metrics(const ResultFile& r, const std::vector<std::string>& asked)
{
  const std::set<std::string> present = metric_names(r.results);
  std::vector<std::string> names = asked;
  if (names.size() == 1 && names[0] == "all")
    return {present.begin(), present.end()};
  if (names.empty() && !r.ex.points.empty() && r.ex.points[0].params.has("report.metrics"))
    names = split_commas(r.ex.points[0].params.text("report.metrics"));
  for (const std::string& n : names)
    if (!present.count(n)) {
      std::string list;
      for (const auto& p : present)
        list += (list.empty() ? "" : ", ") + p;
      throw InputError(
          fmt::format("{}: error: --metrics: '{}' is not in this result (allowed: all, {})", r.path, n, list));
    }
  return names;
}

std::string cell(double v)
{
  return fmt::format("{:.4g}", v);
}

std::string label_text(const Point& p)
{
  std::string s;
  for (const auto& [k, v] : p.label)
    s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s.empty() ? "(no swept keys)" : s;
}

// Keys that change no figure: left out of what differs between two points.
bool changes_no_figure(const std::string& key)
{
  return key == "name" || key == "description" || key.starts_with("report.") || key.starts_with("validation.");
}

// What differs between a point of result a and one of result b, as
// "key: A -> B" lines: the code that made them (the manifests' version, git
// commit and SimGrid version), then every resolved parameter that can change
// a figure. Shortened where the cause is named: the costs.* of two platforms
// (their profiles) are counted in one line, as are the keys of a section
// only one side has (another transport's).
std::vector<std::string> differences(const ResultFile& a, const Point& pa, const ResultFile& b, const Point& pb)
{
  std::vector<std::string> out;
  const char* absent = "(absent)";
  auto manifest = [](const ResultFile& r, const char* key) {
    const json m = r.doc.value("manifest", json::object());
    return m.is_object() && m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "(absent)";
  };
  for (const char* key : {"version", "git_commit", "simgrid_version"})
    if (const std::string va = manifest(a, key), vb = manifest(b, key); va != vb)
      out.push_back(fmt::format("{}: {} -> {}", key, va, vb));
  auto text = [](const Params& p, const std::string& key) {
    return p.has(key) ? value_to_string(p.get(key)) : std::string("(absent)");
  };
  auto section = [](const std::string& key) { return key.substr(0, key.find('.')); };
  std::set<std::string> keys, sections_a, sections_b;
  for (const auto& [key, v] : pa.params.all())
    keys.insert(key), sections_a.insert(section(key));
  for (const auto& [key, v] : pb.params.all())
    keys.insert(key), sections_b.insert(section(key));
  const bool platforms_differ = text(pa.params, "platform") != text(pb.params, "platform");
  std::map<std::string, std::size_t> folded; // "costs" or a one-sided section -> keys that differ
  for (const std::string& key : keys) {
    if (changes_no_figure(key))
      continue;
    const std::string va = text(pa.params, key), vb = text(pb.params, key);
    if (va == vb)
      continue;
    const std::string sec = section(key);
    if (sec != key && (!sections_a.count(sec) || !sections_b.count(sec) || (platforms_differ && sec == "costs")))
      ++folded[sec];
    else
      out.push_back(fmt::format("{}: {} -> {}", key, va, vb));
  }
  for (const auto& [sec, n] : folded) {
    if (!sections_b.count(sec))
      out.push_back(fmt::format("{}.*: {} key(s) -> {}", sec, n, absent));
    else if (!sections_a.count(sec))
      out.push_back(fmt::format("{}.*: {} -> {} key(s)", sec, absent, n));
    else
      out.push_back(
          fmt::format("{}.*: {} value(s) differ (the platforms' profiles: `vsocksim describe platforms`)", sec, n));
  }
  return out;
}

// The header of a pair of points of two results: what differs, or that
// nothing does.
std::string differences_text(const std::vector<std::string>& lines)
{
  if (lines.empty())
    return "same parameters, same code\n";
  std::string out = "what differs (A -> B):\n";
  for (const std::string& l : lines)
    out += "  " + l + "\n";
  return out;
}

// A change this small (relative) is never called beyond the spread.
constexpr double kSmallChange = 0.005;

// The model's own error on an effect the run recorded for point i
// (points[i].ensemble.model_error.sigma), 0 when none.
double model_error_of(const ResultFile& r, std::size_t i)
{
  const auto& points = r.doc.value("points", nlohmann::ordered_json::array());
  if (!points.is_array() || i >= points.size() || !points[i].is_object())
    return 0;
  const auto& e = points[i].value("ensemble", nlohmann::ordered_json::object());
  if (!e.is_object() || !e.contains("model_error") || !e["model_error"].is_object())
    return 0;
  const auto& sigma = e["model_error"].value("sigma", nlohmann::ordered_json());
  return sigma.is_number() && sigma.get<double>() > 0 ? sigma.get<double>() : 0;
}

// The caveats of the profiles the results ran on (their manifests'
// platforms.NAME.caveats), each profile once, in name order.
std::string caveats_text(const std::vector<const ResultFile*>& files)
{
  std::map<std::string, std::vector<std::string>> by_name;
  for (const ResultFile* f : files) {
    const auto& manifest = f->doc.value("manifest", nlohmann::ordered_json::object());
    const auto& platforms = manifest.is_object() ? manifest.value("platforms", nlohmann::ordered_json::object())
                                                 : nlohmann::ordered_json::object();
    if (!platforms.is_object())
      continue;
    for (const auto& [name, prof] : platforms.items()) {
      if (!prof.is_object() || !prof.contains("caveats") || !prof["caveats"].is_array())
        continue;
      std::vector<std::string> items;
      for (const auto& c : prof["caveats"])
        if (c.is_string())
          items.push_back(c.get<std::string>());
      by_name[name] = items;
    }
  }
  std::string out;
  for (const auto& [name, items] : by_name)
    if (const std::string note = profile_caveat_note(name, items); !note.empty())
      out += "\n" + note;
  return out;
}

// One pair of points, metric by metric; `header` (what differs) follows the
// two points' names.
std::string compare_pair(const std::string& title_a, const Point& pa, const PointResult& ra, const std::string& title_b,
                         const Point& pb, const PointResult& rb, const std::vector<std::string>& metrics,
                         double model_error, const std::string& header = "")
{
  auto failed = [](const PointResult& r) { return r.failed.empty() ? "" : " failed: " + r.failed; };
  std::string out = fmt::format("A: {} point {} ({}){}\nB: {} point {} ({}){}\n", title_a, pa.index, label_text(pa),
                                failed(ra), title_b, pb.index, label_text(pb), failed(rb));
  out += header;
  std::vector<std::vector<std::string>> rows{
      {"metric", "unit", "A mean", "B mean", "change", "A spread", "B spread", "beyond the spread"}};
  auto values = [](const PointResult& r, const std::string& m) {
    std::vector<double> v;
    for (const auto& it : r.iterations)
      if (auto f = it.find(m); f != it.end())
        v.push_back(f->second);
    return v;
  };
  // sim.ensemble on both sides, the same ensemble: each change also member
  // by member (issue 50), and with the model's own error on top where the
  // profile tells it (`model_error`: the results' point.ensemble.model_error).
  const std::vector<double> weights = member_weights(ra);
  const bool ensemble = !weights.empty() && weights == member_weights(rb);
  const double discrepancy = ensemble ? model_error : 0;
  if (ensemble) {
    rows.front().push_back("ensemble change p50 [p10, p90]");
    if (discrepancy > 0)
      rows.front().push_back("with model error");
  }
  auto ensemble_cells = [&](const std::string& m) {
    std::vector<std::string> cells;
    if (!ensemble)
      return cells;
    const MemberValues ratios = member_ratios(member_values(ra, m), member_values(rb, m));
    const auto s = ratios.empty() ? std::nullopt : ensemble_spread(ratios, weights);
    auto pct = [](double r) { return fmt::format("{:+.1f}%", (r - 1) * 100); };
    cells.push_back(s ? fmt::format("{} [{}, {}]", pct(s->p50), pct(s->p10), pct(s->p90)) : "-");
    if (discrepancy > 0) {
      const auto e = s ? spread_with_error(ratios, weights, discrepancy) : std::nullopt;
      cells.push_back(e ? fmt::format("[{}, {}]", pct(e->p10), pct(e->p90)) : "-");
    }
    return cells;
  };
  bool single = false;
  std::size_t small_disjoint = 0;
  for (const std::string& m : metrics) {
    const auto va = values(ra, m), vb = values(rb, m);
    if (va.empty() || vb.empty()) {
      rows.push_back({m, metric_unit(m), va.empty() ? "-" : cell(summarize(va).mean),
                      vb.empty() ? "-" : cell(summarize(vb).mean), "-", "-", "-", "-"});
      rows.back().resize(rows.front().size(), "-");
      continue;
    }
    const Stats a = summarize(va), b = summarize(vb);
    single = single || va.size() < 2 || vb.size() < 2;
    const std::string change = a.mean != 0 ? fmt::format("{:+.2f}%", (b.mean / a.mean - 1) * 100) : "-";
    auto spread = [](const Stats& s) {
      return s.mean != 0 ? fmt::format("{:.2f}%", (s.max - s.min) / std::abs(s.mean) * 100) : "-";
    };
    // Beyond the spread: the ranges over the iterations do not overlap,
    // judged only where both sides have a spread (two iterations or more),
    // and never for a change under kSmallChange (issue 51, item 8).
    const bool spreads = va.size() >= 2 && vb.size() >= 2;
    const bool small = a.mean == 0 || std::abs(b.mean / a.mean - 1) < kSmallChange;
    const bool disjoint = b.min > a.max || b.max < a.min;
    const bool beyond = spreads && !small && disjoint;
    small_disjoint += spreads && small && disjoint ? 1 : 0;
    rows.push_back({m, metric_unit(m), cell(a.mean), cell(b.mean), change, spread(a), spread(b),
                    !spreads ? "-"
                    : beyond ? "yes"
                             : "no"});
    for (std::string& c : ensemble_cells(m))
      rows.back().push_back(std::move(c));
  }
  out += render_columns(rows);
  if (ensemble)
    out += fmt::format("(ensemble change: B over A within each of the {} members, their p50 [p10, p90]{})\n",
                       weights.size(),
                       discrepancy > 0 ? fmt::format("; with model error: the same with the profile's own error on an "
                                                     "effect on top (sigma {:.1f}% in log ratio, docs/calibration.md)",
                                                     100 * discrepancy)
                                       : "");
  if (single)
    out += "(a point with one iteration has no spread to compare with: \"-\")\n";
  if (small_disjoint > 0)
    out += fmt::format("(a change under {:g}% is never called beyond the spread, though the ranges do not overlap)\n",
                       kSmallChange * 100);
  return out;
}

} // namespace

std::size_t terminal_columns()
{
  if (const char* env = std::getenv("COLUMNS")) {
    const std::string text = env;
    if (!text.empty() && text.size() < 7 && text.find_first_not_of("0123456789") == std::string::npos &&
        std::stoul(text) > 0)
      return std::stoul(text);
  }
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return 100;
}

std::string show_result(const std::string& path, const std::vector<std::string>& metrics, const std::string& format,
                        const std::string& stat, std::size_t width)
{
  ResultFile r = read_result(path);
  if (!stat.empty())
    for (Point& p : r.ex.points)
      p.params.set("report.stat", stat);
  const std::vector<std::string> names = chosen_metrics(r, metrics);
  if (format == "table") {
    // The effective values the result recorded (its parameters may come
    // from another version).
    std::vector<std::vector<Effective>> eff;
    for (const json& recorded : r.effective) {
      std::vector<Effective> e;
      for (const auto& [k, v] : recorded.items())
        if (v.is_number())
          e.push_back(Effective{k, v.get<double>(), "", "", ""});
      eff.push_back(std::move(e));
    }
    const bool grouped = metrics == std::vector<std::string>{"all"} || metrics.size() > kGroupedAbove;
    // `all`: every metric, but the CPUs' and threads' that are 0 everywhere (to_grouped_table says which)
    const std::vector<std::string> shown =
        metrics == std::vector<std::string>{"all"} ? std::vector<std::string>{} : names;
    return (grouped ? to_grouped_table(r.ex, r.results, shown, width) : to_table(r.ex, r.results, names)) +
           table_notes(r.ex, eff) + calibration_notes(r.ex.points, r.results);
  }
  // JSON and CSV: the result with only the chosen metrics (all when none
  // were asked for).
  std::vector<PointResult> kept = r.results;
  if (!metrics.empty())
    for (auto& pr : kept)
      for (auto& it : pr.iterations)
        for (auto e = it.begin(); e != it.end();)
          e = std::find(names.begin(), names.end(), e->first) == names.end() ? it.erase(e) : std::next(e);
  if (format == "csv")
    return to_csv(r.ex, kept);
  json doc = r.doc;
  std::map<std::size_t, const PointResult*> by_index; // the failed points are not in doc["points"]
  for (const PointResult& pr : kept)
    by_index.emplace(pr.index, &pr);
  if (!metrics.empty())
    for (std::size_t i = 0; i < doc["points"].size(); ++i) {
      json& p = doc["points"][i];
      for (const char* section : {"metrics"})
        if (p.contains(section)) {
          json keep = json::object();
          for (const auto& [k, v] : p[section].items())
            if (std::find(names.begin(), names.end(), k) != names.end())
              keep[k] = v;
          p[section] = std::move(keep);
        }
      json its = json::array();
      for (const Metrics& it : by_index.at(p["index"].get<std::size_t>())->iterations) {
        json one = json::object();
        for (const auto& [k, v] : it)
          one[k] = v;
        its.push_back(std::move(one));
      }
      p["iterations"] = std::move(its);
    }
  return doc.dump(2) + "\n";
}

std::string compare_results(const std::string& a, const std::string& b,
                            std::optional<std::pair<std::size_t, std::size_t>> points,
                            const std::vector<std::string>& metrics)
{
  const ResultFile ra = read_result(a);
  if (points) {
    if (!b.empty())
      throw InputError("compare: error: --points compares two points of one result; give one result, not two");
    const std::size_t n = ra.ex.points.size();
    for (std::size_t k : {points->first, points->second})
      if (k >= n)
        throw InputError(
            fmt::format("{}: error: --points: point {} does not exist (allowed: 0 to {})", ra.path, k, n - 1));
    return compare_pair(ra.ex.name, ra.ex.points[points->first], ra.results[points->first], ra.ex.name,
                        ra.ex.points[points->second], ra.results[points->second], chosen_metrics(ra, metrics),
                        std::max(model_error_of(ra, points->first), model_error_of(ra, points->second))) +
           caveats_text({&ra});
  }
  if (b.empty())
    throw InputError("compare: error: give two results, or one result and --points I,J");
  const ResultFile rb = read_result(b);
  const std::vector<std::string> names = chosen_metrics(ra, metrics);
  std::string out;
  if (ra.ex.points.size() == 1 && rb.ex.points.size() == 1)
    return compare_pair(ra.path, ra.ex.points[0], ra.results[0], rb.path, rb.ex.points[0], rb.results[0], names,
                        std::max(model_error_of(ra, 0), model_error_of(rb, 0)),
                        differences_text(differences(ra, ra.ex.points[0], rb, rb.ex.points[0]))) +
           caveats_text({&ra, &rb});
  // Points paired by their swept values.
  std::size_t paired = 0;
  for (std::size_t i = 0; i < ra.ex.points.size(); ++i)
    for (std::size_t j = 0; j < rb.ex.points.size(); ++j)
      if (ra.ex.points[i].label == rb.ex.points[j].label) {
        out += (paired++ ? "\n" : "") +
               compare_pair(ra.path, ra.ex.points[i], ra.results[i], rb.path, rb.ex.points[j], rb.results[j], names,
                            std::max(model_error_of(ra, i), model_error_of(rb, j)),
                            differences_text(differences(ra, ra.ex.points[i], rb, rb.ex.points[j])));
        break;
      }
  if (paired == 0)
    throw InputError(fmt::format("compare: error: no point of {} has the swept values of a point of {} (allowed: "
                                 "results of the same sweep, or one result with --points I,J)",
                                 ra.path, rb.path));
  if (paired < ra.ex.points.size())
    out += fmt::format("\n{} point(s) of {} have no match in {}\n", ra.ex.points.size() - paired, ra.path, rb.path);
  return out + caveats_text({&ra, &rb});
}

} // namespace vsim::app
