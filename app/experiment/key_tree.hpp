// Loading an experiment (app/experiment/experiment.cpp), its internals: the
// tree of dotted key paths the declarations make, which says whether a path
// is a parameter or a group, and what is allowed where a key is unknown.
#pragma once

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
    return with_allowed("unknown key", children(level_of(path)));
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
