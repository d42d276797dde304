#include "app/search/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pagmo/utils/hypervolume.hpp>

#include "app/experiment/describe.hpp"
#include "app/report/plot.hpp"
#include "app/report/results.hpp"
#include "app/report/text.hpp"

namespace vsim::app {

namespace {

using json = nlohmann::ordered_json;

// A figure in a table: whole numbers from 100 up (299008, not 2.99e+05),
// else `digits` significant digits.
std::string table_number(double v, int digits)
{
  if (std::isfinite(v) && std::fabs(v) >= 100)
    return fmt::format("{:.0f}", v);
  return fmt::format("{:.{}g}", v, digits);
}

// "1523 ± 12": four significant digits of the mean, two of the interval's
// half-width.
std::string with_interval(const ObjectiveValue& v)
{
  if (v.half_width == 0)
    return table_number(v.mean, 4);
  return fmt::format("{} ± {}", table_number(v.mean, 4), table_number(v.half_width, 2));
}

std::string objective_title(const SearchObjective& o)
{
  return fmt::format("{} {}", o.maximise ? "max" : "min", o.text);
}

// "NSGA-II", "MOEA/D", "exhaustive" as the reports name the methods.
std::string method_text(const SearchPlan& p)
{
  const std::string name = p.chosen == "nsga2"   ? "NSGA-II (pagmo2)"
                           : p.chosen == "moead" ? "MOEA/D-DE (pagmo2)"
                                                 : "exhaustive";
  return p.method == "auto" ? name + ", chosen by method auto" : name;
}

// "+3 (points 9, 11, 13)", at most eight indices named.
std::string points_text(const std::vector<std::size_t>& points)
{
  std::string s;
  for (std::size_t i = 0; i < points.size() && i < 8; ++i)
    s += (i ? ", " : "") + std::to_string(points[i]);
  if (points.size() > 8)
    s += ", ...";
  return fmt::format("+{} (point{} {})", points.size(), points.size() == 1 ? "" : "s", s);
}

json objective_json(const ObjectiveValue& v)
{
  return json{{"mean", v.mean}, {"half_width", v.half_width}};
}

// The prefix every knob's key shares up to a dot ("virtio_vsock."), "" when
// they share none: the front's columns leave it out.
std::string common_prefix(const std::vector<SearchKnob>& space)
{
  if (space.empty())
    return "";
  std::string prefix = space.front().key.substr(0, space.front().key.find('.') + 1);
  if (prefix.empty() || prefix.back() != '.')
    return "";
  for (const SearchKnob& k : space)
    if (!k.key.starts_with(prefix))
      return "";
  return prefix;
}

// Lines of text in the report are wrapped at this width.
constexpr std::size_t kTextWidth = 100;

// How the constraints cut the space (issue 51, item 4): how many evaluated
// points meet them, and per knob the values some feasible point has against
// the values evaluated and the values in the space. "" without constraints.
std::string constraints_text(const SearchResult& r, const std::string& prefix)
{
  const SearchSpec& s = *r.ex.search;
  if (s.constraints.empty())
    return "";
  std::vector<std::string> texts;
  for (const SearchConstraint& c : s.constraints)
    texts.push_back(c.text);
  std::size_t feasible = 0, failed = 0;
  for (const Evaluated& e : r.evaluated) {
    feasible += e.feasible;
    failed += !e.result.failed.empty();
  }
  std::string out =
      wrap(fmt::format("constraints {}: {} of the {} point(s) evaluated meet them{}", fmt::join(texts, " and "),
                       feasible, r.evaluated.size(), failed ? fmt::format(" ({} failed to run)", failed) : ""),
           kTextWidth) +
      "\n";
  const bool before = !r.plan.can_meet.empty();
  if (before)
    out += wrap(fmt::format("values that can meet them: of the {} combination(s) {} before simulating, the values "
                            "some combination meeting every constraint checkable then has",
                            r.plan.resolved_before,
                            r.plan.enumerated ? "(the whole space) resolved" : "drawn and resolved"),
                kTextWidth) +
           "\n";
  std::vector<std::vector<std::string>> rows = {
      {"knob", "values that can meet them", "values met them when run", "values evaluated", "values in the space"}};
  if (!before)
    rows.front().erase(rows.front().begin() + 1);
  // "all 7", "2 (64, 128)", or by the values left out when they are fewer:
  // "6 (not 1MiB)".
  auto values_text = [](const SearchKnob& k, const std::vector<bool>& which) {
    std::vector<std::string> in, out;
    for (std::size_t v = 0; v < k.values.size(); ++v)
      (v < which.size() && which[v] ? in : out).push_back(k.values[v].raw);
    if (out.empty())
      return fmt::format("all {}", in.size());
    if (out.size() < in.size())
      return fmt::format("{} (not {})", in.size(), fmt::join(out, ", "));
    return fmt::format("{} ({})", in.size(), fmt::join(in, ", "));
  };
  for (std::size_t j = 0; j < s.space.size(); ++j) {
    const SearchKnob& k = s.space[j];
    std::vector<bool> seen(k.values.size(), false), ok(k.values.size(), false);
    for (const Evaluated& e : r.evaluated)
      if (j < e.choice.size() && e.choice[j] < k.values.size()) {
        seen[e.choice[j]] = true;
        ok[e.choice[j]] = ok[e.choice[j]] || e.feasible;
      }
    rows.push_back({k.key.substr(prefix.size()), values_text(k, ok),
                    std::to_string(std::count(seen.begin(), seen.end(), true)), std::to_string(k.values.size())});
    if (before)
      rows.back().insert(rows.back().begin() + 1, values_text(k, r.plan.can_meet[j]));
  }
  return out + render_columns(rows);
}

// An objective's column title: "max throughput_MBps", or "objective 2 (min)"
// for a long expression (the legend above the table gives it).
constexpr std::size_t kLongObjective = 28;
std::string objective_header(const SearchObjective& o, std::size_t j)
{
  return o.text.size() <= kLongObjective ? objective_title(o)
                                         : fmt::format("objective {} ({})", j + 1, o.maximise ? "max" : "min");
}

// The front as a table that fits a terminal (issue 51, item 4): one row per
// front point (points with exactly the same figures folded into one), the
// knobs whose value differs between the rows as columns (the others in one
// line above), each objective, the rows it is tied with.
std::string front_table(const SearchResult& r, const std::string& prefix)
{
  const SearchSpec& s = *r.ex.search;
  std::vector<std::size_t> shown;                       // positions in r.front of the rows
  std::map<std::size_t, std::vector<std::size_t>> same; // shown position -> the other points' indices
  for (std::size_t a = 0; a < r.front.size(); ++a) {
    const Evaluated& e = r.evaluated[r.front[a]];
    auto twin = std::find_if(shown.begin(), shown.end(), [&](std::size_t b) {
      const Evaluated& o = r.evaluated[r.front[b]];
      for (std::size_t j = 0; j < e.objectives.size(); ++j)
        if (o.objectives[j].mean != e.objectives[j].mean)
          return false;
      return true;
    });
    if (twin == shown.end())
      shown.push_back(a);
    else
      same[*twin].push_back(e.point.index);
  }
  auto value_of = [&](std::size_t a, std::size_t j) -> std::string {
    const Evaluated& e = r.evaluated[r.front[a]];
    return j < e.choice.size() && e.choice[j] < s.space[j].values.size() ? s.space[j].values[e.choice[j]].raw : "?";
  };
  std::vector<std::size_t> varying;
  std::vector<std::string> fixed;
  for (std::size_t j = 0; j < s.space.size(); ++j) {
    bool differs = false;
    for (std::size_t a : shown)
      differs = differs || value_of(a, j) != value_of(shown.front(), j);
    if (differs)
      varying.push_back(j);
    else
      fixed.push_back(fmt::format("{}={}", s.space[j].key.substr(prefix.size()), value_of(shown.front(), j)));
  }
  std::string out;
  if (!fixed.empty())
    out += wrap(fmt::format("the same on every row of the front: {}", fmt::join(fixed, ", ")), kTextWidth) + "\n";
  // Row numbers of the shown rows; ties named by row.
  std::map<std::size_t, std::size_t> row_of; // position in r.front -> row number (1-based)
  for (std::size_t i = 0; i < shown.size(); ++i)
    row_of[shown[i]] = i + 1;
  std::vector<std::string> tie_cells;
  bool any_tie = false, any_same = false;
  for (std::size_t a : shown) {
    std::vector<std::string> rows_tied;
    for (std::size_t b : r.ties[a])
      if (row_of.count(b))
        rows_tied.push_back(std::to_string(row_of[b]));
    any_tie = any_tie || !rows_tied.empty();
    any_same = any_same || same.count(a);
    tie_cells.push_back(fmt::format("{}", fmt::join(rows_tied, ",")));
  }
  std::vector<std::string> head = {"row", "point"};
  for (std::size_t j : varying)
    head.push_back(s.space[j].key.substr(prefix.size()));
  for (std::size_t j = 0; j < s.objectives.size(); ++j)
    head.push_back(objective_header(s.objectives[j], j));
  if (any_tie)
    head.push_back("tied with rows");
  if (any_same)
    head.push_back("same figures");
  std::vector<std::vector<std::string>> rows = {head};
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const std::size_t a = shown[i];
    const Evaluated& e = r.evaluated[r.front[a]];
    std::vector<std::string> row = {std::to_string(i + 1), std::to_string(e.point.index)};
    for (std::size_t j : varying)
      row.push_back(value_of(a, j));
    for (const ObjectiveValue& v : e.objectives)
      row.push_back(with_interval(v));
    if (any_tie)
      row.push_back(tie_cells[i]);
    if (any_same)
      row.push_back(same.count(a) ? points_text(same[a]) : "");
    rows.push_back(row);
  }
  out += render_columns(rows);
  std::string note = "(each objective: mean ± the half-width of its 95% interval over the iterations";
  if (s.rank == "median")
    note = "(each objective: the ensemble members' weighted median (search.rank: median) ± the half-width of the "
           "central member's 95% interval over the iterations";
  else if (s.rank == "pessimistic")
    note = "(each objective: the ensemble members' worse decile, the p10 of a max and the p90 of a min "
           "(search.rank: pessimistic), ± the half-width of the central member's 95% interval over the iterations";
  if (any_tie)
    note += "; tied: two rows whose intervals overlap in every objective, so that these iterations cannot tell which "
            "is better (more iterations might)";
  if (any_same)
    note += "; same figures: other front points whose objectives are exactly this row's (their knobs differ only "
            "where it changes nothing), folded into it";
  return out + wrap(note + ")", kTextWidth) + "\n";
}

} // namespace

double hypervolume(const std::vector<std::vector<double>>& minimised, const std::vector<double>& reference)
{
  std::vector<pagmo::vector_double> inside;
  for (const auto& p : minimised) {
    bool below = true;
    for (std::size_t m = 0; m < p.size(); ++m)
      below = below && p[m] < reference[m];
    if (below)
      inside.push_back(p);
  }
  if (inside.empty())
    return 0;
  return pagmo::hypervolume(inside, true).compute(reference);
}

std::string search_table(const SearchResult& r)
{
  const SearchSpec& s = *r.ex.search;
  std::string out =
      fmt::format("Pareto front of {} point(s): {} knob(s), {} point(s) evaluated ({} simulated, {} reused) of a "
                  "budget of {}\nmethod: {}, seed {}\n",
                  r.front.size(), s.space.size(), r.evaluated.size(), r.simulated, r.reused, r.plan.budget,
                  method_text(r.plan), r.plan.seed);
  const std::string prefix = common_prefix(s.space);
  if (!prefix.empty())
    out += fmt::format("knobs: {}* (the prefix left out below)\n", prefix);
  bool long_objective = false;
  for (const SearchObjective& o : s.objectives)
    long_objective = long_objective || o.text.size() > kLongObjective;
  if (long_objective)
    for (std::size_t j = 0; j < s.objectives.size(); ++j)
      out += fmt::format("objective {}: {}\n", j + 1, objective_title(s.objectives[j]));
  out += constraints_text(r, prefix);
  if (r.front.empty()) {
    out += "no point evaluated meets every constraint\n";
  } else {
    out += "\n" + front_table(r, prefix);
  }
  out += "\nSensitivity (from the feasible points evaluated): how far each knob moves each objective's mean\n";
  std::vector<std::vector<std::string>> rows = {{"knob", "objective", "values seen", "moves by", "share of variance"}};
  for (const SensitivityRow& row : r.sensitivity)
    rows.push_back({row.knob.substr(row.knob.starts_with(prefix) ? prefix.size() : 0),
                    objective_header(s.objectives[row.objective], row.objective),
                    fmt::format("{}/{}", row.values_seen, row.values), table_number(row.moves, 3),
                    fmt::format("{:.0f}%", row.share * 100)});
  out += render_columns(rows);
  return out;
}

std::string search_csv(const SearchResult& r)
{
  const SearchSpec& s = *r.ex.search;
  std::string out = "rank,point";
  for (const SearchKnob& k : s.space)
    out += "," + k.key;
  for (std::size_t j = 0; j < s.objectives.size(); ++j)
    out += fmt::format(",objective{0}_mean,objective{0}_half_width", j + 1);
  out += ",tied_with\n";
  for (std::size_t a = 0; a < r.front.size(); ++a) {
    const Evaluated& e = r.evaluated[r.front[a]];
    out += fmt::format("{},{}", a + 1, e.point.index);
    for (const auto& [key, value] : e.point.label)
      out += "," + value;
    for (const ObjectiveValue& v : e.objectives)
      out += fmt::format(",{},{}", v.mean, v.half_width);
    std::string ties;
    for (std::size_t b : r.ties[a])
      ties += (ties.empty() ? "" : " ") + std::to_string(b + 1);
    out += "," + ties + "\n";
  }
  return out;
}

json search_json(const SearchResult& r)
{
  const SearchSpec& s = *r.ex.search;
  json out = json::object();
  out["experiment"] = r.ex.name;
  json facts = json::object();
  facts["method"] = r.plan.chosen;
  facts["method_asked"] = r.plan.method;
  facts["seed"] = r.plan.seed;
  facts["budget"] = r.plan.budget;
  facts["evaluations"] = r.evaluated.size();
  facts["simulated"] = r.simulated;
  facts["reused"] = r.reused;
  facts["proposals"] = r.proposals;
  facts["generations"] = r.generations;
  facts["combinations"] = r.plan.combinations;
  json knobs = json::array();
  for (const SearchKnob& k : s.space) {
    json values = json::array();
    for (const load::Given& g : k.values)
      values.push_back(g.raw);
    knobs.push_back({{"key", k.key}, {"values", values}});
  }
  facts["space"] = knobs;
  json objectives = json::array();
  for (const SearchObjective& o : s.objectives)
    objectives.push_back({{"sense", o.maximise ? "max" : "min"}, {"expression", o.text}});
  facts["objectives"] = objectives;
  facts["rank"] = s.rank;
  json constraints = json::array();
  for (const SearchConstraint& c : s.constraints)
    constraints.push_back(c.text);
  facts["constraints"] = constraints;
  json evaluated = json::array();
  for (const Evaluated& e : r.evaluated) {
    json one = {{"index", e.point.index}, {"feasible", e.feasible}, {"reused", e.reused}};
    json obj = json::array();
    for (const ObjectiveValue& v : e.objectives)
      obj.push_back(objective_json(v));
    one["objectives"] = obj;
    one["constraints"] = e.constraints;
    if (!e.result.failed.empty())
      one["failed"] = e.result.failed;
    evaluated.push_back(std::move(one));
  }
  facts["evaluated"] = evaluated;
  json sensitivity = json::array();
  for (const SensitivityRow& row : r.sensitivity)
    sensitivity.push_back({{"knob", row.knob},
                           {"objective", s.objectives[row.objective].text},
                           {"values_seen", row.values_seen},
                           {"moves", row.moves},
                           {"share", row.share}});
  facts["sensitivity"] = sensitivity;
  out["search"] = facts;
  // The front's points as the result has them (run's JSON point form), each
  // with its objectives and ties.
  std::map<std::size_t, const json*> by_index;
  for (const json& p : r.result.at("points"))
    by_index[p.at("index").get<std::size_t>()] = &p;
  json front = json::array();
  for (std::size_t a = 0; a < r.front.size(); ++a) {
    const Evaluated& e = r.evaluated[r.front[a]];
    json p = *by_index.at(e.point.index);
    json obj = json::array();
    for (const ObjectiveValue& v : e.objectives)
      obj.push_back(objective_json(v));
    p["objectives"] = obj;
    json ties = json::array();
    for (std::size_t b : r.ties[a])
      ties.push_back(r.evaluated[r.front[b]].point.index);
    p["tied_with"] = ties;
    front.push_back(std::move(p));
  }
  out["front"] = front;
  out["units"] = r.result.at("units");
  out["manifest"] = r.result.at("manifest");
  return out;
}

namespace search {

std::string write_figures(const SearchResult& r, const std::string& dir)
{
  const SearchSpec& s = *r.ex.search;
  std::vector<ObjectiveSpaceFigure> figures;
  auto bounds = [&](const SearchObjective& o) {
    std::vector<double> out;
    for (const SearchConstraint& c : s.constraints)
      if (c.expr_text == o.text)
        out.push_back(c.bound);
    return out;
  };
  // One objective: it against the order of evaluation; else each pair.
  const std::size_t n = s.objectives.size();
  for (std::size_t i = 0; i < std::max<std::size_t>(n, 2) - 1; ++i)
    for (std::size_t j = i + 1; j < std::max<std::size_t>(n, 2); ++j) {
      ObjectiveSpaceFigure f;
      f.stem = n <= 2 ? "search-objectives" : fmt::format("search-objectives-{}-{}", i + 1, j + 1);
      f.title = fmt::format("{}: the objective space ({} points evaluated, {} on the front)", r.ex.name,
                            r.evaluated.size(), r.front.size());
      auto x = [&](const Evaluated& e) { return n == 1 ? static_cast<double>(e.point.index) : e.objectives[i].mean; };
      auto y = [&](const Evaluated& e) { return n == 1 ? e.objectives[0].mean : e.objectives[j].mean; };
      f.x_label = n == 1 ? "point (order of evaluation)" : objective_title(s.objectives[i]);
      f.y_label = n == 1 ? objective_title(s.objectives[0]) : objective_title(s.objectives[j]);
      if (n > 1)
        f.x_bounds = bounds(s.objectives[i]);
      f.y_bounds = bounds(s.objectives[n == 1 ? 0 : j]);
      for (const Evaluated& e : r.evaluated)
        if (!e.objectives.empty())
          (e.feasible ? f.feasible : f.infeasible).emplace_back(x(e), y(e));
      for (std::size_t at : r.front)
        f.front.emplace_back(x(r.evaluated[at]), y(r.evaluated[at]));
      if (n > 2) // the front along this pair's first objective
        std::sort(f.front.begin(), f.front.end());
      figures.push_back(std::move(f));
    }
  // The figures of an earlier search in DIR (another number of objectives
  // names them otherwise) go first.
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().starts_with("search-objectives"))
      stale.push_back(e.path());
  for (const auto& p : stale)
    std::filesystem::remove(p, ec);
  try {
    plot_objective_space(figures, dir, "search-objectives.gp");
  } catch (const std::runtime_error& e) {
    return fmt::format("search: warning: the objective-space figure is not drawn: {}", e.what());
  }
  return "";
}

} // namespace search

} // namespace vsim::app
