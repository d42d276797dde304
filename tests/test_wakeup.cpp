// Sleeping and waking of simulated threads (sim/thread.*) in a small World:
// a sleeper wakes at its earliest wake-up whichever order they are issued
// in, the engine is disturbed only by wake-ups that move that time, and the
// fast path gives the exact path's wake-up times. Each simulation runs in a
// forked child (one SimGrid engine per process).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/world.hpp"

using namespace vsim;

namespace {

class Scripted : public SimThread {
public:
  Scripted(World& w, std::string name, Cpu& cpu, std::function<void(Scripted&)> f)
      : SimThread(w, std::move(name), cpu), f_(std::move(f))
  {
  }

protected:
  void body() override { f_(*this); }

private:
  std::function<void(Scripted&)> f_;
};

struct Outcome {
  std::vector<Time> woke_at;
  SimStats stats;
};

// Runs f in a child process; returns what it returned (the values, then
// the engine counts).
Outcome in_child(const std::function<Outcome()>& f)
{
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Outcome o = f();
    std::vector<double> out(o.woke_at.begin(), o.woke_at.end());
    for (std::uint64_t v : {o.stats.sleeps, o.stats.waits, o.stats.releases, o.stats.observes})
      out.push_back(static_cast<double>(v));
    std::size_t bytes = out.size() * sizeof(double);
    _exit(write(fds[1], out.data(), bytes) == static_cast<ssize_t>(bytes) ? 0 : 1);
  }
  close(fds[1]);
  std::vector<double> in(64);
  ssize_t n = read(fds[0], in.data(), in.size() * sizeof(double));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(n >= static_cast<ssize_t>(4 * sizeof(double)));
  in.resize(static_cast<std::size_t>(n) / sizeof(double));
  Outcome o;
  o.woke_at.assign(in.begin(), in.end() - 4);
  o.stats.sleeps = static_cast<std::uint64_t>(in[in.size() - 4]);
  o.stats.waits = static_cast<std::uint64_t>(in[in.size() - 3]);
  o.stats.releases = static_cast<std::uint64_t>(in[in.size() - 2]);
  o.stats.observes = static_cast<std::uint64_t>(in[in.size() - 1]);
  return o;
}

// A sleeper that waits twice; a waker that issues `first` wake-ups at the
// given times from its clock 100, works 1000 cycles, then issues `second`.
Outcome run_world(bool exact, const std::vector<Time>& first, const std::vector<Time>& second)
{
  World w(exact);
  Cpu& a = w.add_cpu(Side::Guest, "a");
  Cpu& b = w.add_cpu(Side::Host, "b");
  Outcome o;
  auto& sleeper = w.spawn<Scripted>("sleeper", a, [&](Scripted& t) {
    for (int i = 0; i < 2; ++i) {
      t.wait();
      o.woke_at.push_back(t.now());
      t.clear_wakeups();
    }
  });
  w.spawn<Scripted>("waker", b, [&, first, second](Scripted& t) {
    t.charge(100, Cat::Sys);
    t.observe();  // the sleeper is asleep by now
    for (Time at : first)
      sleeper.wake_at(at);
    t.charge(1000, Cat::Sys);
    t.observe();
    for (Time at : second)
      sleeper.wake_at(at);
  });
  w.run();
  o.stats = w.stats();
  return o;
}

Outcome run(bool exact, const std::vector<Time>& first, const std::vector<Time>& second)
{
  return in_child([&] { return run_world(exact, first, second); });
}

}  // namespace

TEST_CASE("a sleeper wakes at its earliest wake-up, released only by wake-ups that move it", "[sim][wakeup]")
{
  // Later wake-ups than the one that released it do not touch the engine.
  Outcome later = run(false, {200, 300, 250}, {1500});
  CHECK(later.woke_at == std::vector<Time>{200, 1500});
  CHECK(later.stats.releases == 2);  // 200 (first), then 1500 (second sleep)

  // Each earlier one does.
  Outcome earlier = run(false, {400, 300, 200}, {1500});
  CHECK(earlier.woke_at == std::vector<Time>{200, 1500});
  CHECK(earlier.stats.releases == 4);
}

TEST_CASE("the fast path wakes threads at the exact path's times", "[sim][wakeup]")
{
  for (const auto& [first, second] : std::vector<std::pair<std::vector<Time>, std::vector<Time>>>{
           {{200, 300, 250}, {1500}}, {{400, 300, 200}, {1500, 1200}}, {{100}, {1100}}}) {
    Outcome fast = run(false, first, second);
    Outcome exact = run(true, first, second);
    CHECK(fast.woke_at == exact.woke_at);
  }
}

TEST_CASE("a thread whose pending wake-up nobody can precede takes it without the engine", "[sim][wakeup]")
{
  for (bool exact : {false, true}) {
    Outcome o = in_child([exact] {
      World w(exact);
      Cpu& a = w.add_cpu(Side::Guest, "a");
      Outcome r;
      w.spawn<Scripted>("alone", a, [&](Scripted& t) {
        t.wake_at(5000);  // e.g. data already queued with a later stamp
        if (t.wait())
          r.woke_at.push_back(t.now());
      });
      w.run();
      r.stats = w.stats();
      return r;
    });
    CHECK(o.woke_at == std::vector<Time>{5000});
    CHECK(o.stats.waits == (exact ? 1u : 0u));  // the reference carries it there
  }
}

TEST_CASE("a run ends with its last non-daemon thread: daemon work due before is done, work after is not counted",
          "[sim][wakeup]")
{
  for (bool exact : {false, true}) {
    Outcome o = in_child([exact] {
      World w(exact);
      Cpu& a = w.add_cpu(Side::Guest, "a");
      Cpu& b = w.add_cpu(Side::Host, "b");
      Outcome r;
      auto& daemon = w.spawn<Scripted>("daemon", a, [&](Scripted& t) {
        for (;;) {
          t.wait();
          t.clear_wakeups();
          t.charge(100, Cat::Sys);
          r.woke_at.push_back(t.now());
        }
      });
      daemon.set_daemon();
      auto& app = w.spawn<Scripted>("app", b, [&](Scripted& t) {
        t.charge(10, Cat::Sys);
        t.observe();            // the daemon is asleep by now
        daemon.wake_at(50);     // due before the end
        t.charge(1000, Cat::Sys);
        daemon.wake_at(1010);   // at the end: not part of the run
      });
      w.run();
      r.stats = w.stats();
      r.woke_at.push_back(w.end());
      r.woke_at.push_back(daemon.cpu_time().busy());
      r.woke_at.push_back(app.cpu_time().busy());
      r.woke_at.push_back(a.time().busy());
      return r;
    });
    INFO((exact ? "exact" : "fast"));
    // The daemon's work at 50 (done at 150) happened; the one woken at
    // 1010 may have started, but its CPU time is taken back.
    REQUIRE(o.woke_at.size() >= 5);
    const std::size_t n = o.woke_at.size();
    CHECK(o.woke_at[0] == 150);
    CHECK(o.woke_at[n - 4] == 1010);  // the end: the app's finish
    CHECK(o.woke_at[n - 3] == 100);   // daemon CPU time
    CHECK(o.woke_at[n - 2] == 1010);  // app CPU time
    CHECK(o.woke_at[n - 1] == 100);   // the daemon's CPU
  }
}
