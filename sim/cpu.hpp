// A CPU of the model: a guest vCPU or a host CPU.
//
// Time is counted in cycles of the platform clock, so every cost is a whole
// number and sums of costs are exact in double precision. A CPU accounts the
// cycles it spends per category (what `top`/`time` would report), and keeps
// the interrupts that run on it so that thread work on the same CPU is
// stretched by them: an interrupt preempts the thread, which resumes with
// its remaining work (the semantics of SimGrid's Exec::suspend()/resume(),
// computed on the CPU's timeline instead of with simcalls). Threads sharing
// a CPU take turns, each piece of work running to its end.
#pragma once

#include <array>
#include <deque>
#include <string>

#include "sim/time.hpp"

namespace vsim {

class SimThread;

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
  Cpu(int index, Side side, std::string name);

  int index() const { return index_; }
  Side side() const { return side_; }
  const std::string& name() const { return name_; }

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

  // --- interrupts -------------------------------------------------------
  // Earliest time an interrupt raised at t can start (interrupts on one CPU
  // run one after the other, never nested).
  Time irq_start(Time t) const { return t > irq_busy_until_ ? t : irq_busy_until_; }
  // Record that interrupt work (category c: Irq, or Hypervisor for the exit
  // that delivers it) runs in [start, start + cycles).
  // `now` is the engine's time when it is registered (<= start: a piece can
  // be queued behind earlier ones); work starting from now on can still be
  // stretched by any interrupt that ends after now.
  void add_irq(Time start, double cycles, Cat c = Cat::Irq) { add_irq(start, start, cycles, c); }
  void add_irq(Time now, Time start, double cycles, Cat c);

  // --- thread work ------------------------------------------------------
  // When thread work of `cycles` started at `start` completes, given the
  // interrupts registered so far (they stretch it). Interrupts start at or
  // after the time they are registered, so once the engine reaches this
  // time without a new one before it, the answer is final.
  Time finish_time(Time start, double cycles) const;
  // Cycles of thread work done in [start, until] by work that has held the
  // CPU since `start`: the time less the interrupts inside it. Exact for
  // the holder's current work (the interrupts from its start are kept); for
  // earlier work, whose interrupts may be forgotten, it is at least the
  // work's own cycles once that work has ended.
  double work_done(Time start, Time until) const;

  // Threads sharing the CPU take turns: the one holding it, and those
  // waiting for it in arrival order.
  SimThread* holder() const { return holder_; }
  void set_holder(SimThread* t) { holder_ = t; }
  // The holder's current work started at t: interrupts that ended before
  // it cannot stretch it (nor any later work), and are forgotten.
  void work_started(Time t);
  std::size_t irq_intervals() const { return irqs_.size(); }
  void enqueue(SimThread* t) { queue_.push_back(t); }
  // The holder's work ended at `now`: the next waiting thread (the CPU is
  // now its), or nullptr (the CPU has no thread work from `now`).
  SimThread* next(Time now);
  // Without kernel preemption (CONFIG_PREEMPT_NONE) a thread inside a
  // system call keeps its CPU between its steps until it sleeps or returns
  // to user space: while one is `kept_by`, the others wait for it.
  SimThread* kept_by() const { return kept_by_; }
  void keep(SimThread* t) { kept_by_ = t; }
  // The keeper gave the CPU up at `now`, between its steps: the next
  // waiting thread, if any and the CPU is free (the CPU is then its).
  SimThread* release_kept(Time now);
  // With no holder: since when the CPU has run nothing, neither thread
  // work nor interrupts (as far as the interrupts registered so far go).
  Time idle_since() const { return free_since_ > irq_busy_until_ ? free_since_ : irq_busy_until_; }

private:
  int index_;
  Side side_;
  std::string name_;
  CpuTime time_;
  CpuTime irq_time_;
  Time irq_busy_until_ = 0;
  SimThread* holder_ = nullptr;
  SimThread* kept_by_ = nullptr;
  Time work_start_ = 0;
  Time free_since_ = 0;
  std::deque<SimThread*> queue_;
  std::deque<std::pair<Time, Time>> irqs_; // [start, end), in time order
};

} // namespace vsim
