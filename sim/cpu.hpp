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
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

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
  // Bytes the work modelled on this core brought into its private cache
  // (copies' sources and destinations, zeroing), in order: a later reader of
  // a line this core wrote compares what came in since with the cache's
  // size (models/cache_reuse.hpp).
  void fill_cache(double bytes) { cache_fills_ += static_cast<std::uint64_t>(bytes); }
  std::uint64_t cache_fills() const { return cache_fills_; }
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

  // --- the scheduler tick -----------------------------------------------
  // The periodic tick (kernel/time/tick-sched.c tick_sched_timer: every
  // 1/HZ on the grid phase + k * period, which tick_nohz_restart keeps
  // after an idle period) under CONFIG_NO_HZ_IDLE: a CPU that is idle has
  // no tick, so only thread work is stretched by one, `cycles` each (the
  // handler: update_process_times, scheduler_tick, the timer softirq; in a
  // guest also the VM exits of the timer's expiry and re-arming), accounted
  // as category `cat` when the work it stretched ends. A tick due while an
  // interrupt runs fires at its end; ticks missed meanwhile collapse into
  // that one (hrtimer_forward). A vCPU has two: the guest kernel's, and the
  // host's on the core under it (an external-interrupt exit). period 0: none.
  struct Tick {
    double period = 0, phase = 0, cycles = 0;
    Cat cat = Cat::Irq;
  };
  static constexpr int kMaxTicks = 2;
  void add_tick(Tick t);
  // Told of each tick that lands in thread work (its grid's index, its
  // cycles), as the work it stretched ends: RoundTrips::note.
  void on_tick(std::function<void(int grid, double cycles)> f) { on_tick_ = std::move(f); }

  // --- idle states --------------------------------------------------------
  // The host core's idle states (drivers/idle/intel_idle.c tables: each an
  // exit latency and a target residency, shallowest first) and the menu
  // governor's choice among them (drivers/cpuidle/governors/menu.c
  // menu_select): the predicted idle time is the typical interval of the
  // last 8 idle periods (get_typical_interval) when there is one, else
  // their mean (the next timer scaled by menu's correction factor, which
  // learns that ratio), at most the time to the next tick; the deepest state
  // whose target residency and exit latency are both within it is chosen
  // (with the tick running, latency_req is capped at the prediction).
  struct IdleState {
    double exit = 0, residency = 0; // cycles
  };
  void set_idle_states(std::vector<IdleState> states, double us_cycles)
  {
    idle_states_ = std::move(states);
    us_cycles_ = us_cycles;
  }
  // A wake-up finds the CPU idle since `idle_since()`: the exit latency of
  // the state the governor chose when it went idle (0 with no states, or
  // when the CPU is not idle at `now`); the idle period joins the history.
  double wake_from_idle(Time now);
  // The state the governor picks for an idle period predicted from the
  // history, and the prediction (cycles; infinity: none).
  int select_idle_state(Time idle_start, double* predicted = nullptr) const;
  std::uint64_t idle_exits() const { return idle_exits_; }

  // --- thread work ------------------------------------------------------
  // When thread work of `cycles` started at `start` completes, given the
  // interrupts registered so far and the ticks (they stretch it).
  // Interrupts start at or after the time they are registered, so once the
  // engine reaches this time without a new one before it, the answer is
  // final. `ticks` (optional): how many ticks landed in it.
  Time finish_time(Time start, double cycles, std::array<int, kMaxTicks>* ticks = nullptr) const;
  // Cycles of thread work done in [start, until] by work that has held the
  // CPU since `start`: the time less the interrupts and ticks inside it.
  // Exact for the holder's current work (the interrupts from its start are
  // kept); for earlier work, whose interrupts may be forgotten, it is at
  // least the work's own cycles once that work has ended.
  double work_done(Time start, Time until) const;
  // Thread work stretched by ticks[g] ticks of grid g has ended (now):
  // their time is the CPU's (interrupt context), and on_tick's.
  void account_ticks(const std::array<int, kMaxTicks>& ticks);
  // How many ticks have landed in thread work so far.
  std::uint64_t ticks_taken() const { return ticks_taken_; }

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
  // Nothing runs on the CPU at t: no thread holds or keeps it and no
  // interrupt is running (a vCPU halted, a host core idle).
  bool idle_at(Time t) const { return holder_ == nullptr && !kept_by_ && irq_start(t) == t; }

private:
  // Walks thread work from `start` through the interrupts and ticks until
  // `cycles` of it are done or the time reaches `until`, whichever first.
  struct Walk {
    Time t;
    double done;
    std::array<int, kMaxTicks> ticks;
  };
  Walk walk(Time start, double cycles, Time until) const;
  // Grid g's first tick at or after t.
  Time next_tick(std::size_t g, Time t) const;

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
  std::vector<Tick> ticks_;
  mutable std::array<Time, kMaxTicks> next_tick_{}; // next_tick's last answer per grid
  std::function<void(int, double)> on_tick_;
  std::uint64_t ticks_taken_ = 0;
  std::vector<IdleState> idle_states_;
  double us_cycles_ = 0;
  std::array<double, 8> idle_history_{}; // the last 8 idle periods (cycles), a ring
  std::size_t idle_next_ = 0;
  std::uint64_t idle_exits_ = 0;
  std::uint64_t cache_fills_ = 0;
};

} // namespace vsim
