#include "app/experiment/profile_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "app/experiment/describe.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/origin.hpp"
#include "app/experiment/scalar.hpp"
#include "app/experiment/text.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

namespace {

using namespace load;

const std::vector<std::string>& top_keys()
{
  static const std::vector<std::string> k = {"name",  "description", "transport", "base",    "hardware",
                                             "costs", "calibrated",  "fit",       "ensemble"};
  return k;
}

const std::vector<std::string>& cost_keys()
{
  static const std::vector<std::string> k = {"value", "source", "note", "reason"};
  return k;
}

const std::vector<std::string>& fit_keys()
{
  static const std::vector<std::string> k = {
      "experiment", "measurements", "optimiser",          "fitted",          "not_fitted",           "hold_out",
      "folds",      "evaluations",  "mae_before_percent", "mae_fit_percent", "mae_held_out_percent", "mae_cv_percent",
      "rows"};
  return k;
}

const std::vector<std::string>& fit_row_keys()
{
  static const std::vector<std::string> k = {"keys", "metric", "role", "measured", "before", "after"};
  return k;
}

// The quantities a calibrated span may give (app/report/calibration_span.hpp).
const std::vector<std::string>& span_quantities()
{
  static const std::vector<std::string> k = {"workload.message_size",
                                             "workload.connections",
                                             "effective.ring_bytes_guest_to_host",
                                             "effective.ring_bytes_host_to_guest",
                                             "effective.buf_alloc_bytes",
                                             "throughput_MBps"};
  return k;
}

bool contains(const std::vector<std::string>& words, const std::string& w)
{
  return std::find(words.begin(), words.end(), w) != words.end();
}

// A profile name is a word that cannot be mistaken for a file's path.
bool valid_name(const std::string& name)
{
  if (name.empty() || name.size() > 64)
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return !is_profile_path(name);
}

class ProfileReader {
public:
  ProfileReader(const std::string& text, const std::string& file, const BaseLookup& find_base)
      : text_(text), file_(file), find_base_(find_base)
  {
    declare_cost_params(costs_reg_);
  }

  PlatformProfile read()
  {
    const YAML::Node root = read_document(text_, file_, "a map of profile keys: " + join(top_keys()));
    std::map<std::string, std::pair<Origin, YAML::Node>> at; // top-level key -> (key origin, value)
    for_each_pair(root, "", [&](const std::string& path, const Origin& key_at, const YAML::Node& v) {
      if (!contains(top_keys(), path))
        fail(key_at, path, with_allowed("unknown key", join(top_keys())));
      at.emplace(path, std::make_pair(key_at, v));
    });
    for (const char* required : {"name", "transport", "costs"})
      if (!at.count(required))
        fail(in_file(file_, 1, 1), required, "missing (a profile file needs name, transport and costs)");
    read_head(at);
    if (auto it = at.find("base"); it != at.end())
      take_base(it->second.first, it->second.second);
    if (auto it = at.find("hardware"); it != at.end())
      read_hardware(it->second.first, it->second.second);
    read_costs(at.at("costs").first, at.at("costs").second);
    if (auto it = at.find("calibrated"); it != at.end())
      read_span(it->second.first, it->second.second);
    if (auto it = at.find("fit"); it != at.end())
      read_fit(it->second.first, it->second.second);
    if (auto it = at.find("ensemble"); it != at.end())
      read_ensemble(it->second.first, it->second.second);
    return p_;
  }

private:
  Origin mark(const YAML::Mark& m) const
  {
    return m.is_null() ? in_file(file_) : in_file(file_, m.line + 1, m.column + 1);
  }
  Origin mark_of(const YAML::Node& v, const Origin& key_at) const
  {
    return v.IsNull() || v.Mark().is_null() ? key_at : mark(v.Mark());
  }

  // Each pair of a map, keys as words; the second of two equal keys is an error.
  template <class F> void for_each_pair(const YAML::Node& map, const std::string& prefix, F&& f) const
  {
    std::map<std::string, Origin> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first;
      const Origin key_at = mark(k.Mark());
      if (!k.IsScalar() || k.Scalar().empty())
        fail(key_at, prefix, fmt::format("keys must be words, got {}", k.IsScalar() ? "an empty key" : node_kind(k)));
      const std::string path = prefix.empty() ? k.Scalar() : prefix + "." + k.Scalar();
      auto [first, fresh] = seen.emplace(k.Scalar(), key_at);
      if (!fresh)
        fail(
            key_at, path,
            fmt::format("duplicate key (first given at line {}, column {})", first->second.line, first->second.column));
      f(path, key_at, YAML::Node(it->second));
    }
  }

  void expect_map(const YAML::Node& v, const std::string& path, const Origin& key_at, const std::string& allowed) const
  {
    if (!v.IsMap())
      fail(mark_of(v, key_at), path,
           with_allowed(fmt::format("expected a map of keys, got {}", node_kind(v)), allowed));
  }

  std::string text_of(const YAML::Node& v, const std::string& path, const Origin& key_at) const
  {
    if (!v.IsScalar())
      fail(mark_of(v, key_at), path, fmt::format("expected text, got {}", node_kind(v)));
    if (invalid_utf8_at(v.Scalar()) != std::string::npos)
      fail(mark_of(v, key_at), path, "not UTF-8 text");
    return v.Scalar();
  }

  double number_of(const YAML::Node& v, const std::string& path, const Origin& key_at) const
  {
    ParamSpec spec;
    spec.path = path;
    spec.kind = ParamKind::Number;
    return std::get<double>(convert_node(spec, v, mark_of(v, key_at)).value);
  }

  std::vector<std::string> words_of(const YAML::Node& v, const std::string& path, const Origin& key_at) const
  {
    if (!v.IsSequence())
      fail(mark_of(v, key_at), path, fmt::format("expected a list, got {}", node_kind(v)));
    std::vector<std::string> out;
    for (const auto& e : v)
      out.push_back(text_of(e, path, mark_of(e, key_at)));
    return out;
  }

  void read_head(const std::map<std::string, std::pair<Origin, YAML::Node>>& at)
  {
    const auto& [name_at, name] = at.at("name");
    p_.name = text_of(name, "name", name_at);
    if (!valid_name(p_.name))
      fail(mark_of(name, name_at), "name",
           with_allowed(fmt::format("'{}' is not a profile name", p_.name),
                        "letters, digits, '-', '_' and '.', at most 64, not ending in .yaml or .yml"));
    const auto& [tr_at, tr] = at.at("transport");
    p_.transport = text_of(tr, "transport", tr_at);
    if (!contains(transport_names(), p_.transport))
      fail(mark_of(tr, tr_at), "transport", with_allowed("unknown transport", join(transport_names())));
    if (auto it = at.find("description"); it != at.end())
      p_.doc = text_of(it->second.second, "description", it->second.first);
  }

  void take_base(const Origin& key_at, const YAML::Node& v)
  {
    p_.base = text_of(v, "base", key_at);
    const Origin value_at = mark_of(v, key_at);
    const PlatformProfile& base = find_base_(p_.base, value_at.prefix());
    if (base.transport != p_.transport)
      fail(value_at, "base",
           fmt::format("{} is a profile of transport {}, and this profile's transport is {} (allowed: a profile of "
                       "{})",
                       base.name, base.transport, p_.transport, p_.transport));
    p_.costs = base.costs;
    for (const auto& [k, prov] : base.provenance)
      p_.provenance[k] = CostProvenance{"base", base.name + ": " + prov.source, prov.reason};
    p_.hardware = base.hardware;
    p_.calibrated = base.calibrated;
    if (p_.doc.empty())
      p_.doc = base.doc;
  }

  void read_hardware(const Origin& key_at, const YAML::Node& v)
  {
    expect_map(v, "hardware", key_at, join(hardware_keys()));
    std::map<std::string, std::string> given(p_.hardware.begin(), p_.hardware.end());
    for_each_pair(v, "hardware", [&](const std::string& path, const Origin& at, const YAML::Node& value) {
      const std::string key = path.substr(std::string("hardware.").size());
      if (!contains(hardware_keys(), key))
        fail(at, path, with_allowed("unknown key", join(hardware_keys())));
      given[key] = text_of(value, path, at);
    });
    p_.hardware.clear();
    for (const std::string& k : hardware_keys())
      if (auto it = given.find(k); it != given.end())
        p_.hardware.emplace_back(k, it->second);
  }

  // The costs this profile's transport charges, in declaration order.
  std::vector<const ParamSpec*> transport_costs() const
  {
    std::vector<const ParamSpec*> out;
    for (const ParamSpec& s : costs_reg_.all())
      if (scope_applies(s.scope, p_.transport))
        out.push_back(&s);
    return out;
  }

  std::string cost_names() const
  {
    std::vector<std::string> names;
    for (const ParamSpec* s : transport_costs())
      names.push_back(s->path.substr(6));
    return join(names);
  }

  void read_costs(const Origin& key_at, const YAML::Node& v)
  {
    expect_map(v, "costs", key_at, "cost names mapped to values: " + cost_names());
    for_each_pair(v, "costs", [&](const std::string& path, const Origin& at, const YAML::Node& value) {
      read_cost(path, at, value);
    });
    std::vector<std::string> missing;
    for (const ParamSpec* s : transport_costs()) {
      const std::string name = s->path.substr(6);
      if (p_.costs.count(name))
        continue;
      // A cost added after profiles were written takes its declared "off".
      if (!std::isnan(s->absent)) {
        p_.costs[name] = s->absent;
        p_.provenance[name] = CostProvenance{
            "prior", "not in the profile: the declared value of a profile without it (the mechanism off)", "", true};
        continue;
      }
      missing.push_back(name);
    }
    if (!missing.empty())
      fail(key_at, "costs",
           fmt::format("no value for {} (allowed: give each a value, or name a `base` profile to take them from)",
                       join(missing)));
  }

  void read_cost(const std::string& path, const Origin& key_at, const YAML::Node& value)
  {
    const ParamSpec* spec = costs_reg_.find(path);
    if (!spec)
      fail(key_at, path, with_allowed("unknown cost", cost_names()));
    if (!scope_applies(spec->scope, p_.transport))
      fail(key_at, path,
           fmt::format("applies to transport {} only, and this profile's transport is {} (allowed: {})",
                       scope_text(spec->scope), p_.transport, cost_names()));
    const std::string name = path.substr(6);
    CostProvenance prov{"given", "", ""};
    YAML::Node number = value;
    Origin value_at = mark_of(value, key_at);
    if (value.IsMap()) {
      for_each_pair(value, path, [&](const std::string& sub, const Origin& at, const YAML::Node& field) {
        const std::string key = sub.substr(path.size() + 1);
        if (!contains(cost_keys(), key))
          fail(at, sub, with_allowed("unknown key", join(cost_keys())));
        if (key == "value") {
          number.reset(field); // not `=`, which would overwrite the map it refers to
          value_at = mark_of(field, at);
        } else if (key == "source") {
          prov.source = text_of(field, sub, at);
          if (!contains(provenance_sources(), prov.source))
            fail(mark_of(field, at), sub, with_allowed("unknown source", join(provenance_sources())));
        } else {
          (key == "note" ? prov.note : prov.reason) = text_of(field, sub, at);
        }
      });
      if (!value["value"])
        fail(value_at, path, "missing `value` (allowed: a number, or {value: NUMBER, source: WORD, note: TEXT})");
    } else if (!value.IsScalar()) {
      fail(value_at, path,
           with_allowed(fmt::format("expected a number, got {}", node_kind(value)),
                        "a number, or {value: NUMBER, source: WORD, note: TEXT, reason: TEXT}"));
    }
    const double x = std::get<double>(convert_node(*spec, number, value_at).value);
    // A mechanism's "off" (the declared value of a profile without it) is no cost.
    const bool plausible = x == spec->absent || !(x < spec->plausible_min || x > spec->plausible_max);
    if (!plausible && prov.reason.empty())
      fail(value_at, path,
           fmt::format("{} is outside the plausible range {} .. {} {} (docs/cost-sources.md) (allowed: a value in "
                       "the range, or {{value: {}, reason: \"why it is right here\"}})",
                       format_number(x), format_number(spec->plausible_min), format_number(spec->plausible_max),
                       spec->unit, format_number(x)));
    p_.costs[name] = x;
    p_.provenance[name] = prov;
  }

  void read_span(const Origin& key_at, const YAML::Node& v)
  {
    const std::string directions = "guest_to_host, host_to_guest, bidirectional";
    expect_map(v, "calibrated", key_at, directions);
    p_.calibrated.clear();
    for_each_pair(v, "calibrated", [&](const std::string& path, const Origin& at, const YAML::Node& quantities) {
      const std::string direction = path.substr(std::string("calibrated.").size());
      if (direction != "guest_to_host" && direction != "host_to_guest" && direction != "bidirectional")
        fail(at, path, with_allowed("unknown direction", directions));
      expect_map(quantities, path, at, join(span_quantities()));
      auto& span = p_.calibrated[direction];
      for_each_pair(quantities, path, [&](const std::string& qpath, const Origin& qat, const YAML::Node& range) {
        const std::string q = qpath.substr(path.size() + 1);
        if (!contains(span_quantities(), q))
          fail(qat, qpath, with_allowed("unknown quantity", join(span_quantities())));
        if (!range.IsSequence() || range.size() != 2)
          fail(mark_of(range, qat), qpath, "expected [smallest, largest], a list of two numbers");
        const double lo = number_of(range[0], qpath, qat);
        const double hi = number_of(range[1], qpath, qat);
        if (lo > hi)
          fail(mark_of(range, qat), qpath, "the smallest value is larger than the largest");
        span[q] = {lo, hi};
      });
    });
  }

  // ensemble: {noise_percent: N, method: TEXT, members: [{weight: W, costs: {NAME: VALUE, ...}}, ...]}:
  // at least two members, each naming the same costs of the profile's
  // transport with values inside their plausible ranges, weights above 0
  // that sum to 1.
  void read_ensemble(const Origin& key_at, const YAML::Node& v)
  {
    const std::string keys = "noise_percent, method, members";
    expect_map(v, "ensemble", key_at, keys);
    Ensemble e;
    bool have_members = false;
    Origin members_at = key_at;
    for_each_pair(v, "ensemble", [&](const std::string& path, const Origin& at, const YAML::Node& value) {
      const std::string key = path.substr(9);
      if (key == "noise_percent") {
        e.noise_percent = number_of(value, path, at);
        if (!(e.noise_percent > 0 && e.noise_percent <= 100))
          fail(mark_of(value, at), path, "expected a percentage above 0, at most 100");
      } else if (key == "method") {
        e.method = text_of(value, path, at);
      } else if (key == "members") {
        have_members = true;
        members_at = mark_of(value, at);
        if (!value.IsSequence())
          fail(members_at, path, fmt::format("expected a list of members, got {}", node_kind(value)));
        for (const auto& m : value)
          e.members.push_back(read_member(m, path, mark_of(m, at)));
      } else {
        fail(at, path, with_allowed("unknown key", keys));
      }
    });
    if (!have_members || e.members.size() < 2)
      fail(members_at, "ensemble.members", "an ensemble needs at least two members");
    double sum = 0;
    for (const EnsembleMember& m : e.members) {
      sum += m.weight;
      if (m.costs.empty() ||
          !std::equal(m.costs.begin(), m.costs.end(), e.members.front().costs.begin(), e.members.front().costs.end(),
                      [](const auto& a, const auto& b) { return a.first == b.first; }) ||
          m.costs.size() != e.members.front().costs.size())
        fail(members_at, "ensemble.members", "every member names the same costs (at least one)");
    }
    if (std::fabs(sum - 1) > 1e-6)
      fail(members_at, "ensemble.members", fmt::format("the weights sum to {}, not 1", sum));
    p_.ensemble = e;
  }

  EnsembleMember read_member(const YAML::Node& m, const std::string& path, const Origin& at) const
  {
    expect_map(m, path, at, "weight, costs");
    EnsembleMember out;
    bool weighted = false;
    for_each_pair(m, path, [&](const std::string& sub, const Origin& sat, const YAML::Node& value) {
      const std::string key = sub.substr(path.size() + 1);
      if (key == "weight") {
        weighted = true;
        out.weight = number_of(value, sub, sat);
        if (!(out.weight > 0 && out.weight <= 1))
          fail(mark_of(value, sat), sub, "expected a weight above 0, at most 1");
      } else if (key == "costs") {
        expect_map(value, sub, sat, "cost names mapped to values");
        for_each_pair(value, sub, [&](const std::string& cpath, const Origin& cat, const YAML::Node& x) {
          const std::string name = cpath.substr(sub.size() + 1);
          const ParamSpec* spec = costs_reg_.find("costs." + name);
          if (spec == nullptr || (!scope_applies(spec->scope, p_.transport)))
            fail(cat, cpath, with_allowed("unknown cost", "costs of " + p_.transport));
          const double v = std::get<double>(convert_node(*spec, x, mark_of(x, cat)).value);
          if (v < spec->plausible_min || v > spec->plausible_max)
            fail(mark_of(x, cat), cpath,
                 fmt::format("{} is outside the plausible range {} .. {} {} (allowed: a member inside the ranges)",
                             format_number(v), format_number(spec->plausible_min), format_number(spec->plausible_max),
                             spec->unit));
          out.costs[name] = v;
        });
      } else {
        fail(sat, sub, with_allowed("unknown key", "weight, costs"));
      }
    });
    if (!weighted)
      fail(at, path + ".weight", "missing");
    return out;
  }

  void read_fit(const Origin& key_at, const YAML::Node& v)
  {
    expect_map(v, "fit", key_at, join(fit_keys()));
    FitReport f;
    for_each_pair(v, "fit", [&](const std::string& path, const Origin& at, const YAML::Node& value) {
      const std::string key = path.substr(4);
      if (!contains(fit_keys(), key))
        fail(at, path, with_allowed("unknown key", join(fit_keys())));
      read_fit_field(f, key, path, at, value);
    });
    p_.fit = f;
  }

  void read_fit_field(FitReport& f, const std::string& key, const std::string& path, const Origin& at,
                      const YAML::Node& value) const
  {
    if (key == "experiment" || key == "measurements" || key == "optimiser")
      (key == "experiment"     ? f.experiment
       : key == "measurements" ? f.measurements
                               : f.optimiser) = text_of(value, path, at);
    else if (key == "fitted")
      f.fitted = words_of(value, path, at);
    else if (key == "hold_out")
      f.hold_out = words_of(value, path, at);
    else if (key == "not_fitted") {
      expect_map(value, path, at, "cost names mapped to why");
      for_each_pair(value, path, [&](const std::string& sub, const Origin& sat, const YAML::Node& why) {
        f.not_fitted.emplace_back(sub.substr(path.size() + 1), text_of(why, sub, sat));
      });
    } else if (key == "folds" || key == "evaluations") {
      const double n = number_of(value, path, at);
      if (n < 0 || n != std::floor(n) || n > 1e9)
        fail(mark_of(value, at), path, "expected a whole number, 0 .. 1e9");
      (key == "folds" ? f.folds : f.evaluations) = static_cast<unsigned>(n);
    } else if (key == "rows") {
      if (!value.IsSequence())
        fail(mark_of(value, at), path, fmt::format("expected a list of rows, got {}", node_kind(value)));
      for (const auto& row : value)
        f.rows.push_back(read_fit_row(row, path, mark_of(row, at)));
    } else {
      const double x = number_of(value, path, at);
      (key == "mae_before_percent" ? f.mae_before
       : key == "mae_fit_percent"  ? f.mae_fit
       : key == "mae_cv_percent"   ? f.mae_cv
                                   : f.mae_held_out) = x;
    }
  }

  FitRow read_fit_row(const YAML::Node& row, const std::string& path, const Origin& at) const
  {
    expect_map(row, path, at, join(fit_row_keys()));
    FitRow r;
    for_each_pair(row, path, [&](const std::string& sub, const Origin& sat, const YAML::Node& value) {
      const std::string key = sub.substr(path.size() + 1);
      if (!contains(fit_row_keys(), key))
        fail(sat, sub, with_allowed("unknown key", join(fit_row_keys())));
      if (key == "keys" || key == "metric" || key == "role")
        (key == "keys" ? r.keys : key == "metric" ? r.metric : r.role) = text_of(value, sub, sat);
      else
        (key == "measured" ? r.measured : key == "before" ? r.before : r.after) = number_of(value, sub, sat);
    });
    if (r.role != "fit" && r.role != "held-out")
      fail(at, path + ".role", "expected fit or held-out");
    return r;
  }

  const std::string& text_;
  std::string file_;
  const BaseLookup& find_base_;
  ParamRegistry costs_reg_;
  PlatformProfile p_;
};

// ---------------------------------------------------------------------------
// Writing

std::string quote(const std::string& s)
{
  return nlohmann::json(s).dump();
}

// The shortest text that reads back as exactly x.
std::string number_text(double x)
{
  return fmt::format("{}", x);
}

std::string word_list(const std::vector<std::string>& words)
{
  std::vector<std::string> q;
  for (const auto& w : words)
    q.push_back(quote(w));
  return "[" + join(q) + "]";
}

void write_costs(std::string& out, const PlatformProfile& p)
{
  ParamRegistry reg;
  declare_cost_params(reg);
  std::string lines;
  for (const ParamSpec& s : reg.all()) {
    const std::string name = s.path.substr(6);
    auto it = p.costs.find(name);
    if (it == p.costs.end())
      continue;
    CostProvenance prov{"given", "", ""};
    if (auto pv = p.provenance.find(name); pv != p.provenance.end())
      prov = pv->second;
    if (!p.base.empty() && prov.source == "base")
      continue; // the reader takes it from the base profile
    if (prov.implicit && it->second == s.absent)
      continue; // still the mechanism off that the reader supplies for a cost the file lacks
    lines += fmt::format("  {}: {{value: {}, source: {}", name, number_text(it->second), prov.source);
    if (!prov.note.empty())
      lines += ", note: " + quote(prov.note);
    if (!prov.reason.empty())
      lines += ", reason: " + quote(prov.reason);
    lines += "}\n";
  }
  // Every value from the base (a fit that kept its start): an empty map, not
  // an empty key the reader would refuse.
  out += lines.empty() ? "costs: {}\n" : "costs:\n" + lines;
}

void write_span(std::string& out, const PlatformProfile& p)
{
  if (p.calibrated.empty())
    return;
  out += "calibrated:\n";
  for (const auto& [direction, span] : p.calibrated) {
    out += "  " + direction + ":\n";
    for (const std::string& q : span_quantities())
      if (auto it = span.find(q); it != span.end())
        out += fmt::format("    {}: [{}, {}]\n", q, number_text(it->second.first), number_text(it->second.second));
  }
}

void write_fit(std::string& out, const FitReport& f)
{
  out += "fit:\n";
  out += "  experiment: " + quote(f.experiment) + "\n";
  out += "  measurements: " + quote(f.measurements) + "\n";
  out += "  optimiser: " + quote(f.optimiser) + "\n";
  out += "  fitted: " + word_list(f.fitted) + "\n";
  if (!f.not_fitted.empty()) {
    out += "  not_fitted:\n";
    for (const auto& [name, why] : f.not_fitted)
      out += "    " + name + ": " + quote(why) + "\n";
  }
  out += "  hold_out: " + word_list(f.hold_out) + "\n";
  out += fmt::format("  folds: {}\n  evaluations: {}\n", f.folds, f.evaluations);
  out += fmt::format("  mae_before_percent: {}\n  mae_fit_percent: {}\n", number_text(f.mae_before),
                     number_text(f.mae_fit));
  out += fmt::format("  mae_held_out_percent: {}\n  mae_cv_percent: {}\n", number_text(f.mae_held_out),
                     number_text(f.mae_cv));
  out += "  rows:\n";
  for (const FitRow& r : f.rows)
    out += fmt::format("    - {{keys: {}, metric: {}, role: {}, measured: {}, before: {}, after: {}}}\n", quote(r.keys),
                       quote(r.metric), r.role, number_text(r.measured), number_text(r.before), number_text(r.after));
}

} // namespace

bool is_profile_path(const std::string& s)
{
  auto ends = [&](const std::string& suffix) {
    return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

const std::vector<std::string>& hardware_keys()
{
  static const std::vector<std::string> k = {"cpu", "cpu_ghz", "host_kernel", "guest_kernel", "hypervisor",
                                             "vmm", "vcpus",   "pinning",     "notes"};
  return k;
}

const std::vector<std::string>& provenance_sources()
{
  static const std::vector<std::string> k = {"fitted", "held", "base", "prior", "given"};
  return k;
}

PlatformProfile parse_profile(const std::string& text, const std::string& file, const BaseLookup& find_base)
{
  return ProfileReader(text, file, find_base).read();
}

std::string write_profile(const PlatformProfile& p)
{
  std::string out = "# A vsocksim platform profile (docs/profiles.md).\n";
  out += "name: " + p.name + "\n";
  out += "description: " + quote(p.doc) + "\n";
  out += "transport: " + p.transport + "\n";
  if (!p.base.empty())
    out += "base: " + quote(p.base) + "\n";
  if (!p.hardware.empty()) {
    out += "hardware:\n";
    for (const auto& [k, v] : p.hardware)
      out += "  " + k + ": " + quote(v) + "\n";
  }
  write_costs(out, p);
  write_span(out, p);
  if (p.fit)
    write_fit(out, *p.fit);
  if (p.ensemble) {
    out += "ensemble:\n";
    out += "  noise_percent: " + number_text(p.ensemble->noise_percent) + "\n";
    out += "  method: " + quote(p.ensemble->method) + "\n";
    out += "  members:\n";
    for (const EnsembleMember& m : p.ensemble->members) {
      std::vector<std::string> costs;
      for (const auto& [k, v] : m.costs)
        costs.push_back(k + ": " + number_text(v));
      out += "    - {weight: " + number_text(m.weight) + ", costs: {" + join(costs, ", ") + "}}\n";
    }
  }
  return out;
}

} // namespace vsim::app
