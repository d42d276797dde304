#include "app/experiment/search_spec.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/experiment/describe.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/scalar.hpp"
#include "app/experiment/text.hpp"
#include "app/experiment/units.hpp"

namespace vsim::app {

using load::fail;
using load::Given;
using load::Origin;
using load::with_allowed;

namespace {

// The most values one knob may take: a typo such as a linear range of bytes
// with no step should be an error, not a search over a million values.
constexpr std::size_t kMaxKnobValues = 4096;
constexpr double kMaxBudget = 100000;

const std::vector<std::string> kSectionKeys = {"budget", "constraints", "method", "objectives", "rank", "space"};
const std::vector<std::string> kRangeKeys = {"from", "scale", "step", "to"};

Origin mark(const std::string& file, const YAML::Mark& m)
{
  return m.is_null() ? load::in_file(file) : load::in_file(file, m.line + 1, m.column + 1);
}

Origin mark_of(const std::string& file, const YAML::Node& n, const Origin& key_at)
{
  return n.IsNull() || n.Mark().is_null() ? key_at : mark(file, n.Mark());
}

// The column of byte `offset` of a scalar's text: past the opening quote of
// a quoted scalar.
Origin at_offset(Origin at, const YAML::Node& scalar, std::size_t offset)
{
  if (at.line > 0)
    at.column += static_cast<int>(offset) + (scalar.Tag() == "?" ? 0 : 1);
  return at;
}

// Each pair of a map, in order; the second of two equal keys is an error.
template <class F> void each_pair(const YAML::Node& map, const std::string& file, const std::string& prefix, F&& f)
{
  std::map<std::string, Origin> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node k = it->first;
    const Origin key_at = mark(file, k.Mark());
    if (!k.IsScalar() || k.Scalar().empty())
      fail(key_at, prefix,
           fmt::format("keys must be words, got {}", k.IsScalar() ? "an empty key" : load::node_kind(k)));
    auto [first, fresh] = seen.emplace(k.Scalar(), key_at);
    if (!fresh)
      fail(key_at, prefix + "." + k.Scalar(),
           fmt::format("duplicate key (first given at line {}, column {})", first->second.line, first->second.column));
    f(k.Scalar(), key_at, it->second);
  }
}

bool numeric(ParamKind k)
{
  return k == ParamKind::Integer || k == ParamKind::Size || k == ParamKind::Number;
}

double as_double(const Value& v)
{
  if (const auto* i = std::get_if<std::int64_t>(&v))
    return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v))
    return *d;
  return std::nan("");
}

// A range's value as the user would write it: a size with its unit when exact.
std::string value_text(const ParamSpec& spec, double v)
{
  if (spec.kind == ParamKind::Size)
    return format_size(static_cast<std::int64_t>(v));
  if (spec.kind == ParamKind::Integer)
    return fmt::format("{}", static_cast<std::int64_t>(v));
  return format_number(v);
}

class Reader {
public:
  explicit Reader(const SearchReader& r) : r_(r) {}

  SearchSpec read(const YAML::Node& node, const Origin& key_at)
  {
    SearchSpec s;
    s.at = key_at;
    if (!node.IsMap())
      fail(mark_of(r_.file, node, key_at), "search",
           with_allowed(fmt::format("expected a map of keys, got {}", load::node_kind(node)), join(kSectionKeys)));
    bool has_space = false, has_objectives = false;
    each_pair(node, r_.file, "search", [&](const std::string& key, const Origin& at, const YAML::Node& value) {
      const Origin value_at = mark_of(r_.file, value, at);
      if (key == "space") {
        has_space = true;
        read_space(s, value, value_at);
      } else if (key == "objectives") {
        has_objectives = true;
        read_objectives(s, value, value_at);
      } else if (key == "constraints") {
        read_constraints(s, value, value_at);
      } else if (key == "budget") {
        read_budget(s, value, value_at);
      } else if (key == "method") {
        read_method(s, value, value_at);
      } else if (key == "rank") {
        read_rank(s, value, value_at);
      } else {
        fail(at, "search." + key, with_allowed("unknown key", join(kSectionKeys)));
      }
    });
    if (!has_space)
      fail(key_at, "search", "no search.space: nothing to vary (allowed: a map of parameter paths to lists or ranges)");
    if (!has_objectives)
      fail(key_at, "search",
           "no search.objectives: nothing to optimise (allowed: a list of `max: EXPR` or `min: EXPR`)");
    return s;
  }

private:
  void read_space(SearchSpec& s, const YAML::Node& node, const Origin& at)
  {
    if (!node.IsMap() || node.size() == 0)
      fail(at, "search.space",
           fmt::format("expected a map of parameter paths to lists of values or ranges, got {}",
                       node.IsMap() ? "an empty map" : load::node_kind(node)));
    each_pair(node, r_.file, "search.space", [&](const std::string& key, const Origin& key_at, const YAML::Node& v) {
      const std::string shown = "search.space." + key;
      const ParamSpec* spec = r_.param(key);
      if (spec == nullptr)
        fail(key_at, shown, with_allowed(fmt::format("'{}' is not a parameter", key), r_.parameters_near(key)));
      SearchKnob knob{key, {}, false, key_at};
      const Origin value_at = mark_of(r_.file, v, key_at);
      if (v.IsSequence())
        read_list(knob, *spec, v, value_at);
      else if (v.IsMap())
        read_range(knob, *spec, v, value_at);
      else
        fail(value_at, shown,
             fmt::format("expected a list of values or a range {{from, to, scale}}, got {}", load::node_kind(v)));
      s.space.push_back(std::move(knob));
    });
  }

  void read_list(SearchKnob& knob, const ParamSpec& spec, const YAML::Node& list, const Origin& at)
  {
    if (list.size() == 0)
      fail(at, "search.space." + knob.key, "the list is empty (allowed: one or more values)");
    for (const auto& element : list) {
      Given g = r_.value_of(spec, element, mark_of(r_.file, element, at));
      for (const Given& other : knob.values)
        if (other.value == g.value)
          fail(g.at, "search.space." + knob.key,
               fmt::format("{} is in the list twice (first at line {}, column {})", g.raw, other.at.line,
                           other.at.column));
      knob.values.push_back(std::move(g));
    }
  }

  void read_range(SearchKnob& knob, const ParamSpec& spec, const YAML::Node& map, const Origin& at)
  {
    const std::string shown = "search.space." + knob.key;
    knob.range = true;
    if (!numeric(spec.kind))
      fail(
          at, shown,
          with_allowed(fmt::format("a range needs a numeric parameter, and {} is a {}", knob.key, to_string(spec.kind)),
                       "a list of values"));
    std::map<std::string, std::pair<YAML::Node, Origin>> parts;
    each_pair(map, r_.file, shown, [&](const std::string& key, const Origin& key_at, const YAML::Node& v) {
      if (std::find(kRangeKeys.begin(), kRangeKeys.end(), key) == kRangeKeys.end())
        fail(key_at, shown + "." + key, with_allowed("unknown key", join(kRangeKeys)));
      parts.emplace(key, std::make_pair(v, mark_of(r_.file, v, key_at)));
    });
    for (const char* required : {"from", "to"})
      if (!parts.count(required))
        fail(at, shown, with_allowed(fmt::format("the range has no `{}`", required), "{from, to, scale, step}"));
    auto number = [&](const char* key) {
      const auto& [node, where] = parts.at(key);
      const Given g = r_.value_of(spec, node, where);
      const double v = as_double(g.value);
      if (std::isnan(v))
        fail(where, shown + "." + key,
             with_allowed(fmt::format("'{}' is not a number", g.raw), "a number within " + allowed_values(spec)));
      return std::make_pair(v, g);
    };
    const auto [from, from_given] = number("from");
    const auto [to, to_given] = number("to");
    std::string scale = "linear";
    if (parts.count("scale")) {
      const auto& [node, where] = parts.at("scale");
      if (!node.IsScalar() || (node.Scalar() != "linear" && node.Scalar() != "log2"))
        fail(where, shown + ".scale",
             with_allowed(
                 fmt::format("{} is not a scale", node.IsScalar() ? "'" + node.Scalar() + "'" : load::node_kind(node)),
                 "linear, log2"));
      scale = node.Scalar();
    }
    if (from > to)
      fail(at, shown,
           with_allowed(fmt::format("the range is empty: from ({}) is more than to ({})", from_given.raw, to_given.raw),
                        "from at most to"));
    double step = spec.kind == ParamKind::Number ? 0 : 1;
    if (parts.count("step")) {
      const auto& [node, where] = parts.at("step");
      if (scale == "log2")
        fail(where, shown + ".step", "a log2 range doubles each value: it takes no step (allowed: scale linear)");
      ParamSpec step_spec = spec;
      step_spec.min = -std::numeric_limits<double>::infinity();
      step_spec.max = std::numeric_limits<double>::infinity();
      step_spec.choices.clear();
      step_spec.check = nullptr;
      step = as_double(r_.value_of(step_spec, node, where).value);
      if (!(step > 0))
        fail(where, shown + ".step", with_allowed(fmt::format("{} is not a step", node.Scalar()), "more than 0"));
    } else if (scale == "linear" && step == 0) {
      fail(at, shown, with_allowed("a linear range of a number needs a step", "{from, to, scale: linear, step}"));
    }
    if (scale == "log2" && !(from > 0))
      fail(parts.at("from").second, shown + ".from",
           with_allowed(fmt::format("a log2 range cannot start at {}", from_given.raw), "more than 0"));
    std::vector<double> values;
    for (double v = from; v <= to * (1 + 1e-12); v = scale == "log2" ? v * 2 : from + step * values.size()) {
      values.push_back(v);
      if (values.size() > kMaxKnobValues)
        fail(at, shown,
             with_allowed(fmt::format("the range has more than {} values", kMaxKnobValues),
                          scale == "log2" ? "a shorter range" : "a larger step, a shorter range or scale log2"));
    }
    for (double v : values) {
      const std::string raw = value_text(spec, v);
      knob.values.push_back(r_.value_of(spec, YAML::Load(raw), at));
    }
  }

  const YAML::Node& sequence(const YAML::Node& node, const Origin& at, const std::string& key, const std::string& what)
  {
    if (!node.IsSequence() || node.size() == 0)
      fail(at, key,
           fmt::format("expected a list of {}, got {}", what,
                       node.IsSequence() ? "an empty list" : load::node_kind(node)));
    return node;
  }

  // An expression over metrics and numeric keys, parsed; the error at its
  // byte.
  MetricExpr expression(const YAML::Node& node, const std::string& text, std::size_t offset, const Origin& at,
                        const std::string& key) const
  {
    try {
      return MetricExpr::parse(text, [this](const std::string& name) { return check_metric_name(name, *r_.registry); });
    } catch (const MetricExpr::Error& e) {
      fail(at_offset(at, node, offset + e.offset), key, e.what);
    }
  }

  void read_objectives(SearchSpec& s, const YAML::Node& node, const Origin& at)
  {
    for (const auto& element : sequence(node, at, "search.objectives", "`max: EXPR` or `min: EXPR`")) {
      const Origin element_at = mark_of(r_.file, element, at);
      if (!element.IsMap() || element.size() != 1)
        fail(element_at, "search.objectives",
             with_allowed(fmt::format("expected one `max: EXPR` or `min: EXPR`, got {}", load::node_kind(element)),
                          "max: throughput_MBps, min: (host_cpu_percent+guest_cpu_percent)/throughput_MBps"));
      const YAML::Node sense = element.begin()->first;
      const YAML::Node expr = element.begin()->second;
      const Origin sense_at = mark(r_.file, sense.Mark());
      if (!sense.IsScalar() || (sense.Scalar() != "max" && sense.Scalar() != "min"))
        fail(sense_at, "search.objectives",
             with_allowed(fmt::format("{} is not a sense",
                                      sense.IsScalar() ? "'" + sense.Scalar() + "'" : load::node_kind(sense)),
                          "max, min"));
      const Origin expr_at = mark_of(r_.file, expr, sense_at);
      if (!expr.IsScalar())
        fail(expr_at, "search.objectives." + sense.Scalar(),
             fmt::format("expected a metric expression, got {}", load::node_kind(expr)));
      SearchObjective o;
      o.maximise = sense.Scalar() == "max";
      o.text = expr.Scalar();
      o.at = expr_at;
      o.expr = expression(expr, o.text, 0, expr_at, "search.objectives." + sense.Scalar());
      s.objectives.push_back(std::move(o));
    }
  }

  void read_constraints(SearchSpec& s, const YAML::Node& node, const Origin& at)
  {
    for (const auto& element : sequence(node, at, "search.constraints", "`EXPR <= VALUE` or `EXPR >= VALUE`")) {
      const Origin element_at = mark_of(r_.file, element, at);
      const std::string allowed = "EXPR <= VALUE, EXPR < VALUE, EXPR >= VALUE or EXPR > VALUE, e.g. "
                                  "memory_bytes_per_connection <= 1MiB";
      if (!element.IsScalar())
        fail(element_at, "search.constraints",
             with_allowed(fmt::format("expected a constraint, got {}", load::node_kind(element)), allowed));
      SearchConstraint c;
      c.text = element.Scalar();
      c.at = element_at;
      const std::size_t op = c.text.find_first_of("<>");
      if (op == std::string::npos)
        fail(element_at, "search.constraints", with_allowed(fmt::format("'{}' has no <= or >=", c.text), allowed));
      const bool equal = op + 1 < c.text.size() && c.text[op + 1] == '=';
      c.op = c.text[op] == '<' ? (equal ? SearchConstraint::Op::Le : SearchConstraint::Op::Lt)
                               : (equal ? SearchConstraint::Op::Ge : SearchConstraint::Op::Gt);
      c.expr_text = c.text.substr(0, op);
      while (!c.expr_text.empty() && c.expr_text.back() == ' ')
        c.expr_text.pop_back();
      c.expr = expression(element, c.expr_text, 0, element_at, "search.constraints");
      const std::size_t rest = op + (equal ? 2 : 1);
      const std::size_t begin = c.text.find_first_not_of(' ', rest);
      const std::string bound = begin == std::string::npos ? "" : c.text.substr(begin);
      c.bound = bound_value(bound, at_offset(element_at, element, begin == std::string::npos ? rest : begin));
      s.constraints.push_back(std::move(c));
    }
  }

  // A number, or a size with its unit (bytes).
  static double bound_value(const std::string& text, const Origin& at)
  {
    const std::string allowed = "a number, or a size with its unit: 1048576, 1MiB, 2.5";
    if (text.empty())
      fail(at, "search.constraints", with_allowed("no value after the operator", allowed));
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && *end == '\0' && std::isfinite(d))
      return d;
    std::string why;
    if (const auto bytes = parse_size(text, &why))
      return static_cast<double>(*bytes);
    fail(at, "search.constraints", with_allowed(fmt::format("'{}' is not a number or a size", text), allowed));
  }

  void read_budget(SearchSpec& s, const YAML::Node& node, const Origin& at)
  {
    ParamSpec spec;
    spec.path = "search.budget";
    spec.kind = ParamKind::Integer;
    spec.unit = "simulated points";
    spec.min = -std::numeric_limits<double>::infinity();
    const Given g = r_.value_of(spec, node, at);
    s.budget = std::get<std::int64_t>(g.value);
    s.budget_at = at;
    if (s.budget < 1 || static_cast<double>(s.budget) > kMaxBudget)
      fail(at, "search.budget",
           with_allowed(s.budget < 1 ? fmt::format("a budget of {} simulates no point", s.budget)
                                     : fmt::format("{} is out of range", s.budget),
                        fmt::format("1 .. {} simulated points", format_number(kMaxBudget))));
  }

  // A key whose value is one of `allowed` (search.method, search.rank);
  // `what` names such a value in the error ("'x' is not a method").
  std::string read_choice(const YAML::Node& node, const Origin& at, const std::string& path,
                          const std::vector<std::string>& allowed, const std::string& what)
  {
    if (!node.IsScalar() || std::find(allowed.begin(), allowed.end(), node.Scalar()) == allowed.end())
      fail(at, path,
           with_allowed(
               fmt::format("{} is not {}", node.IsScalar() ? "'" + node.Scalar() + "'" : load::node_kind(node), what),
               join(allowed)));
    return node.Scalar();
  }

  void read_rank(SearchSpec& s, const YAML::Node& node, const Origin& at)
  {
    s.rank = read_choice(node, at, "search.rank", search_ranks(), "a way to rank");
    s.rank_at = at;
  }

  void read_method(SearchSpec& s, const YAML::Node& node, const Origin& at)
  {
    s.method = read_choice(node, at, "search.method", search_methods(), "a method");
    s.method_at = at;
  }

  const SearchReader& r_;
};

nlohmann::json value_json(const Value& v)
{
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

const char* op_text(SearchConstraint::Op op)
{
  switch (op) {
  case SearchConstraint::Op::Le:
    return "<=";
  case SearchConstraint::Op::Lt:
    return "<";
  case SearchConstraint::Op::Ge:
    return ">=";
  case SearchConstraint::Op::Gt:
    return ">";
  }
  return "?";
}

} // namespace

bool SearchConstraint::holds(double value) const
{
  switch (op) {
  case Op::Le:
    return value <= bound;
  case Op::Lt:
    return value < bound;
  case Op::Ge:
    return value >= bound;
  case Op::Gt:
    return value > bound;
  }
  return false;
}

double SearchConstraint::violation(double value) const
{
  if (std::isnan(value))
    return std::numeric_limits<double>::infinity();
  if (holds(value))
    return 0;
  const double scale = bound == 0 ? 1 : std::abs(bound);
  return std::max(std::abs(value - bound) / scale, 1e-12);
}

const std::vector<std::string>& search_methods()
{
  static const std::vector<std::string> m = {"auto", "exhaustive", "nsga2", "moead"};
  return m;
}

const std::vector<std::string>& search_ranks()
{
  static const std::vector<std::string> r = {"central", "median", "pessimistic"};
  return r;
}

const std::vector<SearchKeyDoc>& search_keys()
{
  static const std::vector<SearchKeyDoc> keys = {
      {"search.space", "map", "(required)",
       "parameter paths, each mapped to a list of values or a range {from, to, scale, step}",
       "the knobs `vsocksim search` varies (the other keys keep the file's values): a list (`[default, 64KiB, "
       "256KiB]`, values as the parameter takes them; a choice or boolean is categorical), or a range of a numeric "
       "parameter: `{from: 16KiB, to: 1MiB, scale: log2}` doubles from `from` while at most `to`; `scale: linear` "
       "(the default) steps by `step` (default 1 for integers and sizes; needed for numbers); at most 4096 values "
       "a knob"},
      {"search.space.KEY.from", "as KEY", "(required)", "a value KEY takes", "a range's first value"},
      {"search.space.KEY.to", "as KEY", "(required)", "a value KEY takes, at least from",
       "a range's last value (or the largest value not above it)"},
      {"search.space.KEY.scale", "choice", "linear", "linear, log2",
       "`log2`: each value twice the one before; `linear`: `step` apart"},
      {"search.space.KEY.step", "as KEY", "1 (integers, sizes)", "more than 0; linear only", "a linear range's step"},
      {"search.objectives", "list", "(required)", "`max: EXPR` or `min: EXPR`, one or more",
       "what to optimise, in order (the front table is sorted along the first): EXPR is a metric, or arithmetic "
       "over metrics, numeric experiment keys and numbers (+ - * /, parentheses), as in measurement files; "
       "evaluated on each iteration and summarised by its mean and 95% interval"},
      {"search.constraints", "list", "(none)", "`EXPR <= VALUE`, `EXPR < VALUE`, `EXPR >= VALUE` or `EXPR > VALUE`",
       "what every reported point must meet, on the mean over its iterations; VALUE is a number or a size with its "
       "unit (1MiB); a constraint over metrics the parameters decide alone (memory_bytes_per_connection) and "
       "numeric keys is checked before simulating, and a point that breaks it is not simulated"},
      {"search.budget", "integer (simulated points)", "100", "1 .. 100000",
       "the most points simulated (each with every iteration); `--budget` overrides"},
      {"search.method", "choice", "auto", "auto, exhaustive, nsga2, moead",
       "`exhaustive`: every point of the space (refused when more than the budget); `nsga2`, `moead`: pagmo2's "
       "NSGA-II or MOEA/D-DE within the budget; `auto`: exhaustive when the space fits the budget, else nsga2 "
       "(docs/search.md says why)"},
      {"search.rank", "choice", "central", "central, median, pessimistic",
       "what a point's objectives are: `central`, the profile's central member (mean and 95% interval over the "
       "iterations); with sim.ensemble (`search --ensemble`) `median`, the members' weighted median, or "
       "`pessimistic`, each objective at the members' worse decile (the p10 of a max, the p90 of a min): a design "
       "that wins in most cost vectors that fit the profile's rows; constraints stay on the central member"},
  };
  return keys;
}

SearchSpec read_search(const YAML::Node& node, const Origin& key_at, const SearchReader& r)
{
  return Reader(r).read(node, key_at);
}

nlohmann::json search_canonical(const SearchSpec& s)
{
  nlohmann::json j;
  j["space"] = nlohmann::json::array();
  for (const SearchKnob& k : s.space) {
    nlohmann::json values = nlohmann::json::array();
    for (const Given& g : k.values)
      values.push_back(value_json(g.value));
    j["space"].push_back({{"key", k.key}, {"values", values}});
  }
  j["objectives"] = nlohmann::json::array();
  for (const SearchObjective& o : s.objectives)
    j["objectives"].push_back({{o.maximise ? "max" : "min", o.text}});
  j["constraints"] = nlohmann::json::array();
  for (const SearchConstraint& c : s.constraints)
    j["constraints"].push_back(fmt::format("{} {} {}", c.expr_text, op_text(c.op), format_number(c.bound)));
  j["budget"] = s.budget;
  j["method"] = s.method;
  if (s.rank != "central") // absent when the default: earlier results' manifests stay as they were
    j["rank"] = s.rank;
  return j;
}

} // namespace vsim::app
