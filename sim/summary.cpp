#include "sim/summary.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace vsim {

double thread_cycles(const std::vector<SimThread*>& threads, std::initializer_list<Cat> cats)
{
  double c = 0;
  for (const SimThread* t : threads)
    for (Cat cat : cats)
      c += t->cpu_time()[cat];
  return c;
}

double interrupted_cycles(const std::vector<SimThread*>& threads)
{
  double c = 0;
  for (const SimThread* t : threads)
    c += t->interrupted_time().busy();
  return c;
}

void check_cpu_busy(const World& world, Time elapsed)
{
  Time end = elapsed;
  for (const auto& t : world.ordered_threads())
    end = std::max(end, t->finished_at());
  // Work running across the end is taken back up to the end exactly
  // (SimThread::drop_work_from), so only rounding may remain: a CPU busy
  // longer than the run is double counting.
  for (const auto& c : world.cpus())
    if (c->time().busy() > end * (1 + 1e-9))
      throw std::logic_error(fmt::format("invariant violated: CPU {} busy for {} cycles in a run of {} cycles",
                                         c->name(), c->time().busy(), end));
}

void append_run_metrics(std::map<std::string, double>& m, const World& world, Time elapsed, double clock_ghz,
                        std::uint64_t delivered, const std::vector<SimThread*>& writers,
                        const std::vector<SimThread*>& readers)
{
  auto seconds = [&](double cycles) { return cycles / (clock_ghz * 1e9); };
  const double secs = seconds(elapsed);
  m["elapsed_seconds"] = secs;
  m["throughput_MBps"] = static_cast<double>(delivered) / secs / 1e6;
  m["writer_sys_seconds"] = seconds(thread_cycles(writers, {Cat::Sys, Cat::Hypervisor}));
  m["writer_user_seconds"] = seconds(thread_cycles(writers, {Cat::User}));
  m["reader_sys_seconds"] = seconds(thread_cycles(readers, {Cat::Sys, Cat::Hypervisor}));
  m["reader_user_seconds"] = seconds(thread_cycles(readers, {Cat::User}));
  auto side_percent = [&](Side side) {
    double busy = 0;
    for (const auto& c : world.cpus())
      if (c->side() == side)
        busy += c->time().busy();
    return busy / elapsed * 100.0;
  };
  m["guest_cpu_percent"] = side_percent(Side::Guest);
  m["host_cpu_percent"] = side_percent(Side::Host);
  // What the run cost the engine (figures for the speed benchmarks).
  const SimStats& st = world.stats();
  m["sim_events"] = static_cast<double>(st.events + st.direct);
  m["sim_simcalls"] = static_cast<double>(st.advances);
}

} // namespace vsim
