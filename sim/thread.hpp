// A simulated thread: a C++20 coroutine (sim/task.hpp) pinned to one CPU.
//
// Every simulated thread, interrupt context and daemon is a coroutine that
// the World (sim/world.hpp) resumes in one global order of events: time,
// then the thread's id, then the order the events were made. A thread's body
// takes simulated time only through the awaitables below
//
//   charge(cycles, Cat::Sys);         // CPU work, not yet run
//   co_await settle();                // run what was charged: one step
//   co_await run(cycles, Cat::Sys);   // charge, then settle
//   co_await sleep(cycles);           // time passing off the CPU (a latency)
//   bool slept = co_await wait();     // block until woken
//
// and whatever it reads or writes in between happens at now(), the engine's
// exact time: state other threads share is plain state, read when it is
// current. SimGrid's clock equals now() at every event, up to its rounding
// (one kernel timer, armed at the earliest pending event, performs every
// time advance).
#pragma once

#include <coroutine>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/cpu.hpp"
#include "sim/task.hpp"

namespace vsim {

class World;
class Trace;

class SimThread {
public:
  SimThread(World& world, std::string name, Cpu& cpu);
  virtual ~SimThread() = default;
  SimThread(const SimThread&) = delete;
  SimThread& operator=(const SimThread&) = delete;

  const std::string& name() const { return name_; }
  Cpu& cpu() const { return *cpu_; }
  int id() const { return id_; }
  // The engine's time: the thread's, as it has no unsettled work (below).
  Time now() const;
  World& world() const { return *world_; }

  // Service threads (interrupt contexts, workers) are daemons: the
  // simulation ends when every non-daemon thread has returned from body().
  bool daemon() const { return daemon_; }
  void set_daemon() { daemon_ = true; }

  // --- CPU work ------------------------------------------------------------
  // charge() adds CPU work to the thread's unsettled work; settle() runs it
  // as one step (one event). A thread settles before it reads or writes
  // state other threads see, so what it reads is as of the end of the work
  // before, exactly as if each charge had been a step of its own; now()
  // refuses to answer while work is unsettled, which keeps models honest.
  // A step waits for the CPU if another thread holds it (threads sharing a
  // CPU take turns, first come first served) and is stretched by interrupts
  // on the CPU. An interrupt context's steps are interrupt work instead:
  // they start when the CPU's earlier interrupts are done and preempt its
  // threads (become_interrupt_context).
  void charge(double cycles, Cat c) { debt_[c] += cycles; }
  bool unsettled() const { return debt_.busy() > 0; }
  // This thread is its CPU's interrupt context.
  void become_interrupt_context();

  struct [[nodiscard]] RunAwait {
    SimThread* t;
    double cycles; // besides the thread's unsettled work
    Cat c;
    bool await_ready() const noexcept { return cycles <= 0 && !t->unsettled(); }
    bool await_suspend(std::coroutine_handle<> h) { return t->begin_run(h, cycles, c); }
    void await_resume() const noexcept {}
  };
  RunAwait settle() { return RunAwait{this, 0, Cat::Sys}; }
  // charge(cycles, c), then settle().
  RunAwait run(double cycles, Cat c) { return RunAwait{this, cycles, c}; }

  struct [[nodiscard]] SleepAwait {
    SimThread* t;
    Time until;
    bool await_ready() const noexcept { return until <= t->now(); }
    bool await_suspend(std::coroutine_handle<> h) { return t->resume_at(h, until); }
    void await_resume() const noexcept {}
  };
  // Time passing without this thread using a CPU (a latency it waits out).
  SleepAwait sleep(double cycles) { return SleepAwait{this, now() + cycles}; }

  struct [[nodiscard]] WaitAwait {
    SimThread* t;
    bool await_ready()
    {
      t->no_debt("waited");
      return t->take_due_wakeups();
    }
    void await_suspend(std::coroutine_handle<> h) { t->begin_wait(h); }
    bool await_resume() const noexcept { return t->slept_; }
  };
  // Block until the earliest pending wake-up. If a wake-up at or before
  // now() is pending, return at once (it came while the thread was deciding
  // to sleep, as a wake_up() between prepare_to_wait() and schedule());
  // callers re-check their condition after waking, as kernel wait loops do.
  // Yields whether the thread actually slept.
  WaitAwait wait() { return WaitAwait{this}; }
  // Forget every pending wake-up (a thread whose wakers only wake it while
  // it sleeps calls this after waking).
  void clear_wakeups()
  {
    wakeups_ = {};
    wakers_.clear();
  }

  // --- the timeline (sim/trace.hpp) --------------------------------------
  // The World's recorder, or nullptr. mark() puts an instant named after
  // the kernel function the thread is in on its CPU's track, at the
  // engine's time (the start of the work it has charged and not settled);
  // with no recorder it is one null check.
  Trace* trace() const { return trace_; }
  void mark(std::string_view kernel_fn) const;
  void mark(std::string_view kernel_fn, std::string_view arg, double value) const;

  // --- used by other threads --------------------------------------------
  // Wake this thread at time t (t >= now()).
  void wake_at(Time t);
  bool waiting() const { return waiting_; }
  // A wake-up at or before now() is pending: a wait() now would return at
  // once, without sleeping (schedule() of a task already TASK_RUNNING).
  bool wakeup_due() const;
  // Waiting and not yet woken: a wake-up now would be try_to_wake_up() of a
  // sleeping task (the one that pays the remote enqueue and IPI).
  bool asleep() const { return waiting_ && !woken_; }

  // Per-thread CPU time (what `time` would report for it).
  const CpuTime& cpu_time() const { return time_; }
  // Interrupt work its CPU did while this thread held it (the scheduler's
  // runtime of the thread, sum_exec_runtime, includes it unless the kernel
  // accounts interrupt time apart).
  const CpuTime& interrupted_time() const { return interrupted_; }
  Time finished_at() const { return finished_at_; }

  // --- used by the World ------------------------------------------------
  // Creates the body's coroutine; the World resumes it at time 0.
  void start();
  // An event of this thread is due (gen: the suspension it is for).
  void on_event(std::uint64_t gen);
  // Whether an event made for suspension `gen` is still wanted.
  bool current(std::uint64_t gen) const { return gen == gen_ && pending_ != Pending::None; }
  // Once the run is over at `end`: takes back the CPU time of work that
  // started at or after it (a daemon's next piece, begun at the very
  // instant the last thread finished), and of work running across it the
  // part past it.
  void drop_work_from(Time end);
  // The CPU was handed over to this thread, which waited for it.
  void cpu_granted();
  // Without kernel preemption (CONFIG_PREEMPT_NONE): from keep_cpu() (a
  // system call's entry) to release_cpu() (its return to user space) the
  // thread keeps its CPU between its steps once it has it; a thread woken
  // on that CPU meanwhile runs only after (need_resched is acted on at the
  // return to user space or when the task sleeps, kernel/sched/core.c).
  // Waiting gives the CPU up until the thread's next step.
  void keep_cpu();
  void release_cpu();
  bool keeps_cpu() const { return in_kernel_; }

protected:
  virtual Task<> body() = 0;

private:
  Task<> main();
  // These return whether the thread is suspended (false: the step was the
  // next event and the thread goes on at once).
  bool resume_at(std::coroutine_handle<> h, Time t);
  bool begin_run(std::coroutine_handle<> h, double cycles, Cat c);
  bool start_work(bool running);
  void no_debt(const char* what) const;
  void begin_wait(std::coroutine_handle<> h);
  bool take_due_wakeups(); // pops the wake-ups at or before now; whether there were any
  void schedule(Time t);   // an event for the current suspension

  enum class Pending { None, Resume, Work, Wait };

  World* world_;
  Trace* trace_; // the World's recorder when the thread was made (World::set_trace comes first)
  std::string name_;
  Cpu* cpu_;
  bool in_kernel_ = false; // between keep_cpu() and release_cpu()
  int id_;
  bool daemon_ = false;
  bool waiting_ = false;
  bool woken_ = false; // a wake-up came while it waits (World::wake_ipi_to charged once)
  bool slept_ = false;
  Time finished_at_ = 0;
  Task<> root_;
  // The current suspension: what the thread waits for, and its handle.
  Pending pending_ = Pending::None;
  std::coroutine_handle<> suspended_;
  std::uint64_t gen_ = 0; // events made for earlier suspensions are stale
  Time armed_ = 0;        // while waiting: the time its event is set for
  // The work being run (Pending::Work).
  struct Work {
    Time start;
    double cycles; // in all
    CpuTime own;   // by category
    bool irq;      // interrupt work (the CPU's time, no thread's)
  };
  Work work_{};
  void account_work(const Work& w, double sign);
  CpuTime time_;
  CpuTime interrupted_;
  CpuTime debt_; // charged, not yet settled
  bool irq_context_ = false;
  bool begin_irq_step(std::coroutine_handle<> h);
  std::priority_queue<Time, std::vector<Time>, std::greater<Time>> wakeups_;
  // Traced runs only: who made each pending wake-up (its CPU and time), for
  // the arrow from waker to woken.
  struct Waker {
    const Cpu* cpu;
    Time at;
  };
  std::multimap<Time, Waker> wakers_;
  // Out of the hot paths: only traced runs call these.
  [[gnu::cold, gnu::noinline]] void trace_work(Time end) const;
  [[gnu::cold, gnu::noinline]] void forget_wakers(bool draw);
  // Work started at or after the engine's time (it may start at the run's
  // very end), in start order.
  std::deque<Work> recent_;
  void remember(const Work& w);
};

} // namespace vsim
