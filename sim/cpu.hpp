// A CPU of the model: a guest vCPU or a host CPU.
//
// Time is counted in cycles of the platform clock, so every cost is a whole
// number and sums of costs are exact in double precision. A CPU accounts the
// cycles it spends per category (what `top`/`time` would report), and keeps
// the interrupts that ran on it so that thread work on the same CPU is
// stretched by them: an interrupt preempts the thread, which resumes with
// its remaining work (the semantics of SimGrid's Exec::suspend()/resume(),
// computed directly on the CPU's timeline instead of with simcalls).
#pragma once

#include <array>
#include <deque>
#include <string>

#include "sim/timed_value.hpp"

namespace simgrid::s4u {
class Host;
}

namespace vsim {

enum class Side { Guest, Host };

// CPU time categories, as Linux's accounting names them. Hypervisor: time a
// guest vCPU spends outside the guest (VM exits) on the guest's behalf.
enum class Cat { User = 0, Sys = 1, Irq = 2, Hypervisor = 3 };
inline constexpr int kCats = 4;
const char* to_string(Cat c);

struct CpuTime {
  std::array<double, kCats> cycles{};
  double busy() const { return cycles[0] + cycles[1] + cycles[2] + cycles[3]; }
  double& operator[](Cat c) { return cycles[static_cast<int>(c)]; }
  double operator[](Cat c) const { return cycles[static_cast<int>(c)]; }
};

class Cpu {
public:
  Cpu(int index, Side side, std::string name, simgrid::s4u::Host* host);

  int index() const { return index_; }
  Side side() const { return side_; }
  const std::string& name() const { return name_; }
  simgrid::s4u::Host* host() const { return host_; }

  // Set-up: how many worker threads run here and whether interrupts arrive
  // here. A worker alone on a CPU without interrupts may run ahead of the
  // engine's clock without changing any result.
  void attach_thread() { ++threads_; }
  // The calling thread, attached like any other, is this CPU's interrupt
  // context: not a worker whose work interrupts stretch.
  void attach_interrupt_context()
  {
    --threads_;
    takes_irqs_ = true;
  }
  // Worker threads here must synchronise with the engine around each piece
  // of work: they share the CPU with each other or with interrupts.
  bool needs_sync() const { return threads_ > 1 || (threads_ == 1 && takes_irqs_); }

  void account(Cat c, double cycles) { time_[c] += cycles; }
  // Takes back interrupt work accounted by add_irq (see SimThread::drop_work_from).
  void unaccount_irq(Cat c, double cycles)
  {
    time_[c] -= cycles;
    irq_time_[c] -= cycles;
  }
  const CpuTime& time() const { return time_; }
  // The part of time() that interrupt work registered with add_irq took
  // (the interrupt context's CPU time: it charges no thread).
  const CpuTime& irq_time() const { return irq_time_; }
  // Whether an interrupt context runs here (attach_interrupt_context).
  bool takes_irqs() const { return takes_irqs_; }

  // --- interrupts -------------------------------------------------------
  // Earliest time an interrupt raised at t can start (interrupts on one CPU
  // run one after the other, never nested).
  Time irq_start(Time t) const { return t > irq_busy_until_ ? t : irq_busy_until_; }
  // Record that interrupt work (category c: Irq, or Hypervisor for the exit
  // that delivers it) ran in [start, start + cycles). If a thread's
  // work covering `start` was already committed (fast mode), the thread owes
  // the time instead and pays it at its next operation ("stolen time").
  void add_irq(Time start, double cycles, Cat c = Cat::Irq);

  // --- thread work ------------------------------------------------------
  // When thread work of `cycles` started at `start` completes, given the
  // interrupts registered so far (they stretch it).
  Time finish_time(Time start, double cycles) const;
  // The thread's work up to `t` will not be re-examined: later interrupts
  // that start before t become stolen time.
  void commit(Time t);
  double take_stolen();

  // Shared CPUs: end of the operation of the thread holding the CPU.
  Time busy_until() const { return busy_until_; }
  void set_busy_until(Time t) { busy_until_ = t; }
  bool held() const { return held_; }
  void set_held(bool h) { held_ = h; }

private:
  int index_;
  Side side_;
  std::string name_;
  simgrid::s4u::Host* host_;
  int threads_ = 0;
  bool takes_irqs_ = false;
  CpuTime time_;
  CpuTime irq_time_;
  Time irq_busy_until_ = 0;
  Time committed_until_ = 0;
  Time busy_until_ = 0;
  bool held_ = false;
  double stolen_ = 0;
  std::deque<std::pair<Time, Time>> irqs_;  // [start, end), in time order
};

}  // namespace vsim
