// `vsocksim explain RESULT.json [--point K]`: a plain-language account of
// each point of a result -- which resource saturates and on what, what the
// sides wait on (counts per MB), each data-path stage's share of the time,
// the occupancy of the rings/queues -- and the analytic bound of the
// platform graph (transports/topology.hpp) beside the simulated throughput, with
// the verdict: CPU-bound (naming the resource) or limited by waiting
// (naming the mechanism and citing its counts).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace vsim::app {

// The account of one point of a result (a member of its "points" array).
// Throws InputError when the point lacks params or metrics.
// `profile`: the point's platform profile as the result's manifest holds
// it (manifest.platforms.<name>), or nullptr: what a round-trip point's
// tail rests on (whether the profile's fit saw percentile rows).
std::string explain_point(const nlohmann::json& point, std::size_t position, const nlohmann::json* profile = nullptr);

// The accounts of every point of the result at `path` (the JSON of `run
// --format json` or result.json of `--output DIR`), or of point `point`
// (its position in "points", from 0). Throws InputError naming the file and
// what is allowed when the file is missing, not JSON, not a result, or the
// point is out of range.
std::string explain_result(const std::string& path, std::optional<long long> point);

// What to measure next (app/report/advise.hpp) for the ensemble result at
// `path`; InputError as explain_result.
std::string advise_result(const std::string& path);

} // namespace vsim::app
