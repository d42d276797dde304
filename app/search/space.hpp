// A search's space (app/search/search.hpp): the combinations of its knobs'
// values, each resolved into a point as a sweep's would be (or refused by
// the loader), and the constraints that need no simulation checked on it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/experiment/search_spec.hpp"

namespace vsim::app::search {

// Each knob's value index.
using Choice = std::vector<std::size_t>;

class Space {
public:
  // keep_points: whether a candidate keeps its resolved point (a plan needs
  // only what each combination is, not the point: a space of 20000
  // combinations would hold 20000 sets of parameters).
  explicit Space(const Experiment& ex, bool keep_points = true);

  const SearchSpec& spec() const { return *ex_.search; }
  const Experiment& experiment() const { return ex_; }
  std::size_t knobs() const { return spec().space.size(); }
  std::size_t values(std::size_t knob) const { return spec().space[knob].values.size(); }
  // The product of the knobs' value counts.
  double combinations() const;
  // Combination n in odometer order (the last knob fastest).
  Choice nth(std::uint64_t n) const;

  // Whether constraint c reads only numeric keys and metrics the parameters
  // decide alone (params_metrics): checked before simulating.
  bool before_simulating(std::size_t c) const { return static_.count(c) != 0; }

  struct Candidate {
    bool resolved = false;      // false: the loader refuses the combination
    std::string refused;        // its message then
    std::optional<Point> point; // the point, when resolved, kept, and within the constraints checked early
    // Per constraint checked before simulating: its value (NaN otherwise),
    // and the sum of the violations of those it breaks (0: none).
    std::vector<double> early;
    double violation = 0;
  };
  // The combination resolved (kept for later calls).
  const Candidate& candidate(const Choice& c);

  // "key=value, key=value": a combination's knob values as written.
  std::string describe(const Choice& c) const;

private:
  const Experiment& ex_;
  bool keep_points_;
  std::set<std::size_t> static_;
  std::map<Choice, Candidate> cache_;
};

} // namespace vsim::app::search
