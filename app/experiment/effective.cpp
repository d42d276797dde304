#include "app/experiment/effective.hpp"

#include <algorithm>
#include <map>
#include <variant>

#include <fmt/format.h>

namespace vsim::app {

namespace {

std::string list_text(const std::vector<std::size_t>& idx)
{
  std::string s;
  for (std::size_t i = 0; i < idx.size(); ++i)
    s += (i == 0 ? "" : i + 1 == idx.size() ? " and " : ", ") + std::to_string(idx[i]);
  return s;
}

std::string value_text(const Value& v)
{
  return std::visit(
      [](const auto& x) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>)
          return x;
        else
          return fmt::format("{}", x);
      },
      v);
}

} // namespace

std::vector<Effective> effective_values(const Params& p)
{
  if (!p.has("transport"))
    return {};
  const Transport* t = find_transport(p.text("transport"));
  return t && t->effective ? t->effective(p) : std::vector<Effective>{};
}

std::vector<std::string> effective_warnings(const Experiment& ex)
{
  std::map<std::string, std::vector<std::size_t>> by_note;
  std::vector<std::string> order; // notes in order of first appearance
  for (const Point& pt : ex.points)
    for (const Effective& e : effective_values(pt.params)) {
      if (e.note.empty())
        continue;
      // A value the user chose (swept, in the file or by --set: the note's
      // key or one of its note_keys); not a default the point's other
      // choices make moot.
      auto chosen = [&](const std::string& key) {
        const bool swept = std::any_of(pt.label.begin(), pt.label.end(), [&](const auto& l) { return l.first == key; });
        return swept || std::binary_search(ex.given.begin(), ex.given.end(), key);
      };
      if (!chosen(e.key) && std::none_of(e.note_keys.begin(), e.note_keys.end(), chosen))
        continue;
      auto& points = by_note[e.note];
      if (points.empty())
        order.push_back(e.note);
      points.push_back(pt.index);
    }
  std::vector<std::string> out;
  for (const std::string& note : order) {
    const auto& pts = by_note[note];
    out.push_back(fmt::format("{} (point{} {})", note, pts.size() == 1 ? "" : "s", list_text(pts)));
  }
  return out;
}

std::vector<std::vector<std::size_t>> same_runs(const Experiment& ex)
{
  std::map<std::string, std::vector<std::size_t>> groups;
  std::vector<std::string> order;
  for (const Point& pt : ex.points) {
    const std::vector<Effective> eff = effective_values(pt.params);
    if (eff.empty())
      continue;
    const Transport* t = find_transport(pt.params.text("transport"));
    std::string key;
    for (const auto& [k, v] : pt.params.all())
      if (std::find(t->absorbed.begin(), t->absorbed.end(), k) == t->absorbed.end())
        key += k + "=" + value_text(v) + "\n";
    for (const Effective& e : eff)
      key += "effective." + e.name + "=" + fmt::format("{}", e.value) + "\n";
    auto& g = groups[key];
    if (g.empty())
      order.push_back(key);
    g.push_back(pt.index);
  }
  std::vector<std::vector<std::size_t>> out;
  for (const std::string& k : order)
    if (groups[k].size() > 1)
      out.push_back(groups[k]);
  return out;
}

std::vector<std::string> same_run_lines(const Experiment& ex)
{
  std::vector<std::string> out;
  for (const auto& g : same_runs(ex))
    out.push_back(fmt::format("points {} are the same run (their effective values are equal: vsocksim describe "
                              "lists what each key becomes)",
                              list_text(g)));
  return out;
}

} // namespace vsim::app
