// Effective values: what each point's transport actually uses
// once the kernel's clamps and the knobs' interplay are applied, the
// warnings for swept values that were clamped or ignored, and the points
// that are the same run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

// The point's effective values (none for params without a transport).
std::vector<Effective> effective_values(const Params& p);

// One line per distinct clamp or ignored value of a key the user gave (swept,
// in the file or by --set), naming the points: "hv_sock.rcvbuf=4194304: ...:
// the ring is 262144 bytes (points 3, 7)". Defaults made moot by other
// choices are not warned of.
std::vector<std::string> effective_warnings(const Experiment& ex);

// Groups (of two or more, by index) of points whose parameters differ only
// in keys their effective values capture, with equal effective values.
std::vector<std::vector<std::size_t>> same_runs(const Experiment& ex);
// "points 3, 7 and 11 are the same run" for each group.
std::vector<std::string> same_run_lines(const Experiment& ex);

} // namespace vsim::app
