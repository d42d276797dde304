#include "sim/cpu.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/thread.hpp"

namespace vsim {

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

Time Cpu::finish_time(Time start, double cycles) const
{
  Time t = start;
  double remaining = cycles;
  for (const auto& [s, e] : irqs_) {
    if (e <= t)
      continue;
    if (s >= t + remaining)
      break;
    if (s > t) {
      remaining -= s - t;
      t = s;
    }
    t = e; // preempted until the interrupt ends
  }
  return t + remaining;
}

double Cpu::work_done(Time start, Time until) const
{
  double irq = 0;
  for (const auto& [s, e] : irqs_)
    if (e > start && s < until)
      irq += std::min(e, until) - std::max(s, start);
  return std::max(0.0, (until - start) - irq);
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
