// Sharding a sweep over several processes or machines (app/report/merge.hpp
// merges the shards' result directories back into one result).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"

namespace vsim::app {

struct Shard {
  std::size_t index; // 0 .. count-1
  std::size_t count;
};

// "I/N" with 0 <= I < N; throws InputError naming --shard otherwise.
Shard parse_shard(const std::string& text);
// From SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN when set) and
// SLURM_ARRAY_TASK_COUNT, when both are set; throws InputError if malformed.
std::optional<Shard> shard_from_slurm();
// Keeps the points whose index is congruent to the shard's index modulo the
// shard count (indices are unchanged).
void keep_shard(Experiment& ex, const Shard& shard);

} // namespace vsim::app
