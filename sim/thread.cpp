#include "sim/thread.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/world.hpp"

namespace vsim {

namespace {
constexpr Time kNever = std::numeric_limits<Time>::infinity();
}

// --- coroutine frames ------------------------------------------------------

namespace detail {
namespace {
constexpr std::size_t kGrain = 64;
std::vector<std::vector<void*>>& free_lists()
{
  static std::vector<std::vector<void*>> lists;
  return lists;
}
} // namespace

void* FramePool::allocate(std::size_t n)
{
  const std::size_t k = (n + kGrain - 1) / kGrain;
  auto& lists = free_lists();
  if (k < lists.size() && !lists[k].empty()) {
    void* p = lists[k].back();
    lists[k].pop_back();
    return p;
  }
  return ::operator new(k* kGrain);
}

void FramePool::release(void* p, std::size_t n) noexcept
{
  const std::size_t k = (n + kGrain - 1) / kGrain;
  auto& lists = free_lists();
  try {
    if (k >= lists.size())
      lists.resize(k + 1);
    lists[k].push_back(p);
  } catch (...) {
    ::operator delete(p);
  }
}
} // namespace detail

// --- the thread ------------------------------------------------------------

SimThread::SimThread(World& world, std::string name, Cpu& cpu)
    : world_(&world), trace_(world.trace()), name_(std::move(name)), cpu_(&cpu)
{
  id_ = world.register_thread(this);
}

Time SimThread::now() const
{
  no_debt("read the time");
  return world_->now();
}

Task<> SimThread::main()
{
  try {
    co_await body();
    co_await settle();
  } catch (const std::exception& e) {
    // Recorded, not thrown: World::run() reports it once the engine stops.
    world_->fail(name_ + ": " + e.what());
  }
  debt_ = {}; // what a failed body left unsettled
  finished_at_ = world_->now();
  pending_ = Pending::None;
  world_->thread_finished(*this);
}

void SimThread::start()
{
  root_ = main();
  suspended_ = root_.handle();
  pending_ = Pending::Resume;
  schedule(0);
}

void SimThread::schedule(Time t)
{
  world_->schedule(t, *this, gen_);
}

bool SimThread::resume_at(std::coroutine_handle<> h, Time t)
{
  no_debt("slept");
  ++gen_;
  if (world_->take_directly(t, *this))
    return false;
  suspended_ = h;
  pending_ = Pending::Resume;
  schedule(t);
  return true;
}

void SimThread::no_debt(const char* what) const
{
  if (unsettled())
    throw std::logic_error(
        fmt::format("invariant violated: thread {} {} with unsettled CPU work (settle() first)", name_, what));
}

void SimThread::become_interrupt_context()
{
  irq_context_ = true;
}

// An interrupt context's step: its pieces registered on the CPU, one after
// the other from when the CPU's earlier interrupts are done; the thread
// resumes at the end of the last.
bool SimThread::begin_irq_step(std::coroutine_handle<> h)
{
  Time end = world_->now();
  for (Cat c : {Cat::Hypervisor, Cat::Irq, Cat::Sys, Cat::User}) {
    const double cycles = debt_[c];
    if (cycles <= 0)
      continue;
    const Time start = cpu_->irq_start(world_->now());
    cpu_->add_irq(world_->now(), start, cycles, c);
    if (SimThread* h = cpu_->holder(); h && h != this)
      h->interrupted_[c] += cycles; // it stretches the holder's step
    Work w{start, cycles, {}, true};
    w.own[c] = cycles;
    remember(w);
    if (Trace* tr = trace_) [[unlikely]]
      tr->slice(*cpu_, start, start + cycles, name_, c, w.own);
    end = start + cycles;
  }
  debt_ = {};
  return resume_at(h, end);
}

void SimThread::remember(const Work& w)
{
  // Only work that may reach past the run's end matters: work not over
  // before the engine's time (its CPU time runs at least `cycles` from its
  // start; interrupt work may start later than now). At a run's natural end
  // that is a daemon's (the other threads have finished, or are the one
  // finishing); a run the run-length monitor ends (World::end_now) leaves
  // any thread's work running across it.
  const Time t = world_->now();
  while (!recent_.empty() && recent_.front().start + recent_.front().cycles < t)
    recent_.pop_front();
  recent_.push_back(w);
}

void SimThread::account_work(const Work& w, double sign)
{
  for (int i = 0; i < kCats; ++i) {
    const Cat c = static_cast<Cat>(i);
    if (w.irq) {
      if (sign < 0 && w.own[c] != 0)
        cpu_->unaccount_irq(c, w.own[c]);
      continue;
    }
    if (const double v = sign * w.own[c]; v != 0) {
      time_[c] += v;
      cpu_->account(c, v);
    }
  }
}

void SimThread::drop_work_from(Time end)
{
  // Work that started at or after the end is not part of the run; of work
  // running across it, the part past it. Interrupt work runs unstretched;
  // thread work is stretched by the CPU's interrupts, so what it did by the
  // end is the time since its start less those interrupts (Cpu::work_done),
  // and its CPU time past the end is taken back in proportion.
  for (const Work& w : recent_) {
    const double done = w.start >= end ? 0.0 : w.irq ? end - w.start : cpu_->work_done(w.start, end);
    if (done >= w.cycles)
      continue;
    Work past = w;
    const double f = (w.cycles - done) / w.cycles;
    for (int c = 0; c < kCats; ++c)
      past.own.cycles[static_cast<std::size_t>(c)] *= f;
    account_work(past, -1);
  }
  recent_.clear();
}

bool SimThread::begin_run(std::coroutine_handle<> h, double cycles, Cat c)
{
  charge(cycles, c);
  if (irq_context_)
    return begin_irq_step(h);
  suspended_ = h;
  pending_ = Pending::Work;
  ++gen_;
  work_ = Work{world_->now(), debt_.busy(), debt_, false};
  debt_ = {};
  if (cpu_->holder() || (cpu_->kept_by() && cpu_->kept_by() != this)) { // another thread's: take turns
    cpu_->enqueue(this);
    return true;
  }
  cpu_->set_holder(this);
  return start_work(true);
}

// Another thread's step ended and handed the CPU over: this one's starts
// (it is suspended, so its end is an event).
void SimThread::cpu_granted()
{
  start_work(false);
}

void SimThread::keep_cpu()
{
  in_kernel_ = true;
  if (!cpu_->kept_by() && (!cpu_->holder() || cpu_->holder() == this))
    cpu_->keep(this);
}

void SimThread::release_cpu()
{
  in_kernel_ = false;
  if (cpu_->kept_by() == this)
    if (SimThread* next = cpu_->release_kept(world_->now()))
      next->cpu_granted();
}

bool SimThread::start_work(bool running)
{
  if (in_kernel_)
    cpu_->keep(this);
  Work& w = work_;
  w.start = world_->now();
  account_work(w, 1);
  remember(w);
  cpu_->work_started(w.start);
  std::array<int, Cpu::kMaxTicks> ticks{};
  const Time end = cpu_->finish_time(w.start, w.cycles, &ticks);
  // If nothing else happens before its end, no interrupt can stretch it
  // (interrupts come from events): the thread goes on at once.
  if (running && world_->take_directly(end, *this)) {
    cpu_->account_ticks(ticks);
    if (trace_) [[unlikely]]
      trace_work(end);
    pending_ = Pending::None;
    suspended_ = {};
    if (SimThread* next = cpu_->next(end))
      next->cpu_granted();
    return false;
  }
  schedule(end);
  return true;
}

void SimThread::begin_wait(std::coroutine_handle<> h)
{
  no_debt("waited");
  // schedule() gives the CPU up, also without kernel preemption; the
  // thread keeps it again from its next step (start_work).
  if (cpu_->kept_by() == this)
    if (SimThread* next = cpu_->release_kept(world_->now()))
      next->cpu_granted();
  suspended_ = h;
  pending_ = Pending::Wait;
  waiting_ = true;
  woken_ = false;
  ++gen_;
  armed_ = wakeups_.empty() ? kNever : wakeups_.top();
  if (armed_ != kNever)
    schedule(armed_);
}

void SimThread::wake_at(Time t)
{
  if (waiting_ && !woken_) { // try_to_wake_up() of a sleeping task: the first one wakes it
    woken_ = true;
    world_->wake_ipi_to(*this);
  }
  wakeups_.push(t);
  if (trace_) [[unlikely]]
    if (const SimThread* waker = world_->current())
      wakers_.emplace(t, Waker{&waker->cpu(), world_->now()});
  // Only a wake-up earlier than the one the sleep is set for moves it;
  // later ones are found pending when the thread waits again.
  if (waiting_ && t < armed_) {
    armed_ = t;
    ++gen_;
    schedule(t);
  }
}

bool SimThread::wakeup_due() const
{
  return !wakeups_.empty() && wakeups_.top() <= world_->now();
}

bool SimThread::take_due_wakeups()
{
  bool any = false;
  const Time t = world_->now();
  if (trace_) [[unlikely]]
    forget_wakers(false);
  while (!wakeups_.empty() && wakeups_.top() <= t) {
    wakeups_.pop();
    any = true;
  }
  slept_ = false;
  return any;
}

void SimThread::on_event(std::uint64_t gen)
{
  if (gen != gen_ || pending_ == Pending::None) {
    ++world_->stats().stale;
    return;
  }
  ++world_->stats().events;
  switch (pending_) {
  case Pending::Work: {
    // Interrupts registered since the work started may have stretched it.
    std::array<int, Cpu::kMaxTicks> ticks{};
    const Time end = cpu_->finish_time(work_.start, work_.cycles, &ticks);
    if (end > world_->now()) {
      schedule(end);
      return;
    }
    cpu_->account_ticks(ticks);
    if (trace_) [[unlikely]]
      trace_work(end);
    if (SimThread* next = cpu_->next(end))
      next->cpu_granted();
    break;
  }
  case Pending::Wait:
    if (trace_) [[unlikely]]
      forget_wakers(true);
    waiting_ = false;
    take_due_wakeups(); // this one, and any for the same instant: one wake-up
    slept_ = true;
    break;
  case Pending::Resume:
  case Pending::None:
    break;
  }
  pending_ = Pending::None;
  std::coroutine_handle<> h = suspended_;
  suspended_ = {};
  h.resume();
}

// --- the timeline -----------------------------------------------------------

void SimThread::trace_work(Time end) const
{
  if (work_.cycles <= 0)
    return;
  // It ran once the interrupts running when it started were done (those
  // are still the CPU's: it keeps every interrupt that can touch the
  // holder's work).
  const Time start = cpu_->finish_time(work_.start, 0);
  Cat most = Cat::User;
  for (Cat c : {Cat::Sys, Cat::Irq, Cat::Hypervisor})
    if (work_.own[c] > work_.own[most])
      most = c;
  trace()->slice(*cpu_, start, end, name_, most, work_.own);
}

// The wake-ups due by now are taken; the earliest one woke the thread (when
// it slept: draw its arrow, from the waker's CPU to this one).
void SimThread::forget_wakers(bool draw)
{
  const Time t = world_->now();
  auto due = wakers_.upper_bound(t);
  if (draw && due != wakers_.begin()) {
    const Waker& w = wakers_.begin()->second;
    trace()->wakeup(*w.cpu, w.at, *cpu_, t, name_);
  }
  wakers_.erase(wakers_.begin(), due);
}

} // namespace vsim
