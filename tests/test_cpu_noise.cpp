// What spreads a round trip (issue 53), worked by hand: the scheduler tick
// stretching thread work on a busy CPU (and not an idle one), the menu
// governor's choice of an idle state and its exit latency, and the causes
// a round trip notes, by stage.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include "sim/cpu.hpp"
#include "sim/round_trips.hpp"

using namespace vsim;

namespace {
std::array<int, Cpu::kMaxTicks> none()
{
  return {};
}

// 1000 cycles of a thread's work on `cpu` from t, then `idle` cycles with
// nothing on it, ended by a wake-up: the idle state's exit latency; t moves
// to the wake-up.
double work_then_idle(Cpu& cpu, Time& t, double idle)
{
  int w = 0; // only the pointer is kept
  cpu.set_holder(reinterpret_cast<SimThread*>(&w));
  cpu.work_started(t);
  cpu.next(t + 1000); // the work ends: free from t + 1000
  t += 1000 + idle;
  return cpu.wake_from_idle(t);
}
} // namespace

TEST_CASE("a tick stretches the thread work it lands in, on its grid, and an idle CPU has none", "[sim][cpu][tick]")
{
  Cpu cpu(0, Side::Host, "hcpu0");
  // HZ 1000 at 1 GHz: a tick every 1,000,000 cycles from phase 300, 2000 each.
  cpu.add_tick(Cpu::Tick{1e6, 300, 2000, Cat::Irq});
  std::array<int, Cpu::kMaxTicks> ticks = none();
  // Work in [0, 200): before the first tick, unstretched.
  CHECK(cpu.finish_time(0, 200, &ticks) == 200);
  CHECK(ticks[0] == 0);
  // Work from 100 for 1000 cycles: the tick at 300 preempts it for 2000.
  CHECK(cpu.finish_time(100, 1000, &ticks) == 3100);
  CHECK(ticks[0] == 1);
  // Work that ends exactly at the tick is not stretched; work starting on it is.
  CHECK(cpu.finish_time(0, 300, &ticks) == 300);
  CHECK(cpu.finish_time(300, 10, &ticks) == 2310);
  // Work across three periods: three ticks.
  CHECK(cpu.finish_time(0, 2.5e6, &ticks) == 2.5e6 + 3 * 2000);
  CHECK(ticks[0] == 3);
  // The work done by a time counts the ticks out.
  CHECK(cpu.work_done(100, 3100) == 1000);
  // NO_HZ_IDLE: a CPU with no work between two pieces took no tick; the
  // ticks are accounted (irq time) once the work they stretched ends.
  cpu.account_ticks({1, 0}); // as the work ends, at 3100
  CHECK(cpu.time()[Cat::Irq] == 2000);
  CHECK(cpu.irq_time()[Cat::Irq] == 2000);
  CHECK(cpu.ticks_taken() == 1);
  // A tick's period must leave time to run.
  Cpu bad(1, Side::Host, "hcpu1");
  CHECK_THROWS_AS(bad.add_tick(Cpu::Tick{1000, 0, 500, Cat::Irq}), std::logic_error);
}

TEST_CASE("a tick due while an interrupt runs fires at its end, and missed ones collapse", "[sim][cpu][tick]")
{
  Cpu cpu(0, Side::Guest, "vcpu0");
  cpu.add_tick(Cpu::Tick{1000, 500, 100, Cat::Irq});
  int worker = 0;
  cpu.set_holder(reinterpret_cast<SimThread*>(&worker));
  cpu.work_started(0);
  cpu.add_irq(0, 450, 100, Cat::Irq); // [450, 550): the tick due at 500 fires at 550
  std::array<int, Cpu::kMaxTicks> ticks = none();
  // 600 cycles of work from 0: runs [0,450), irq to 550, tick to 650, runs 150 more.
  CHECK(cpu.finish_time(0, 600, &ticks) == 800);
  CHECK(ticks[0] == 1);
  // A second grid on the same CPU (a vCPU: the guest's tick and the host's).
  cpu.add_tick(Cpu::Tick{10000, 700, 50, Cat::Irq});
  CHECK(cpu.finish_time(0, 600, &ticks) == 850);
  CHECK(ticks[0] == 1);
  CHECK(ticks[1] == 1);
}

TEST_CASE("the menu governor picks the deepest state the typical idle period allows, and its exit is paid",
          "[sim][cpu][idle]")
{
  // 1 us = 1000 cycles. C1 exit 1 us (residency 1), C1E exit 10 us
  // (residency 20), C6 exit 85 us (residency 200).
  Cpu cpu(0, Side::Host, "hcpu0");
  cpu.set_idle_states({{1000, 1000}, {10000, 20000}, {85000, 200000}}, 1000);
  // No history and no timer: the deepest state.
  double predicted = 0;
  CHECK(cpu.select_idle_state(0, &predicted) == 2);
  // Eight idle periods of 15 us: the typical interval is 15 us (variance 0):
  // C1E needs 20 us of residency, so C1.
  Time t = 0;
  for (int i = 0; i < 8; ++i) {
    const double exit = work_then_idle(cpu, t, 15000);
    INFO(i);
    // the choice is made from the periods before this one
    CHECK((i == 0 ? exit == 85000 : exit <= 10000));
  }
  CHECK(cpu.select_idle_state(t, &predicted) == 0);
  CHECK(predicted == 15000);
  // Periods of 40 us: C1E (residency 20, exit 10 <= 40).
  for (int i = 0; i < 8; ++i)
    work_then_idle(cpu, t, 40000);
  CHECK(cpu.select_idle_state(t, &predicted) == 1);
  CHECK(predicted == 40000);
  // A spread history with no typical interval (15, 1000, 15, 1000, 15,
  // 1000, 500 and 1000 us: dropping the 1000s leaves four too spread, and
  // too few to drop more): the mean, 568.125 us (what menu's correction
  // factor learns), picks C6.
  const double spread[] = {15000, 1e6, 15000, 1e6, 15000, 1e6, 500000, 1e6};
  for (double d : spread)
    work_then_idle(cpu, t, d);
  CHECK(cpu.select_idle_state(t, &predicted) == 2);
  CHECK(predicted == 568125);
  CHECK(cpu.idle_exits() == 24);
  // With a tick grid, the next tick bounds the prediction (the tick runs).
  cpu.add_tick(Cpu::Tick{100000, 0, 1000, Cat::Irq});
  CHECK(cpu.select_idle_state(1e9 + 50000, &predicted) == 1); // the next tick at 1e9 + 100000
  CHECK(predicted == 50000);
}

TEST_CASE("round trips note the causes that land in them, by stage, and band them with the stages",
          "[round_trip][stages][causes]")
{
  RoundTrips rt(1.0, 128, nullptr); // 1 GHz: 1000 cycles = 1 us
  rt.set_stages({"out", "back"});
  const int tick = rt.add_cause("tick");
  const int idle = rt.add_cause("idle exit");
  CHECK(rt.causes() == std::vector<std::string>{"tick", "idle exit"});
  CHECK_THROWS_AS(rt.add_cause("tick"), std::logic_error);
  Time t = 0;
  // 98 round trips of 10 us; 2 of 20 us, each with a 3 us tick in "back"
  // and a 1 us idle exit in "out".
  for (int i = 0; i < 100; ++i) {
    const bool slow = i >= 98;
    rt.begin(0, t);
    if (slow)
      rt.note(idle, 1000); // in "out"
    rt.stamp(0, 1, t + 4000);
    if (slow)
      rt.note(tick, 3000); // in "back"
    rt.completed(0, t, t + (slow ? 20000 : 10000));
    t += 50000;
  }
  rt.note(tick, 5000); // nothing in flight: lands in no round trip
  const RoundTrips::Band med = rt.band(0.45, 0.55), tail = rt.band(0.99, 1.0);
  CHECK(med.cause_us == std::vector<double>{0.0, 0.0});
  CHECK(med.cause_share == std::vector<double>{0.0, 0.0});
  CHECK(tail.round_trips == 2);
  CHECK(tail.cause_us == std::vector<double>{3.0, 1.0});
  CHECK(tail.cause_share == std::vector<double>{1.0, 1.0});
  // by stage: stage * causes + cause
  CHECK(tail.cause_stage_us == std::vector<double>{0.0, 1.0, 3.0, 0.0});
  CHECK_THROWS_AS(rt.note(7, 1), std::logic_error);
  CHECK_THROWS_AS(rt.add_cause("late"), std::logic_error); // round trips have completed
}

TEST_CASE("a tick never overlaps an interrupt: one starting inside the tick's handler goes first", "[sim][cpu][tick]")
{
  // Found by the model fuzzer: a vCPU busy longer than the run, a tick's
  // handler and an interrupt counted over the same cycles.
  Cpu cpu(0, Side::Guest, "vcpu0");
  cpu.add_tick(Cpu::Tick{1000, 500, 100, Cat::Irq});
  int worker = 0;
  cpu.set_holder(reinterpret_cast<SimThread*>(&worker));
  cpu.work_started(0);
  cpu.add_irq(0, 550, 50, Cat::Irq); // [550, 600): inside the tick's [500, 600)
  std::array<int, Cpu::kMaxTicks> ticks = none();
  // 700 cycles of work: [0, 550) runs, the interrupt to 600, the tick to
  // 700, the last 150 to 850: 700 + 50 + 100, no cycle twice.
  CHECK(cpu.finish_time(0, 700, &ticks) == 850);
  CHECK(ticks[0] == 1);
  CHECK(cpu.work_done(0, 850) == 700);
}
