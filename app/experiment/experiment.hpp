// Loading an experiment file: YAML -> validated, fully resolved parameters
// for every point of its sweep.
//
// Every key is checked against the ParamRegistry declarations; every error is
// one line naming the file, line and column (or the --set entry), the key
// path, what is wrong and what is allowed:
//   exp.yaml:3:17: error: workload.message_size: unknown unit 'KB' in '12 KB' (allowed: B, KiB, MiB, GiB, kB, MB, GB)
//   --set 'seed=x': error: seed: expected an integer, got 'x' (allowed: 0 .. 9007199254740992)
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/params.hpp"

namespace vsim::app {

// A user error in an experiment file, a --set entry or a command argument.
// what() is the complete, formatted one-line message (exit status 2).
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A member of the ensemble of the point's platform profile (sim.ensemble):
// the point's parameters with the member's costs (but those the experiment
// sets), and the member's weight.
struct MemberPoint {
  double weight = 0;
  Params params;
};

// One point of the expanded sweep.
struct Point {
  std::size_t index; // position in expansion order, 0-based
  Params params;     // every declared key resolved
  // (swept key path, value as the user wrote it), zip keys first, then grid
  // keys, each in file order.
  std::vector<std::pair<std::string, std::string>> label;
  // With sim.ensemble: true, each member of the profile's ensemble, in the
  // profile's order (the runner simulates each once); else empty.
  std::vector<MemberPoint> members = {};
};

struct SearchSpec; // app/experiment/search_spec.hpp

struct Experiment {
  std::string file;                   // path as given
  std::string name;                   // `name`, or the file's stem
  Params base;                        // resolved values before sweep expansion (after --set)
  std::vector<std::string> grid_keys; // in order, first = outermost grid axis
  std::vector<std::string> zip_keys;  // in order (empty if no zip)
  std::vector<Point> points;          // zip axis outermost, then grid keys in order
  std::vector<std::string> given;     // keys given explicitly (file or --set, swept or not), sorted
  std::string canonical;              // JSON (sorted keys) of base params + grid + zip lists (+ search)
  std::string config_sha256;          // hex SHA-256 of `canonical`
  // The `search:` section (vsocksim search), when the file has one: then
  // there is no sweep, and `points` holds the one point of the file's values.
  std::shared_ptr<const SearchSpec> search;
};

// Reads and validates FILE, applies the --set entries (each "KEY=VALUE") and
// expands the sweep. Throws InputError.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& sets, const ParamRegistry& reg);

// Same from text; display_name stands for the file in messages and gives the
// default name (its stem).
Experiment load_experiment_text(const std::string& text, const std::string& display_name,
                                const std::vector<std::string>& sets, const ParamRegistry& reg);

// A point of a search (Experiment::search): the experiment's explicit values
// with knob k at its value choice[k], resolved and checked as a sweep's
// point is, labelled with the knobs' values as written. Throws InputError
// when the loader refuses the combination (the message names the knob
// values that make it).
Point search_point(const Experiment& ex, const std::vector<std::size_t>& choice, std::size_t index,
                   const ParamRegistry& reg);

} // namespace vsim::app
