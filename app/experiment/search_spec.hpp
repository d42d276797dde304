// The `search:` section of an experiment (`vsocksim search`, docs/search.md):
// the knobs a search varies and their values, its objectives and
// constraints over metric expressions, its budget and method. Each key is
// declared once (search_keys()), for the loader's messages, `describe` and
// docs/parameters.md. The loader (experiment.cpp) reads the section with
// read_search() and checks everything a file alone can show is wrong; the
// search itself (app/search/) resolves each point it evaluates with
// search_point() (experiment.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "app/experiment/given.hpp"
#include "app/experiment/metric_expr.hpp"
#include "sim/params.hpp"

namespace vsim::app {

// One knob of the space: a parameter and the values it takes, in order (a
// list as written, or a range's values from `from` to `to`).
struct SearchKnob {
  std::string key;
  std::vector<load::Given> values;
  bool range = false; // given as {from, to, scale, step}
  load::Origin at;    // the key
};

struct SearchObjective {
  bool maximise = true;
  std::string text; // the expression as written
  MetricExpr expr;
  load::Origin at; // the expression
};

struct SearchConstraint {
  enum class Op { Le, Lt, Ge, Gt };
  std::string text;      // as written: "memory_bytes_per_connection <= 1MiB"
  std::string expr_text; // the expression before the operator
  MetricExpr expr;
  Op op = Op::Le;
  double bound = 0;
  load::Origin at; // the constraint
  bool holds(double value) const;
  // How far the value is beyond the bound (0 when it holds), relative to
  // the bound's size (or absolute for a bound of 0).
  double violation(double value) const;
};

struct SearchSpec {
  std::vector<SearchKnob> space;
  std::vector<SearchObjective> objectives;
  std::vector<SearchConstraint> constraints;
  std::int64_t budget = 100;
  load::Origin budget_at; // not positioned when the default
  std::string method = "auto";
  load::Origin method_at;
  // What a point's objectives are taken from (search_ranks()): "central",
  // the profile's central member over the iterations; "median" or
  // "pessimistic", its ensemble's members (sim.ensemble).
  std::string rank = "central";
  load::Origin rank_at; // not positioned when the default
  load::Origin at;      // the `search` key
  // The experiment's explicit values (file and --set) the points are
  // resolved from, with each knob's value put in (search_point()).
  std::map<std::string, load::Given> given;
};

// A key of the search section as `describe` and docs/parameters.md show it.
struct SearchKeyDoc {
  std::string path, type, default_text, allowed, doc;
};
const std::vector<SearchKeyDoc>& search_keys();

// The methods search.method allows.
const std::vector<std::string>& search_methods();

// The values search.rank allows.
const std::vector<std::string>& search_ranks();

// What read_search needs of the loader: where values come from, and a
// value converted and checked against its parameter's declaration.
struct SearchReader {
  std::string file;
  std::function<const ParamSpec*(const std::string&)> param;
  std::function<std::string(const std::string&)> parameters_near; // the allowed paths near an unknown one
  std::function<load::Given(const ParamSpec&, const YAML::Node&, const load::Origin&)> value_of;
  const ParamRegistry* registry = nullptr;
};

// The section under `search` (key at `key_at`); throws InputError
// (FILE:LINE:COLUMN) for an unknown key, a knob that is not a parameter or
// is given twice, an empty list or range, a value the parameter does not
// take, an objective or constraint that is not an expression over known
// metrics and numeric keys, a malformed constraint, a budget below 1 or an
// unknown method.
SearchSpec read_search(const YAML::Node& node, const load::Origin& key_at, const SearchReader& r);

// The search section as it enters the experiment's canonical JSON (its
// knobs with their values, objectives, constraints, budget and method).
nlohmann::json search_canonical(const SearchSpec& s);

} // namespace vsim::app
