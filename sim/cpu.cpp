#include "sim/cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/thread.hpp"

namespace vsim {

namespace {
constexpr Time kNever = std::numeric_limits<Time>::infinity();
}

const char* to_string(Cat c)
{
  switch (c) {
  case Cat::User:
    return "user";
  case Cat::Sys:
    return "sys";
  case Cat::Irq:
    return "irq";
  case Cat::Hypervisor:
    return "hypervisor";
  }
  return "?";
}

Cpu::Cpu(int index, Side side, std::string name) : index_(index), side_(side), name_(std::move(name)) {}

void Cpu::add_irq(Time now, Time start, double cycles, Cat c)
{
  if (now > start)
    throw std::logic_error("Cpu " + name_ + ": an interrupt registered after its start");
  if (start < irq_busy_until_)
    throw std::logic_error("Cpu " + name_ + ": interrupts registered out of time order");
  const Time end = start + cycles;
  irq_busy_until_ = end;
  time_[c] += cycles;
  irq_time_[c] += cycles;
  // Only the work on the CPU now, or work starting from now on, can be
  // stretched: what ended before either is forgotten (memory stays flat).
  // (Not before `start`: work may start between now and a piece queued
  // behind earlier ones, inside them.)
  const Time keep_from = holder_ ? work_start_ : now;
  while (!irqs_.empty() && irqs_.front().second <= keep_from)
    irqs_.pop_front();
  irqs_.emplace_back(start, end);
}

void Cpu::add_tick(Tick t)
{
  if (!(t.period > 0) || t.cycles < 0 || 2 * t.cycles >= t.period || t.phase < 0)
    throw std::logic_error("Cpu " + name_ + ": a tick needs a period above twice its cost and a phase from 0");
  if (ticks_.size() == kMaxTicks)
    throw std::logic_error("Cpu " + name_ + ": more tick grids than kMaxTicks");
  ticks_.push_back(t);
  next_tick_[ticks_.size() - 1] = std::numeric_limits<Time>::quiet_NaN(); // none found yet
}

Time Cpu::next_tick(std::size_t g, Time t) const
{
  // The grid point at or after t: the last one found, when t is within the
  // period before it (starts come mostly in time order), else computed.
  const Tick& k = ticks_[g];
  Time& cached = next_tick_[g];
  if (!(t <= cached && t > cached - k.period))
    cached = k.phase + std::ceil((t - k.phase) / k.period) * k.period;
  return cached;
}

Cpu::Walk Cpu::walk(Time start, double cycles, Time until) const
{
  Time t = start;
  double done = 0;
  Walk out{start, 0, {}};
  // Each grid's first tick at or after the start.
  std::array<Time, kMaxTicks> next{};
  for (std::size_t g = 0; g < ticks_.size(); ++g)
    next[g] = next_tick(g, start);
  // Work that ends before the next tick and interrupt, the common case.
  if (irqs_.empty() || irqs_.back().second <= start) {
    Time first = kNever;
    for (std::size_t g = 0; g < ticks_.size(); ++g)
      first = std::min(first, next[g]);
    const Time stop = std::min(start + cycles, until);
    if (first >= stop) {
      out.t = stop;
      out.done = stop - start;
      return out;
    }
  }
  auto it = irqs_.begin();
  for (;;) {
    while (it != irqs_.end() && it->second <= t)
      ++it;
    // An interrupt running at t holds the CPU until its end, even for work
    // of no length (it resumes once the interrupt is done); one starting
    // at t preempts work that has some left.
    if (it != irqs_.end() && (it->first < t || (it->first == t && cycles > done)) && t < until) {
      t = std::min(it->second, until);
      ++it;
      continue;
    }
    const Time irq_at = it != irqs_.end() ? it->first : kNever;
    Time tick_at = kNever;
    std::size_t grid = 0;
    for (std::size_t g = 0; g < ticks_.size(); ++g)
      if (const Time at = std::max(next[g], t); at < tick_at) {
        tick_at = at;
        grid = g;
      }
    // A tick runs whole, not across an interrupt (the CPU is busy once,
    // not twice): an interrupt that would start before the tick's handler
    // ends goes first, and the tick after it.
    const bool tick_first = tick_at < irq_at && !(irq_at < tick_at + ticks_[grid].cycles);
    const Time p = tick_first ? tick_at : irq_at;
    // Runs until the next preemption, the work's end or `until`.
    const Time stop = std::min(t + (cycles - done), until);
    if (p >= stop) {
      out.t = stop;
      out.done = done + (stop - t);
      return out;
    }
    done += p - t;
    if (!tick_first) {
      t = it->second; // preempted until the interrupt ends
      ++it;
    } else {
      const Tick& k = ticks_[grid];
      t = tick_at + k.cycles;
      ++out.ticks[grid];
      // The grid's next tick after this one's due time (missed ones collapse).
      next[grid] = k.phase + (std::floor((tick_at - k.phase) / k.period) + 1) * k.period;
    }
    if (t >= until) {
      out.t = until;
      out.done = done;
      return out;
    }
  }
}

Time Cpu::finish_time(Time start, double cycles, std::array<int, kMaxTicks>* ticks) const
{
  const Walk w = walk(start, cycles, kNever);
  if (ticks)
    *ticks = w.ticks;
  return w.t;
}

double Cpu::work_done(Time start, Time until) const
{
  return walk(start, kNever, until).done;
}

void Cpu::account_ticks(const std::array<int, kMaxTicks>& ticks)
{
  for (std::size_t g = 0; g < ticks_.size(); ++g) {
    if (ticks[g] <= 0)
      continue;
    const double c = ticks[g] * ticks_[g].cycles;
    time_[ticks_[g].cat] += c;
    irq_time_[ticks_[g].cat] += c;
    ticks_taken_ += static_cast<std::uint64_t>(ticks[g]);
    if (on_tick_)
      on_tick_(static_cast<int>(g), c);
  }
}

int Cpu::select_idle_state(Time idle_start, double* predicted) const
{
  // get_typical_interval(): the mean of the last 8 idle periods (us) when
  // their spread is small (variance <= 400 us^2, or mean^2 > 36 variance
  // with at least 6 of the 8 left), dropping the largest and trying again
  // down to 6 of them.
  double typical = kNever;
  double thresh = kNever;
  for (;;) {
    double sum = 0, max = 0;
    int n = 0;
    for (double c : idle_history_)
      if (const double v = c / us_cycles_; v <= thresh) {
        sum += v;
        max = std::max(max, v);
        ++n;
      }
    if (max == 0)
      break;
    const double avg = sum / n;
    double var = 0;
    for (double c : idle_history_)
      if (const double v = c / us_cycles_; v <= thresh)
        var += (v - avg) * (v - avg);
    var /= n;
    if ((avg * avg > 36 * var && n * 4 >= 8 * 3) || var <= 400) {
      typical = avg * us_cycles_;
      break;
    }
    if (n * 4 <= 8 * 3)
      break;
    thresh = max * (1 - 1e-12); // below the largest: drop it
  }
  // The next timer: the next tick of the grids (with the tick running).
  double next_timer = kNever;
  for (std::size_t g = 0; g < ticks_.size(); ++g)
    next_timer = std::min(next_timer, next_tick(g, idle_start) - idle_start);
  // Without a typical interval menu scales the next timer by its learned
  // correction factor (the measured idle time over the timer's, a running
  // average per bucket): with no timer modelled nearer, that is the mean
  // of the recent idle periods (none yet: the next timer itself).
  if (typical == kNever) {
    double sum = 0;
    for (double c : idle_history_)
      sum += c;
    if (sum > 0)
      typical = sum / static_cast<double>(idle_history_.size());
  }
  const double pred = std::min(typical, next_timer);
  if (predicted)
    *predicted = pred;
  int chosen = 0;
  for (std::size_t i = 0; i < idle_states_.size(); ++i)
    if (idle_states_[i].residency <= pred && idle_states_[i].exit <= pred)
      chosen = static_cast<int>(i);
    else
      break;
  return chosen;
}

double Cpu::wake_from_idle(Time now)
{
  if (idle_states_.empty() || !idle_at(now))
    return 0;
  const Time since = idle_since();
  const int s = select_idle_state(since);
  idle_history_[idle_next_] = now - since;
  idle_next_ = (idle_next_ + 1) % idle_history_.size();
  ++idle_exits_;
  return idle_states_[static_cast<std::size_t>(s)].exit;
}

void Cpu::work_started(Time t)
{
  work_start_ = t;
  while (!irqs_.empty() && irqs_.front().second <= t)
    irqs_.pop_front();
}

SimThread* Cpu::next(Time now)
{
  holder_ = nullptr;
  // Kept by a thread between its steps: only it may have the CPU.
  auto it = kept_by_ ? std::find(queue_.begin(), queue_.end(), kept_by_) : queue_.begin();
  if (it == queue_.end()) {
    free_since_ = now;
    return nullptr;
  }
  holder_ = *it;
  queue_.erase(it);
  return holder_;
}

SimThread* Cpu::release_kept(Time now)
{
  kept_by_ = nullptr;
  if (holder_ || queue_.empty())
    return nullptr;
  return next(now);
}

} // namespace vsim
