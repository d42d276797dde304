// Merging the result directories of the shards of a run (app/run/shard.hpp)
// back into one result.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vsim::app {

// Reads DIR/result.json of every directory, checks they are shards of one
// run (same experiment, config hash, version and commit; every point once)
// and returns the merged result, as the unsharded run would give it. Throws
// InputError naming the directory on any mismatch.
nlohmann::ordered_json merge_results(const std::vector<std::string>& dirs);

} // namespace vsim::app
