#include "app/run/shard.hpp"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace vsim::app {

namespace {

std::optional<std::size_t> to_size(const std::string& s)
{
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

} // namespace

Shard parse_shard(const std::string& text)
{
  auto slash = text.find('/');
  std::optional<std::size_t> i, n;
  if (slash != std::string::npos) {
    i = to_size(text.substr(0, slash));
    n = to_size(text.substr(slash + 1));
  }
  if (!i || !n || *n == 0 || *i >= *n)
    throw InputError(fmt::format("--shard '{}': error: expected I/N with 0 <= I < N (e.g. 0/4)", text));
  return {*i, *n};
}

std::optional<Shard> shard_from_slurm()
{
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (id == nullptr || count == nullptr)
    return std::nullopt;
  const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
  auto i = to_size(id), n = to_size(count), m = to_size(min ? min : "0");
  if (!i || !n || !m || *i < *m || *n == 0 || *i - *m >= *n)
    throw InputError(fmt::format("SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_COUNT={} SLURM_ARRAY_TASK_MIN={}: error: "
                                 "not a task of the array (expected MIN <= ID < MIN + COUNT)",
                                 id, count, min ? min : "unset"));
  return Shard{*i - *m, *n};
}

void keep_shard(Experiment& ex, const Shard& shard)
{
  std::vector<Point> kept;
  for (Point& p : ex.points)
    if (p.index % shard.count == shard.index)
      kept.push_back(std::move(p));
  ex.points = std::move(kept);
}

} // namespace vsim::app
