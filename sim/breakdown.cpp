#include "sim/breakdown.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace vsim {

namespace {

void put_time(std::map<std::string, double>& m, const std::string& prefix, const CpuTime& t, Time elapsed)
{
  for (int c = 0; c < kCats; ++c)
    m[fmt::format("{}.{}_percent", prefix, kBusyCategoryNames[c])] =
        t.cycles[static_cast<std::size_t>(c)] / elapsed * 100.0;
  m[prefix + ".busy_percent"] = t.busy() / elapsed * 100.0;
}

CpuTime plus(CpuTime a, const CpuTime& b)
{
  for (int c = 0; c < kCats; ++c)
    a.cycles[static_cast<std::size_t>(c)] += b.cycles[static_cast<std::size_t>(c)];
  return a;
}

} // namespace

void append_breakdown(std::map<std::string, double>& m, const World& world, Time elapsed,
                      const std::vector<const SimThread*>& interrupt_contexts, const std::vector<NamedQueue>& queues)
{
  if (!(elapsed > 0))
    return;
  for (const auto& cpu : world.cpus())
    put_time(m, "cpu." + cpu->name(), cpu->time(), elapsed);

  for (const SimThread* t : world.ordered_threads()) {
    CpuTime own = t->cpu_time();
    if (std::find(interrupt_contexts.begin(), interrupt_contexts.end(), t) != interrupt_contexts.end())
      own = plus(own, t->cpu().irq_time());
    put_time(m, "thread." + t->name(), own, elapsed);
  }

  // Occupancy, averaged over the queues of one name (in order of first appearance).
  std::vector<std::string> names;
  std::map<std::string, std::vector<Occupancy::Summary>> by_name;
  for (const NamedQueue& q : queues) {
    if (!by_name.count(q.name))
      names.push_back(q.name);
    by_name[q.name].push_back(q.occupancy->summarize(elapsed));
  }
  for (const std::string& name : names) {
    const auto& ss = by_name[name];
    const double n = static_cast<double>(ss.size());
    double mean = 0, mean_pct = 0, max_pct = 0, empty = 0;
    std::array<double, Occupancy::kBins> bins{};
    for (const auto& s : ss) {
      mean += s.mean / n;
      mean_pct += s.mean / s.capacity * 100.0 / n;
      max_pct = std::max(max_pct, s.max / s.capacity * 100.0);
      empty += s.empty_fraction * 100.0 / n;
      for (std::size_t b = 0; b < bins.size(); ++b)
        bins[b] += s.bin_fraction[b] * 100.0 / n;
    }
    const std::string p = "queue." + name;
    m[p + ".mean"] = mean;
    m[p + ".mean_percent"] = mean_pct;
    m[p + ".max_percent"] = max_pct;
    m[p + ".empty_time_percent"] = empty;
    for (int b = 0; b < Occupancy::kBins; ++b)
      m[fmt::format("{}.time_{}_{}_percent", p, b * 100 / Occupancy::kBins, (b + 1) * 100 / Occupancy::kBins)] =
          bins[static_cast<std::size_t>(b)];
  }
}

} // namespace vsim
