#include "sim/cpu.hpp"

#include <stdexcept>

namespace vsim {

const char* to_string(Cat c)
{
  switch (c) {
    case Cat::User: return "user";
    case Cat::Sys: return "sys";
    case Cat::Irq: return "irq";
    case Cat::Hypervisor: return "hypervisor";
  }
  return "?";
}

Cpu::Cpu(int index, Side side, std::string name, simgrid::s4u::Host* host)
    : index_(index), side_(side), name_(std::move(name)), host_(host)
{
}

void Cpu::add_irq(Time start, double cycles, Cat c)
{
  if (start < irq_busy_until_)
    throw std::logic_error("Cpu " + name_ + ": interrupts registered out of time order");
  Time end = start + cycles;
  irq_busy_until_ = end;
  time_[c] += cycles;
  irq_time_[c] += cycles;
  if (threads_ <= 0)  // no worker to preempt: nothing to remember
    return;
  if (start < committed_until_)
    stolen_ += cycles;
  else
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
    t = e;  // preempted until the interrupt ends
  }
  return t + remaining;
}

void Cpu::commit(Time t)
{
  if (t > committed_until_)
    committed_until_ = t;
  while (!irqs_.empty() && irqs_.front().second <= committed_until_)
    irqs_.pop_front();
}

double Cpu::take_stolen()
{
  double s = stolen_;
  stolen_ = 0;
  return s;
}

}  // namespace vsim
