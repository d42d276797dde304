// The bounded search of a calibration: an NLopt local derivative-free
// optimiser over the fitted costs, each mapped to a coordinate in [0, 1]
// across its plausible range (log-spaced for a positive range, linear for
// one starting at 0). Stops on the evaluation budget or on xtol/ftol, never
// on time, so that the result is the same on any machine and any --jobs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/calibrate/calibrate.hpp"

namespace vsim::app {

// The optimisers --optimiser accepts, by the names it takes ("bobyqa", ...).
const std::vector<std::string>& optimiser_names();
// "NLopt LN_BOBYQA" for "bobyqa"; "" for an unknown name.
std::string optimiser_label(const std::string& name);

// The coordinate of a cost's value and back.
double to_unit(const FitCost& c, double value);
double from_unit(const FitCost& c, double u);

struct Candidate {
  double objective = 0;
  std::vector<double> values; // per cost
};

struct SearchResult {
  std::vector<Candidate> best; // the best distinct points evaluated, best first (at most kKeptCandidates)
  unsigned evaluations = 0;
  std::string stop; // why NLopt stopped
};

// How many of a search's best points it keeps: the final comparison with
// the experiment's own iterations chooses among them and the start, since
// the search's cheaper evaluations rank close points by their noise.
inline constexpr std::size_t kKeptCandidates = 2;

// Minimises `objective` (of the costs' values) from their start values with
// at most `budget` evaluations. The best points evaluated are returned
// whatever NLopt ends with (a noisy surface can end it on a worse one).
SearchResult search(const std::vector<FitCost>& costs, const std::string& optimiser, unsigned budget,
                    const std::function<double(const std::vector<double>&)>& objective);

} // namespace vsim::app
