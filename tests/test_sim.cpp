// The engine layer's arithmetic, without a simulation: random streams, CPU
// time with interrupt preemption, stamped shared values and counts, occupancy
// against the horizon.
#include <catch2/catch.hpp>

#include "sim/count.hpp"
#include "sim/cpu.hpp"
#include "sim/horizon.hpp"
#include "sim/occupancy.hpp"
#include "sim/rng.hpp"
#include "sim/timed_value.hpp"

using namespace vsim;

TEST_CASE("random streams depend on (seed, iteration, component) only, and are pinned", "[sim][rng]")
{
  Rng a(1, 0, "host_speed");
  Rng b(1, 0, "host_speed");
  std::uint64_t first = a.next();
  CHECK(first == b.next());
  CHECK(first == 0xdbc1ab2a3219c039ull);  // pinned: any change to seeding or the generator moves it
  CHECK(Rng(1, 1, "host_speed").next() != first);
  CHECK(Rng(2, 0, "host_speed").next() != first);
  CHECK(Rng(1, 0, "conn0.host_signal").next() != first);
  Rng u(7, 3, "x");
  for (int i = 0; i < 1000; ++i) {
    double x = u.uniform();
    REQUIRE(x >= 0.0);
    REQUIRE(x < 1.0);
  }
}

TEST_CASE("jitter draws whole cycles within [1-j, 1+j] and leaves j = 0 alone", "[sim][rng]")
{
  Rng r(3, 0, "lat");
  for (int i = 0; i < 1000; ++i) {
    double v = r.jitter(10000, 0.2);
    REQUIRE(v >= 8000);
    REQUIRE(v <= 12000);
    REQUIRE(v == static_cast<double>(static_cast<long long>(v)));
  }
  CHECK(r.jitter(12345, 0) == 12345);
}

TEST_CASE("thread work is stretched by the interrupts that preempt it", "[sim][cpu]")
{
  Cpu cpu(0, Side::Guest, "vcpu0");
  cpu.attach_interrupt_context();
  int worker = 0;  // a thread's work on the CPU since 0 (only the pointer is kept)
  cpu.set_holder(reinterpret_cast<SimThread*>(&worker));
  cpu.work_started(0);
  CHECK(cpu.finish_time(100, 50) == 150);  // no interrupt
  cpu.add_irq(120, 10, Cat::Irq);          // preempts [120, 130)
  CHECK(cpu.finish_time(100, 50) == 160);
  CHECK(cpu.finish_time(125, 10) == 140);  // starts inside the interrupt: waits for its end
  CHECK(cpu.finish_time(130, 10) == 140);  // after it: unaffected
  CHECK(cpu.finish_time(0, 100) == 100);   // ends before it
  cpu.add_irq(cpu.irq_start(125), 5, Cat::Hypervisor);  // queued behind the first: [130, 135)
  CHECK(cpu.finish_time(100, 50) == 165);
  CHECK(cpu.time()[Cat::Irq] == 10);
  CHECK(cpu.time()[Cat::Hypervisor] == 5);
  CHECK_THROWS_AS(cpu.add_irq(90, 1, Cat::Irq), std::logic_error);  // out of time order
}

TEST_CASE("a CPU keeps only the interrupt intervals that can still stretch work (memory stays flat)", "[sim][cpu]")
{
  Cpu cpu(0, Side::Guest, "vcpu0");
  cpu.attach_interrupt_context();
  for (int i = 0; i < 1000; ++i)
    cpu.add_irq(cpu.irq_start(i * 100.0), 10, Cat::Irq);
  CHECK(cpu.time()[Cat::Irq] == 10000);
  CHECK(cpu.irq_intervals() == 1);  // no work on the CPU: only the last can matter
  CHECK(cpu.finish_time(99900, 50) == 99960);
  // Work on the CPU since 100000 keeps every interrupt from then on.
  int dummy = 0;
  cpu.set_holder(reinterpret_cast<SimThread*>(&dummy));
  cpu.work_started(100000);
  for (int i = 0; i < 10; ++i)
    cpu.add_irq(cpu.irq_start(100000 + i * 100.0), 10, Cat::Irq);
  CHECK(cpu.irq_intervals() == 10);
  CHECK(cpu.finish_time(100000, 1000) == 1000 + 100000 + 10 * 10);
}

TEST_CASE("a stamped value shows each reader the value at its own time", "[sim][timed]")
{
  TimedValue<int> v(0);
  v.set(10, 1);
  v.set(20, 2);
  v.set(20, 3);  // same instant: the later write wins
  CHECK(v.at(5) == 0);
  CHECK(v.at(10) == 1);
  CHECK(v.at(19) == 1);
  CHECK(v.at(20) == 3);
  CHECK(v.at(1e9) == 3);
  CHECK_THROWS_AS(v.set(15, 4), std::logic_error);
  v.forget_before(19);
  CHECK(v.at(19) == 1);
  CHECK(v.at(25) == 3);
  CHECK(v.history_size() == 2);
}

namespace {
Time g_fake_clock = 0;
Time fake_clock()
{
  return g_fake_clock;
}
}  // namespace

TEST_CASE("a stamped count leaves out what happened from the end of the run on", "[sim][count]")
{
  Count plain;  // no simulation running: no horizon, every increment counts
  plain.add(5);
  plain.add(1e9, 2);
  CHECK(plain.until(10) == 3);

  set_horizon(fake_clock);
  g_fake_clock = 100;
  Count c;
  c.add(50);       // before the horizon: final
  c.add(120, 2);   // after it: kept apart
  c.add(110);      // another thread, behind the first but still after the horizon
  g_fake_clock = 115;
  c.add(130);      // the clock passed 110; it stays behind 120 (pruned from the front) and still counts right
  CHECK(c.until(1e300) == 5);
  CHECK(c.until(125) == 4);  // 130 after the end
  CHECK(c.until(120) == 4);  // an event at the end instant counts
  CHECK(c.until(119) == 2);  // 120 (x2) and 130 after the end
  CHECK(c.until(0) == 1);    // 50 was final when counted: the end cannot be before the horizon
  set_horizon(nullptr);
}

TEST_CASE("occupancy keeps level changes after the horizon pending until the end is known", "[sim][occupancy]")
{
  set_horizon(fake_clock);
  g_fake_clock = 0;
  Occupancy o(10, 1);
  o.change(0, 0, 5);    // level 5 from 0
  o.change(0, 100, 5);  // level 10 from 100: after the end of a run ending at 100
  Occupancy::Summary at100 = o.summarize(100);
  CHECK(at100.mean == 5);
  CHECK(at100.max == 5);
  Occupancy::Summary at200 = o.summarize(200);
  CHECK(at200.mean == 7.5);
  set_horizon(nullptr);
  // Without a horizon, a one-stream update applies at once and the end cut
  // cannot undo it: the reason for the horizon.
  Occupancy u(10, 1);
  u.change(0, 0, 5);
  u.change(0, 100, 5);
  u.change(0, 300, 0);  // the accumulator has moved past 100 and 200 now
  CHECK(u.summarize(200).mean > 5);
}
