// The timeline recorder (sim/trace.hpp) driven directly and through the
// engine, and the pieces of `run --trace` that need no simulation
// (app/run/timeline.hpp). The command itself: tests/cli/test_trace.cpp, [trace].
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/run/timeline.hpp"
#include "sim/trace.hpp"
#include "sim/world.hpp"
#include "tests/sim_support.hpp"

using namespace vsim;
using namespace vsim::testing;
using json = nlohmann::ordered_json;

namespace {

// The events of phase ph, in the trace's order.
std::vector<json> of_phase(const json& t, const std::string& ph)
{
  std::vector<json> out;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == ph)
      out.push_back(e);
  return out;
}

} // namespace

TEST_CASE("trace: the engine records steps, interrupts nested in the work they stretch, and wake-ups", "[sim][trace]")
{
  // One cycle per microsecond: timestamps are the cycles.
  auto o = in_child([] {
    Trace tr(0, 1000, 1, 1000);
    World w;
    w.set_trace(&tr);
    Cpu& a = w.add_cpu(Side::Guest, "a");
    Cpu& b = w.add_cpu(Side::Host, "b");
    auto& irq = w.spawn<Scripted>("irq", a, [&](Scripted& t) -> Task<> {
      co_await t.sleep(50);
      co_await t.run(30, Cat::Irq); // [50, 80): preempts w1
      t.charge(20, Cat::Hypervisor);
      co_await t.run(10, Cat::Irq); // [80, 100) hypervisor, [100, 110) irq
    });
    irq.set_daemon();
    irq.become_interrupt_context();
    w.spawn<Scripted>("w1", a, [&](Scripted& t) -> Task<> { co_await t.run(100, Cat::Sys); }); // [0, 160)
    w.spawn<Scripted>("w2", a, [&](Scripted& t) -> Task<> {
      t.charge(40, Cat::User);
      co_await t.run(60, Cat::Sys); // [160, 260): mostly sys
    });
    auto& sleeper = w.spawn<Scripted>("sleeper", a, [&](Scripted& t) -> Task<> {
      co_await t.wait();
      co_await t.run(10, Cat::Sys); // [315, 325)
    });
    w.spawn<Scripted>("waker", b, [&](Scripted& t) -> Task<> {
      co_await t.sleep(300);
      co_await t.run(10, Cat::User); // [300, 310)
      t.mark("try_to_wake_up");
      sleeper.wake_at(t.now() + 5);
    });
    w.run();
    const json j = tr.to_json(json::object());
    std::vector<double> out;
    std::vector<json> flows;
    for (const json& e : of_phase(j, "X")) {
      if (e.contains("bind_id")) {
        flows.push_back(e);
        continue;
      }
      out.push_back(e["tid"].get<double>());
      out.push_back(e["ts"].get<double>());
      out.push_back(e["dur"].get<double>());
      out.push_back(e["cat"] == "sys" ? 1 : e["cat"] == "irq" ? 2 : e["cat"] == "hypervisor" ? 3 : 0);
    }
    out.push_back(-1);
    for (const json& e : flows) { // out, then in
      out.push_back(e["tid"].get<double>());
      out.push_back(e["ts"].get<double>());
      out.push_back(e["bind_id"].get<double>());
      out.push_back(e.value("flow_out", false) ? 1 : 0);
    }
    for (const json& e : of_phase(j, "i")) {
      out.push_back(e["tid"].get<double>());
      out.push_back(e["ts"].get<double>());
    }
    return out;
  });
  CHECK(o == std::vector<double>{1,  0,   160, 1, // w1, with the interrupts inside
                                 1,  50,  30,  2, //
                                 1,  80,  20,  3, //
                                 1,  100, 10,  2, //
                                 1,  160, 100, 1, // w2
                                 2,  300, 10,  0, // waker
                                 1,  315, 10,  1, // sleeper, woken
                                 -1,              //
                                 2,  310, 1,   1, // the arrow from the waker's CPU when it woke the sleeper
                                 1,  315, 1,   0, // to the sleeper's CPU when it runs
                                 2,  310});       // the instant the waker marked
}

TEST_CASE("trace: the window clips slices and keeps the counters' levels at its start", "[sim][trace]")
{
  Cpu cpu(0, Side::Guest, "vcpu0");
  Trace tr(100, 200, 1, 1000);
  tr.add_cpu(cpu);
  tr.counter("ring", "bytes", 50, 3);
  tr.slice(cpu, 0, 90, "before", Cat::Sys, {});
  tr.slice(cpu, 50, 150, "across_start", Cat::Sys, {});
  tr.slice(cpu, 150, 250, "across_end", Cat::User, {});
  tr.instant(cpu, 99, "early", "t");
  tr.instant(cpu, 100, "first", "t");
  tr.instant(cpu, 200, "late", "t");
  tr.counter("ring", "bytes", 120, 4);
  const json j = tr.to_json({{"k", "v"}});
  const std::vector<json> x = of_phase(j, "X"), i = of_phase(j, "i"), c = of_phase(j, "C");
  REQUIRE(x.size() == 2);
  CHECK(x[0]["name"] == "across_start");
  CHECK(x[0]["ts"] == 100.0);
  CHECK(x[0]["dur"] == 50.0);
  CHECK(x[1]["name"] == "across_end");
  CHECK(x[1]["dur"] == 50.0);
  REQUIRE(i.size() == 1);
  CHECK(i[0]["name"] == "first");
  REQUIRE(c.size() == 2);
  CHECK(c[0]["ts"] == 100.0);
  CHECK(c[0]["args"]["bytes"] == 3.0);
  CHECK(c[1]["args"]["bytes"] == 4.0);
  CHECK(j["metadata"]["k"] == "v");
  CHECK(j["metadata"]["capped"] == false);
  CHECK(j["displayTimeUnit"] == "ns");
}

TEST_CASE("trace: at the cap the recording stops at the engine's time, keeping the slices running then", "[sim][trace]")
{
  Cpu cpu(0, Side::Host, "hcpu0");
  Trace tr(0, 1000, 1, 3);
  Time now = 0;
  tr.bind_clock(&now);
  tr.add_cpu(cpu);
  for (Time t : {10.0, 20.0, 30.0}) {
    now = t;
    tr.instant(cpu, t, "k", "t");
  }
  CHECK(tr.capped());
  now = 45;
  tr.instant(cpu, 40, "after", "t");
  tr.slice(cpu, 25, 45, "running_at_cut", Cat::Sys, {});
  tr.slice(cpu, 35, 45, "started_after", Cat::Sys, {});
  const json j = tr.to_json(json::object());
  CHECK(j["metadata"]["capped"] == true);
  CHECK(j["metadata"]["window_end_us"] == 30.0);
  const std::vector<json> x = of_phase(j, "X"), i = of_phase(j, "i");
  REQUIRE(x.size() == 1);
  CHECK(x[0]["name"] == "running_at_cut");
  CHECK(x[0]["dur"] == 5.0);
  CHECK(i.size() == 2); // 10 and 20: 30 is the cut itself
}

TEST_CASE("trace: windows, the default start, and a traced run that differs is refused", "[trace]")
{
  using namespace vsim::app;
  const TraceWindow w = parse_trace_window("1.5ms:50us");
  CHECK(w.start_us == 1500.0);
  CHECK(w.length_us == 50.0);
  CHECK(!parse_trace_window(":2000ns").start_us);
  CHECK(parse_trace_window(":2000ns").length_us == 2.0);
  CHECK(parse_trace_window("3:4").length_us == 4.0);
  CHECK_THROWS_AS(parse_trace_window("3"), InputError);
  CHECK_THROWS_AS(parse_trace_window("3us:0us"), InputError);

  // The monitor's warm-up at the mean rate; else a tenth of the simulated time.
  CHECK(default_trace_start_us({{"elapsed_seconds", 0.01}}, {{"warmup_bytes", 250}}, 1000) == Approx(2500));
  CHECK(default_trace_start_us({{"elapsed_seconds", 0.01}}, {{"simulated_bytes", 500}}, 1000) == Approx(500));
  CHECK(default_trace_start_us({{"elapsed_seconds", 0.01}}, {}, 1000) == Approx(1000));

  const std::string path = (std::filesystem::temp_directory_path() / "vsim-trace-unit.json").string();
  std::filesystem::remove(path);
  TraceOptions opt;
  opt.path = path;
  TracedRun run{{{"a", 1.0}, {"run_length.extrapolated", 0.0}}, "{}\n"};
  const Metrics same = {{"a", 1.0}}, other = {{"a", 1.0000000001}}, info = {{"extrapolated", 0.0}};
  CHECK_THROWS_AS(finish_trace(opt, run, &other, &info, nullptr), std::logic_error);
  CHECK(!std::filesystem::exists(path));
  const Metrics more = {{"a", 1.0}, {"b", 2.0}};
  CHECK_THROWS_AS(finish_trace(opt, run, &more, &info, nullptr), std::logic_error);
  CHECK(!std::filesystem::exists(path));
  finish_trace(opt, run, &same, &info, nullptr);
  CHECK(std::filesystem::exists(path));
  std::filesystem::remove(path);
}
