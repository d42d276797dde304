// Whether a point lies inside the data its platform profile was fitted on
// (PlatformProfile::calibrated, transports/profiles.hpp): a prediction
// outside it is an extrapolation, which the results flag (a note under the
// tables, "extrapolated_from_calibration" in JSON), never an error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"
#include "sim/params.hpp"

namespace vsim::app {

// The point's quantities a profile's span covers, by name: the message size
// (workload.message_size), the connections (workload.connections), the
// buffer that bounds the data in flight (effective.ring_bytes_<direction>
// for hv_sock, effective.buf_alloc_bytes for virtio-vsock) and, when
// `metrics` holds it, the mean throughput (throughput_MBps).
std::map<std::string, double> calibration_quantities(const Params& p, const std::vector<Metrics>& iterations = {});

// One line per quantity of the point outside its profile's span for the
// point's direction ("workload.message_size 1MiB: kvm-2019 was fitted on 32B
// to 512KiB"),
// or "direction host_to_guest: not in the calibration data". A predicted
// throughput counts as outside when it is more than 10% beyond the span
// (the model's error on the calibration rows is about that size). Empty for
// a point inside, or for a profile with no span.
std::vector<std::string> outside_calibration(const Params& p, const std::vector<Metrics>& iterations = {});

// For under the tables: each distinct reason, with the points it applies to
// (failed points left out); "" when every point is inside.
std::string calibration_notes(const std::vector<Point>& points, const std::vector<PointResult>& results);

} // namespace vsim::app
