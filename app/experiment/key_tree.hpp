// Loading an experiment (app/experiment/experiment.cpp), its internals: the
// tree of dotted key paths the declarations make, which says whether a path
// is a parameter or a group, and what is allowed where a key is unknown.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/experiment/origin.hpp"
#include "app/experiment/text.hpp"
#include "sim/params.hpp"

namespace vsim::app::load {

// Key paths: which dotted paths are parameters, which are groups of them.

class KeyTree {
public:
  explicit KeyTree(const ParamRegistry& reg) : reg_(reg)
  {
    children_[""].insert("sweep");
    children_[""].insert("search");
    children_["sweep"] = {"grid", "zip"};
    for (const auto& spec : reg.all()) {
      std::string parent;
      std::size_t start = 0;
      for (;;) {
        const std::size_t dot = spec.path.find('.', start);
        const std::string segment = spec.path.substr(start, dot - start);
        children_[parent].insert(segment);
        if (dot == std::string::npos)
          break;
        parent = spec.path.substr(0, dot);
        start = dot + 1;
      }
    }
  }

  const ParamSpec* param(const std::string& path) const { return reg_.find(path); }
  bool is_group(const std::string& path) const { return !path.empty() && children_.count(path) != 0; }
  std::string children(const std::string& group) const
  {
    auto it = children_.find(group);
    return it == children_.end() ? "" : join(std::vector<std::string>(it->second.begin(), it->second.end()));
  }

  // The group a path would belong to: its longest proper prefix that is a
  // group, or "" for the top level.
  std::string level_of(const std::string& path) const
  {
    for (std::size_t dot = path.rfind('.'); dot != std::string::npos && dot > 0; dot = path.rfind('.', dot - 1)) {
      const std::string prefix = path.substr(0, dot);
      if (is_group(prefix))
        return prefix;
    }
    return "";
  }

  std::string unknown_key(const std::string& path) const
  {
    // Keys that existed once get a message saying what became of them.
    if (path == "sim.mode")
      return "sim.mode was removed: the engine now runs every event in one exact order, so there is no fast or "
             "exact mode any more (delete the key; docs/model.md, 'The engine')";
    const std::string guess = near_key(path);
    return with_allowed(guess.empty() ? "unknown key" : "unknown key, did you mean " + guess + "?",
                        children(level_of(path)));
  }

  // The one key a misspelt path most likely means, or "": a key at the same
  // level within two edits of the path's last segment (and fewer than half
  // its letters), else a parameter anywhere whose last segment is that
  // segment exactly (`message_size` at the top: workload.message_size).
  // Ties give none.
  std::string near_key(const std::string& path) const
  {
    const std::string level = level_of(path);
    const std::string leaf = level.empty() ? path : path.substr(level.size() + 1);
    std::string best;
    std::size_t best_d = std::string::npos;
    bool tie = false;
    if (auto it = children_.find(level); it != children_.end())
      for (const std::string& k : it->second) {
        const std::size_t d = edit_distance(leaf, k);
        if (d > 2 || 2 * d >= leaf.size())
          continue;
        if (d < best_d) {
          best = k;
          best_d = d;
          tie = false;
        } else if (d == best_d)
          tie = true;
      }
    if (!best.empty() && !tie)
      return level.empty() ? best : level + "." + best;
    std::vector<std::string> same_leaf;
    for (const auto& spec : reg_.all())
      if (spec.path.size() > leaf.size() && spec.path.ends_with("." + leaf))
        same_leaf.push_back(spec.path);
    return same_leaf.size() == 1 ? same_leaf.front() : "";
  }

  // Edits between two words: insertions, deletions, substitutions and
  // swaps of two neighbouring letters (the optimal string alignment distance).
  static std::size_t edit_distance(const std::string& a, const std::string& b)
  {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
      d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
      d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  }

  // For sweep keys, which must be parameters: the full paths under the level.
  std::string sweepable_near(const std::string& path) const
  {
    const std::string level = is_group(path) ? path : level_of(path);
    if (level.empty() || level == "sweep")
      return "a parameter path, as listed by 'vsocksim describe'";
    std::vector<std::string> paths;
    for (const auto& spec : reg_.all())
      if (spec.path.rfind(level + ".", 0) == 0)
        paths.push_back(spec.path);
    return join(paths);
  }

private:
  const ParamRegistry& reg_;
  std::map<std::string, std::set<std::string>> children_;
};

} // namespace vsim::app::load
