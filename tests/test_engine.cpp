// The engine (sim/world.*, sim/thread.*, sim/cpu.*): simulated threads as
// coroutines resumed in one order of events (time, thread, sequence), CPU
// work stretched by interrupts and shared by turns, sleeping and waking, the
// end of a run. Each simulation runs in a forked child (one SimGrid engine
// per process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/world.hpp"
#include "tests/sim_support.hpp"

using namespace vsim;
using namespace vsim::testing;

namespace {

// A sleeper that waits twice; a waker that issues `first` wake-ups at time
// 100, works 1000 cycles, then issues `second`. Returns the wake-up times,
// then the events processed and the stale ones.
std::vector<double> sleeper_and_waker(const std::vector<Time>& first, const std::vector<Time>& second)
{
  return in_child([&] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    Cpu& b = w.add_cpu(Side::Host, "b");
    std::vector<double> out;
    auto& sleeper = w.spawn<Scripted>("sleeper", a, [&](Scripted& t) -> Task<> {
      for (int i = 0; i < 2; ++i) {
        co_await t.wait();
        out.push_back(t.now());
        t.clear_wakeups();
      }
    });
    w.spawn<Scripted>("waker", b, [&, first, second](Scripted& t) -> Task<> {
      co_await t.run(100, Cat::Sys);
      for (Time at : first)
        sleeper.wake_at(at);
      co_await t.run(1000, Cat::Sys);
      for (Time at : second)
        sleeper.wake_at(at);
    });
    w.run();
    out.push_back(static_cast<double>(w.stats().events));
    out.push_back(static_cast<double>(w.stats().stale));
    return out;
  });
}

} // namespace

TEST_CASE("engine: a sleeper wakes at its earliest wake-up whatever the order they are issued in", "[sim][engine]")
{
  // Later wake-ups than the first do not move the sleep; earlier ones do
  // (each leaves the previous event stale).
  auto later = sleeper_and_waker({200, 300, 250}, {1500});
  REQUIRE(later.size() == 4);
  CHECK(later[0] == 200);
  CHECK(later[1] == 1500);
  CHECK(later[3] == 0);

  auto earlier = sleeper_and_waker({400, 300, 200}, {1500, 1200});
  REQUIRE(earlier.size() == 4);
  CHECK(earlier[0] == 200);
  CHECK(earlier[1] == 1200);
  CHECK(earlier[3] == 2); // 400 and 300 superseded (1500, superseded by 1200, is after the run's end)
}

TEST_CASE("engine: a wake-up issued before the wait makes it return at once, without sleeping", "[sim][engine]")
{
  auto o = in_child([] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    std::vector<double> out;
    w.spawn<Scripted>("alone", a, [&](Scripted& t) -> Task<> {
      t.wake_at(0); // woken while deciding to sleep
      const bool slept = co_await t.wait();
      out.push_back(slept ? 1 : 0);
      out.push_back(t.now());
      t.wake_at(5000); // pending for later: the wait sleeps until then
      const bool slept2 = co_await t.wait();
      out.push_back(slept2 ? 1 : 0);
      out.push_back(t.now());
    });
    w.run();
    return out;
  });
  CHECK(o == std::vector<double>{0, 0, 1, 5000});
}

TEST_CASE("engine: simultaneous events run in thread order, then in the order they were made", "[sim][engine]")
{
  auto o = in_child([] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    std::vector<double> out;
    std::vector<Scripted*> t(3);
    // Thread 2 wakes threads 1 and 0 for the same instant; both run before
    // thread 2's own step due then, in id order.
    for (int i = 0; i < 2; ++i)
      t[static_cast<std::size_t>(i)] = &w.spawn<Scripted>("s" + std::to_string(i), a, [&, i](Scripted& s) -> Task<> {
        co_await s.wait();
        out.push_back(i);
        out.push_back(s.now());
      });
    t[2] = &w.spawn<Scripted>("w", a, [&](Scripted& s) -> Task<> {
      co_await s.sleep(10);
      t[1]->wake_at(20);
      t[0]->wake_at(20);
      co_await s.sleep(10);
      out.push_back(2);
      out.push_back(s.now());
    });
    w.run();
    return out;
  });
  CHECK(o == std::vector<double>{0, 20, 1, 20, 2, 20});
}

TEST_CASE("engine: interrupts stretch CPU work, threads sharing a CPU take turns", "[sim][engine][cpu]")
{
  auto o = in_child([] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    std::vector<double> out;
    auto& irq = w.spawn<Scripted>("irq", a, [&](Scripted& t) -> Task<> {
      co_await t.sleep(50);
      co_await t.run(30, Cat::Irq); // [50, 80): preempts the worker
      t.charge(20, Cat::Hypervisor);
      co_await t.run(10, Cat::Irq); // [80, 110)
    });
    irq.set_daemon();
    irq.become_interrupt_context();
    auto& w1 = w.spawn<Scripted>("w1", a, [&](Scripted& t) -> Task<> {
      co_await t.run(100, Cat::Sys); // [0, 160): 60 cycles of interrupts inside
      out.push_back(t.now());
    });
    auto& w2 = w.spawn<Scripted>("w2", a, [&](Scripted& t) -> Task<> {
      t.charge(40, Cat::User);
      co_await t.run(60, Cat::Sys); // waits for w1: [160, 260)
      out.push_back(t.now());
      out.push_back(t.cpu_time()[Cat::User]);
      out.push_back(t.cpu_time()[Cat::Sys]);
    });
    w.run();
    out.push_back(a.time().busy());
    out.push_back(a.irq_time()[Cat::Irq]);
    // The interrupts came while w1 held the CPU: its runtime includes them.
    out.push_back(w1.interrupted_time().busy());
    out.push_back(w1.interrupted_time()[Cat::Hypervisor]);
    out.push_back(w2.interrupted_time().busy());
    return out;
  });
  CHECK(o == std::vector<double>{160, 260, 40, 60, 260, 40, 60, 20, 0});
}

TEST_CASE("engine: a thread that keeps its CPU (no kernel preemption) runs a woken one only once it releases it "
          "or waits",
          "[sim][engine][cpu][preempt]")
{
  // A writer's system call of three 1000-cycle steps wakes a worker on its
  // CPU after the first. Taking turns step by step (CONFIG_PREEMPT_VOLUNTARY)
  // the worker runs after that step; kept (CONFIG_PREEMPT_NONE) only once
  // the call returns (release_cpu) or sleeps (wait), and it then keeps the
  // CPU for its own item before the writer's next step.
  auto times = [](bool keep, bool sleeps) {
    return in_child([=] {
      World w;
      Cpu& a = w.add_cpu(Side::Guest, "a");
      std::vector<double> out;
      auto& worker = w.spawn<Scripted>("worker", a, [&](Scripted& t) -> Task<> {
        co_await t.wait();
        if (keep)
          t.keep_cpu();
        co_await t.run(300, Cat::Sys);
        out.push_back(t.now());
        co_await t.run(200, Cat::Sys);
        if (keep)
          t.release_cpu();
      });
      worker.set_daemon();
      auto& writer = w.spawn<Scripted>("writer", a, [&](Scripted& t) -> Task<> {
        if (keep)
          t.keep_cpu();
        co_await t.run(1000, Cat::Sys);
        worker.wake_at(t.now());
        co_await t.run(1000, Cat::Sys);
        if (sleeps) {
          t.wake_at(t.now() + 5000); // woken later: the CPU is free meanwhile
          co_await t.wait();
        }
        co_await t.run(1000, Cat::Sys);
        out.push_back(t.now());
        if (keep)
          t.release_cpu();
        co_await t.run(1000, Cat::User); // back in user space
        out.push_back(t.now());
      });
      (void)writer;
      w.run();
      return out;
    });
  };
  // Recorded: the worker's first step's end, the writer's last step in the
  // call's end, the writer's end. Step by step: worker 2000-2300, writer
  // 2300-3300, worker 3300-3500, the writer's user step 3500-4500.
  CHECK(times(false, false) == std::vector<double>{2300, 3300, 4500});
  // Kept: the worker waits for the call's end at 3000, then keeps the CPU
  // for both its steps [3000, 3500); the writer's user step [3500, 4500).
  CHECK(times(true, false) == std::vector<double>{3000, 3300, 4500});
  // Kept, but the call sleeps at 2000: the worker runs [2000, 2500), the
  // writer goes on when woken at 7000.
  CHECK(times(true, true) == std::vector<double>{2300, 8000, 9000});
}

TEST_CASE("engine: waking a sleeping thread on another CPU of the same side costs the waker an IPI, once per sleep",
          "[sim][engine][cpu]")
{
  auto o = in_child([] {
    World w;
    Cpu& g0 = w.add_cpu(Side::Guest, "g0");
    Cpu& g1 = w.add_cpu(Side::Guest, "g1");
    Cpu& h0 = w.add_cpu(Side::Host, "h0");
    w.set_wake_ipi(Side::Guest, {100, Cat::Hypervisor});
    std::vector<double> out;
    auto& far = w.spawn<Scripted>("far", g1, [&](Scripted& t) -> Task<> {
      for (int i = 0; i < 2; ++i) {
        co_await t.wait();
        t.clear_wakeups();
      }
      co_await t.run(1000, Cat::Sys); // running, not asleep: no IPI to wake it
    });
    auto& near = w.spawn<Scripted>("near", g0, [&](Scripted& t) -> Task<> { co_await t.wait(); });
    w.spawn<Scripted>("waker", g0, [&](Scripted& t) -> Task<> {
      co_await t.run(10, Cat::Sys);
      const Time at = t.now();      // (the IPI's cycles are owed from the first wake-up on)
      far.wake_at(at);              // asleep on another vCPU: an IPI
      far.wake_at(at);              // already woken: none
      near.wake_at(at);             // same vCPU: none
      co_await t.run(10, Cat::Sys); // settles the 100 cycles of the exit: ends at 120
      out.push_back(t.now());
      far.wake_at(t.now()); // asleep again: an IPI
      co_await t.run(10, Cat::Sys);
      far.wake_at(t.now()); // running: none
      co_await t.run(10, Cat::Sys);
      out.push_back(t.cpu_time()[Cat::Hypervisor]);
    });
    auto& host = w.spawn<Scripted>("host", h0, [&](Scripted& t) -> Task<> { co_await t.wait(); });
    host.set_daemon();
    w.spawn<Scripted>("cross", g1, [&](Scripted& t) -> Task<> {
      co_await t.run(5, Cat::Sys);
      host.wake_at(t.now()); // the other side (a host thread): no guest IPI, and the host's costs 0
      co_await t.run(5, Cat::Sys);
      out.push_back(t.cpu_time()[Cat::Hypervisor]);
    });
    w.run();
    out.push_back(static_cast<double>(w.wake_ipis(Side::Guest).value()));
    out.push_back(static_cast<double>(w.wake_ipis(Side::Host).value()));
    return out;
  });
  CHECK(o == std::vector<double>{0, 120, 200, 2, 0});
}

TEST_CASE("engine: charged work settles as one step at the time the steps one by one would give", "[sim][engine][cpu]")
{
  auto times = [](bool together) {
    return in_child([together] {
      World w;
      Cpu& a = w.add_cpu(Side::Guest, "a");
      std::vector<double> out;
      auto& irq = w.spawn<Scripted>("irq", a, [&](Scripted& t) -> Task<> {
        co_await t.sleep(120);
        co_await t.run(500, Cat::Irq);
      });
      irq.set_daemon();
      irq.become_interrupt_context();
      w.spawn<Scripted>("w", a, [&, together](Scripted& t) -> Task<> {
        if (together) {
          t.charge(100, Cat::User);
          t.charge(100, Cat::Sys);
          co_await t.settle();
        } else {
          co_await t.run(100, Cat::User);
          co_await t.run(100, Cat::Sys);
        }
        out.push_back(t.now());
        out.push_back(t.cpu_time()[Cat::User]);
        out.push_back(t.cpu_time()[Cat::Sys]);
      });
      w.run();
      out.push_back(static_cast<double>(w.stats().events + w.stats().direct));
      return out;
    });
  };
  auto one = times(true), two = times(false);
  REQUIRE(one.size() == 4);
  REQUIRE(two.size() == 4);
  CHECK(one[0] == 700); // 200 cycles of work around a 500-cycle interrupt
  CHECK(std::vector<double>(one.begin(), one.end() - 1) == std::vector<double>(two.begin(), two.end() - 1));
  CHECK(one[3] < two[3]); // fewer steps
}

TEST_CASE("engine: reading the time with unsettled work is an error the run reports", "[sim][engine]")
{
  auto o = in_child([] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    w.spawn<Scripted>("w", a, [&](Scripted& t) -> Task<> {
      t.charge(10, Cat::Sys);
      (void)t.now();
      co_return;
    });
    try {
      w.run();
    } catch (const std::logic_error& e) {
      return std::vector<double>{std::string(e.what()).find("unsettled") != std::string::npos ? 1.0 : 0.0};
    }
    return std::vector<double>{0};
  });
  CHECK(o == std::vector<double>{1});
}

TEST_CASE("engine: a run ends with its last non-daemon thread, daemon work started at its end is not counted",
          "[sim][engine]")
{
  auto o = in_child([] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    Cpu& b = w.add_cpu(Side::Host, "b");
    std::vector<double> out;
    auto& daemon = w.spawn<Scripted>("daemon", a, [&](Scripted& t) -> Task<> {
      for (;;) {
        co_await t.wait();
        t.clear_wakeups();
        co_await t.run(100, Cat::Sys);
        out.push_back(t.now());
      }
    });
    daemon.set_daemon();
    auto& app = w.spawn<Scripted>("app", b, [&](Scripted& t) -> Task<> {
      co_await t.run(10, Cat::Sys);
      daemon.wake_at(50);   // due before the end
      daemon.wake_at(1010); // at the end: not part of the run
      co_await t.run(1000, Cat::Sys);
    });
    w.run();
    out.push_back(w.end());
    out.push_back(daemon.cpu_time().busy());
    out.push_back(app.cpu_time().busy());
    out.push_back(a.time().busy());
    return out;
  });
  // The daemon's work at 50 (done at 150) happened; the one due at 1010 is
  // after the daemon's turn at that instant (thread order) or, if before, is
  // taken back.
  CHECK(o == std::vector<double>{150, 1010, 100, 1010, 100});
}

TEST_CASE("engine: daemon work running across the run's end counts only up to the end", "[sim][engine]")
{
  auto o = in_child([] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    Cpu& b = w.add_cpu(Side::Host, "b");
    auto& daemon = w.spawn<Scripted>("daemon", a, [&](Scripted& t) -> Task<> {
      co_await t.wait();
      co_await t.run(400, Cat::Sys); // [600, 1000): the run ends at 700
    });
    daemon.set_daemon();
    w.spawn<Scripted>("app", b, [&](Scripted& t) -> Task<> {
      daemon.wake_at(600);
      co_await t.run(700, Cat::Sys);
    });
    w.run();
    return std::vector<double>{w.end(), daemon.cpu_time().busy(), a.time().busy()};
  });
  CHECK(o == std::vector<double>{700, 100, 100});
}

TEST_CASE("engine: daemon work stretched by an interrupt across the run's end counts only what it did by the end",
          "[sim][engine][cpu]")
{
  // The daemon's 300 cycles from 500 would end at 800, before the run's end
  // at 900; an interrupt of 200 cycles at 600 stretches them to 1000, so by
  // the end the daemon has done 200 of them (500-600 and 800-900). Counting
  // from the unstretched length (the former rule) kept all 300, and the CPU
  // showed 1000 busy cycles in a run of 900.
  auto o = in_child([] {
    World w;
    Cpu& a = w.add_cpu(Side::Guest, "a");
    Cpu& b = w.add_cpu(Side::Host, "b");
    auto& daemon = w.spawn<Scripted>("daemon", a, [&](Scripted& t) -> Task<> {
      co_await t.wait();
      co_await t.run(300, Cat::Sys);
    });
    daemon.set_daemon();
    auto& irq = w.spawn<Scripted>("irq", a, [&](Scripted& t) -> Task<> {
      co_await t.sleep(600);
      co_await t.run(200, Cat::Irq); // [600, 800)
    });
    irq.set_daemon();
    irq.become_interrupt_context();
    w.spawn<Scripted>("app", b, [&](Scripted& t) -> Task<> {
      daemon.wake_at(500);
      co_await t.run(900, Cat::Sys);
    });
    w.run();
    return std::vector<double>{w.end(), daemon.cpu_time().busy(), a.irq_time().busy(), a.time().busy()};
  });
  CHECK(o == std::vector<double>{900, 200, 200, 400});
}
