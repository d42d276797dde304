// The engine layer's arithmetic, without a simulation: random streams, CPU
// time with interrupt preemption, counts, occupancy.
#include <catch2/catch.hpp>

#include "sim/count.hpp"
#include "sim/cpu.hpp"
#include "sim/occupancy.hpp"
#include "sim/rng.hpp"

using namespace vsim;

TEST_CASE("random streams depend on (seed, iteration, component) only, and are pinned", "[sim][rng]")
{
  Rng a(1, 0, "host_speed");
  Rng b(1, 0, "host_speed");
  std::uint64_t first = a.next();
  CHECK(first == b.next());
  CHECK(first == 0xdbc1ab2a3219c039ull); // pinned: any change to seeding or the generator moves it
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
  int worker = 0; // a thread's work on the CPU since 0 (only the pointer is kept)
  cpu.set_holder(reinterpret_cast<SimThread*>(&worker));
  cpu.work_started(0);
  CHECK(cpu.finish_time(100, 50) == 150); // no interrupt
  cpu.add_irq(120, 10, Cat::Irq);         // preempts [120, 130)
  CHECK(cpu.finish_time(100, 50) == 160);
  CHECK(cpu.finish_time(125, 10) == 140);              // starts inside the interrupt: waits for its end
  CHECK(cpu.finish_time(130, 10) == 140);              // after it: unaffected
  CHECK(cpu.finish_time(0, 100) == 100);               // ends before it
  cpu.add_irq(cpu.irq_start(125), 5, Cat::Hypervisor); // queued behind the first: [130, 135)
  CHECK(cpu.finish_time(100, 50) == 165);
  CHECK(cpu.time()[Cat::Irq] == 10);
  CHECK(cpu.time()[Cat::Hypervisor] == 5);
  CHECK_THROWS_AS(cpu.add_irq(90, 1, Cat::Irq), std::logic_error); // out of time order
}

TEST_CASE("a CPU keeps only the interrupt intervals that can still stretch work (memory stays flat)", "[sim][cpu]")
{
  Cpu cpu(0, Side::Guest, "vcpu0");
  for (int i = 0; i < 1000; ++i)
    cpu.add_irq(cpu.irq_start(i * 100.0), 10, Cat::Irq);
  CHECK(cpu.time()[Cat::Irq] == 10000);
  CHECK(cpu.irq_intervals() == 1); // no work on the CPU: only the last can matter
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

TEST_CASE("an interrupt piece queued ahead of time keeps the one it is queued behind", "[sim][cpu]")
{
  // At 100, with no work on the CPU, an interrupt step registers two pieces:
  // [100, 120) and [120, 130). Work starting at 110 runs after both.
  Cpu cpu(0, Side::Guest, "vcpu0");
  cpu.add_irq(100, 100, 20, Cat::Hypervisor);
  cpu.add_irq(100, cpu.irq_start(100), 10, Cat::Irq);
  CHECK(cpu.irq_intervals() == 2);
  CHECK(cpu.finish_time(110, 5) == 135);
  CHECK(cpu.finish_time(110, 0) == 120);                                 // starts once the piece it found running ends
  CHECK_THROWS_AS(cpu.add_irq(140, 135, 1, Cat::Irq), std::logic_error); // registered after its start
}

TEST_CASE("a count adds its increments", "[sim][count]")
{
  Count c;
  CHECK(c.value() == 0);
  c.add();
  c.add(2);
  CHECK(c.value() == 3);
}

TEST_CASE("occupancy integrates the level in time order and refuses a change out of order", "[sim][occupancy]")
{
  Occupancy o(10);
  o.change(0, 5);   // level 5 from 0
  o.change(100, 5); // level 10 from 100
  Occupancy::Summary at100 = o.summarize(100);
  CHECK(at100.mean == 5);
  CHECK(at100.max == 5);
  Occupancy::Summary at200 = o.summarize(200);
  CHECK(at200.mean == 7.5);
  CHECK(at200.max == 10);
  CHECK_THROWS_AS(o.change(50, -5), std::logic_error);
}
