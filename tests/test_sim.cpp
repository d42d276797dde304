// The engine layer's arithmetic, without a simulation: random streams, CPU
// time with interrupt preemption, stamped shared values.
#include <catch2/catch.hpp>

#include "sim/cpu.hpp"
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
  Cpu cpu(0, Side::Guest, "vcpu0", nullptr);
  cpu.attach_thread();  // the interrupt context
  cpu.attach_interrupt_context();
  cpu.attach_thread();  // a worker
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

TEST_CASE("a CPU without workers keeps no interrupt intervals (memory stays flat)", "[sim][cpu]")
{
  Cpu cpu(0, Side::Guest, "vcpu0", nullptr);
  cpu.attach_thread();
  cpu.attach_interrupt_context();
  CHECK_FALSE(cpu.needs_sync());
  for (int i = 0; i < 1000; ++i)
    cpu.add_irq(cpu.irq_start(i * 100.0), 10, Cat::Irq);
  CHECK(cpu.time()[Cat::Irq] == 10000);
  cpu.attach_thread();
  CHECK(cpu.needs_sync());
  CHECK(cpu.finish_time(0, 50) == 50);  // the interrupt at [0, 10) was not kept to stretch it
}

TEST_CASE("interrupts landing in committed work become stolen time, paid once", "[sim][cpu]")
{
  Cpu cpu(0, Side::Guest, "vcpu0", nullptr);
  cpu.attach_thread();
  cpu.commit(1000);
  cpu.add_irq(500, 40, Cat::Irq);
  CHECK(cpu.take_stolen() == 40);
  CHECK(cpu.take_stolen() == 0);
  CHECK(cpu.finish_time(1000, 10) == 1010);
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
