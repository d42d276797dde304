// The explanation of a run: the occupancy accumulator, the metric families,
// the busy fractions, the platform graph and its bound, and `explain`.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/explain.hpp"
#include "app/report/results.hpp"
#include "app/run/runner.hpp"
#include "sim/breakdown.hpp"
#include "sim/occupancy.hpp"
#include "transports/simulate.hpp"
#include "transports/topology.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

const std::string kSource = VSIM_SOURCE_DIR;
const std::string kBinary = VSIM_BINARY;

std::string slurp(const std::string& path)
{
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs an experiment file's text through the library and returns its JSON result.
nlohmann::json run_json(const std::string& text, const std::vector<std::string>& sets)
{
  Experiment ex = load_experiment_text(text, "t.yaml", sets, registry());
  RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  auto results = run_points(ex, simulate_iteration, opt);
  return nlohmann::json::parse(to_json(ex, results, make_manifest(ex, "test")).dump());
}

const std::vector<std::string> kTinyHv = {"hv_sock.send_loop=false", "workload.message_size=64KiB",
                                          "workload.total_bytes=2MB", "iterations=1"};

// The kvm-2018 profile's virtio run, 1 connection guest to host, with the
// vhost worker's per-packet tx cost made to dominate everything else.
const char* kVirtio = R"(
platform: kvm-2018
transport: virtio_vsock
direction: guest_to_host
seed: 3
iterations: 1
workload:
  message_size: 64KiB
  total_bytes: 2MB
guest:
  vcpus: 2
virtio_vsock:
  preset: linux-4.19
)";

} // namespace

// --------------------------------------------------------------- occupancy

TEST_CASE("occupancy: time-weighted mean, empty share and histogram of a step function", "[explain][occupancy]")
{
  Occupancy o(10);
  o.change(10, 5);   // 0 on [0,10)
  o.change(30, 5);   // 5 on [10,30)
  o.change(40, -10); // 10 on [30,40), then 0 until 50
  auto s = o.summarize(50);
  CHECK(s.mean == Approx((5.0 * 20 + 10.0 * 10) / 50));
  CHECK(s.empty_fraction == Approx(20.0 / 50));
  CHECK(s.bin_fraction[4] == Approx(20.0 / 50)); // 50% of capacity: (40,50]
  CHECK(s.bin_fraction[9] == Approx(10.0 / 50)); // 100%: (90,100]
  CHECK(s.max == 10);
  double sum = s.empty_fraction;
  for (double b : s.bin_fraction)
    sum += b;
  CHECK(sum == Approx(1.0));
}

// --------------------------------------------------------------- metric families

TEST_CASE("metric families: per-CPU, per-thread and queue metrics are declared by pattern", "[explain][metrics]")
{
  for (const char* ok : {"cpu.vcpu0.sys_percent", "cpu.hcpu12.busy_percent", "thread.vhost.hypervisor_percent",
                         "thread.kworker_vcpu1.user_percent", "queue.vmbus_ring.mean",
                         "queue.virtio_tx.time_90_100_percent", "queue.virtio_rx.empty_time_percent"}) {
    INFO(ok);
    const MetricDoc* d = find_metric(ok);
    REQUIRE(d != nullptr);
    CHECK(is_metric_family(*d));
  }
  for (const char* bad : {"cpu.vcpu0.bogus_percent", "cpu..sys_percent", "cpu.vcpu0.sys_percentx",
                          "queue.vmbus_ring.time_5_15_percent", "thread.a.b.busy_percent", "cpu.vcpu0"}) {
    INFO(bad);
    CHECK(find_metric(bad) == nullptr);
  }
  // Exact names still win and are not families.
  REQUIRE(find_metric("throughput_MBps") != nullptr);
  CHECK_FALSE(is_metric_family(*find_metric("throughput_MBps")));
  // report.metrics accepts a family member and names a bad one.
  const std::string tiny = slurp(kSource + "/tests/data/cli/tiny.yaml");
  CHECK_NOTHROW(load_experiment_text(tiny, "t.yaml", {"report.metrics=cpu.vcpu1.busy_percent"}, registry()));
  CHECK_THROWS_AS(load_experiment_text(tiny, "t.yaml", {"report.metrics=cpu.vcpu1.nap_percent"}, registry()),
                  InputError);
}

// --------------------------------------------------------------- busy fractions

namespace {

// For each CPU of the plan: the sum of its threads' busy percentages per
// category, from the metrics (the plan says which thread runs where).
void check_threads_sum_to_cpus(const nlohmann::json& point)
{
  const auto& m = point["metrics"];
  const Params p = [&] {
    Params q;
    for (auto it = point["params"].begin(); it != point["params"].end(); ++it) {
      const auto& v = it.value();
      if (v.is_boolean())
        q.set(it.key(), v.get<bool>());
      else if (v.is_number_integer())
        q.set(it.key(), v.get<std::int64_t>());
      else if (v.is_number())
        q.set(it.key(), v.get<double>());
      else
        q.set(it.key(), v.get<std::string>());
    }
    return q;
  }();
  const PlatformPlan plan = platform_plan(p);
  std::map<std::string, std::string> cpu_of;
  for (const auto& l : plan.loads)
    cpu_of[l.thread] = l.cpu;
  std::map<std::string, std::array<double, 5>> sum;
  int threads = 0;
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string& k = it.key();
    if (k.rfind("thread.", 0) != 0)
      continue;
    for (int c = 0; c < 5; ++c) {
      const std::string suffix = std::string(".") + kBusyCategoryNames[c] + "_percent";
      if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) {
        const std::string name = k.substr(7, k.size() - 7 - suffix.size());
        INFO("thread " << name << " is in the platform plan");
        REQUIRE(cpu_of.count(name) == 1);
        sum[cpu_of[name]][static_cast<std::size_t>(c)] += it.value()["mean"].get<double>();
        if (c == 4)
          ++threads;
      }
    }
  }
  CHECK(threads >= 3);
  int cpus = 0;
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string& k = it.key();
    if (k.rfind("cpu.", 0) != 0 || k.find(".busy_percent") == std::string::npos)
      continue;
    const std::string cpu = k.substr(4, k.size() - 4 - std::string(".busy_percent").size());
    for (int c = 0; c < 5; ++c) {
      INFO(cpu << " " << kBusyCategoryNames[c]);
      double want = m[fmt::format("cpu.{}.{}_percent", cpu, kBusyCategoryNames[c])]["mean"].get<double>();
      CHECK(sum[cpu][static_cast<std::size_t>(c)] == Approx(want).margin(1e-9));
    }
    ++cpus;
  }
  CHECK(cpus >= 3);
}

} // namespace

TEST_CASE("busy fractions: the threads of each CPU add up to its busy time (hv_sock, both directions)",
          "[explain][busy]")
{
  auto text = slurp(kSource + "/tests/data/cli/tiny.yaml");
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    auto sets = kTinyHv;
    sets.push_back(std::string("direction=") + dir);
    auto j = run_json(text, sets);
    REQUIRE(j["points"].size() == 1);
    INFO(dir);
    check_threads_sum_to_cpus(j["points"][0]);
    const auto& m = j["points"][0]["metrics"];
    CHECK(m["queue.vmbus_ring.mean_percent"]["mean"].get<double>() > 0);
    for (auto it = m.begin(); it != m.end(); ++it)
      CHECK(find_metric(it.key()) != nullptr);
  }
}

TEST_CASE("busy fractions: the threads of each CPU add up to its busy time (virtio_vsock, kworker included)",
          "[explain][busy]")
{
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    auto j = run_json(kVirtio, {std::string("direction=") + dir, "workload.connections=2"});
    INFO(dir);
    check_threads_sum_to_cpus(j["points"][0]);
    const auto& m = j["points"][0]["metrics"];
    CHECK(m.contains("thread.kworker_vcpu1.sys_percent"));
    CHECK(m["queue.virtio_rx.mean_percent"]["mean"].get<double>() > 0);
  }
}

// --------------------------------------------------------------- platform graph

namespace {

PlatformPlan tiny_plan()
{
  PlatformPlan p;
  p.vcpus = 2;
  p.host_cpus = 1;
  p.connections = 1;
  p.clock_ghz = 1;
  p.loads = {{"writer0", "vcpu1", "guest writer", 0, 2000, ""},
             {"irq", "vcpu0", "interrupts", -1, 1000, ""},
             {"reader0", "hcpu0", "host reader", 0, 4000, ""},
             {"vhost", "hcpu0", "worker", -1, 1000, ""}};
  p.links = {{"chan", 0, "writer0", "reader0"}};
  return p;
}

} // namespace

TEST_CASE("platform graph: a sound plan validates", "[explain][graph]")
{
  CHECK(validate_topology(tiny_plan(), limits_for(tiny_plan())).empty());
}

TEST_CASE("platform graph: a thread on a missing CPU is an error naming both", "[explain][graph]")
{
  PlatformPlan p = tiny_plan();
  p.loads[0].cpu = "vcpu7";
  auto errs = validate_topology(p, limits_for(p));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].find("writer0") != std::string::npos);
  CHECK(errs[0].find("vcpu7") != std::string::npos);
  CHECK_THROWS_AS(throughput_bound(p, limits_for(p)), std::invalid_argument);
}

TEST_CASE("platform graph: a connection missing an end is an error", "[explain][graph]")
{
  PlatformPlan p = tiny_plan();
  p.links[0].reader = "";
  auto errs = validate_topology(p, limits_for(p));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].find("no reader") != std::string::npos);
  p = tiny_plan();
  p.links[0].writer = "ghost";
  errs = validate_topology(p, limits_for(p));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].find("no writer thread 'ghost'") != std::string::npos);
  p = tiny_plan();
  p.links.clear();
  errs = validate_topology(p, limits_for(p));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].find("connection 0 has no channel") != std::string::npos);
}

TEST_CASE("platform graph: an oversubscribed CPU is an error", "[explain][graph]")
{
  PlatformPlan p = tiny_plan();
  p.connections = 2;
  p.loads.push_back({"writer1", "vcpu1", "guest writer", 1, 2000, ""});
  p.loads.push_back({"reader1", "hcpu0", "host reader", 1, 4000, ""});
  p.links.push_back({"chan", 1, "writer1", "reader1"});
  // Two connections over one host CPU put two readers there: what was asked.
  CHECK(limits_for(p).host_app_threads_per_cpu == 2);
  // Two writers on vcpu1 while the guest has two vCPUs: one too many.
  auto errs = validate_topology(p, limits_for(p));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].find("CPU vcpu1 holds 2 application threads (allowed: at most 1") != std::string::npos);
  // A thread named on two CPUs is also caught.
  p = tiny_plan();
  p.loads.push_back({"writer0", "vcpu0", "guest writer", 0, 1, ""});
  errs = validate_topology(p, limits_for(p));
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].find("two CPUs") != std::string::npos);
}

TEST_CASE("bound: the most loaded CPU at its clock, by hand", "[explain][bound]")
{
  // hcpu0: reader 4000 + vhost 1000 = 5000 cycles per MB at 1 GHz: 200000 MB/s.
  Bound b = throughput_bound(tiny_plan(), limits_for(tiny_plan()));
  CHECK(b.binding.cpu == "hcpu0");
  CHECK(b.binding.cycles_per_MB == 5000);
  CHECK(b.MBps == Approx(200000));
  CHECK(b.binding.top_thread == "reader0");
  REQUIRE(b.cpus.size() == 3);
  CHECK(b.cpus[0].cpu == "vcpu0");
  CHECK(b.cpus[0].bound_MBps == Approx(1e6));
  // Two connections: each per-connection thread carries half the payload;
  // the shared vhost all of it. hcpu0: 4000/2 + 4000/2 + 1000.
  PlatformPlan p = tiny_plan();
  p.connections = 2;
  p.vcpus = 3;
  p.loads.push_back({"writer1", "vcpu2", "guest writer", 1, 2000, ""});
  p.loads.push_back({"reader1", "hcpu0", "host reader", 1, 4000, ""});
  p.links.push_back({"chan", 1, "writer1", "reader1"});
  b = throughput_bound(p, limits_for(p));
  CHECK(b.binding.cycles_per_MB == 5000);
  CHECK(b.per_connection_MBps == Approx(100000));
}

TEST_CASE("bound: hv_sock writer cycles per MB from the costs, by hand", "[explain][bound]")
{
  // 4088-byte messages, one packet each, no send loop, per_check: per send()
  // user 300 + syscall 1200; has_space: check 150 + pending clear 150;
  // enqueue 600 + check 150 + copy 60+2044 + ring write 400 + copy of the
  // 4120-byte packet 60+2060. = 7174 cycles per message.
  Experiment ex = load_experiment_text(slurp(kSource + "/tests/data/cli/tiny.yaml"), "t.yaml",
                                       {"workload.message_size=4088", "hv_sock.send_loop=false"}, registry());
  PlatformPlan plan = platform_plan(ex.points.at(0).params);
  const ThreadLoad* w = nullptr;
  for (const auto& l : plan.loads)
    if (l.thread == "linux_writer0")
      w = &l;
  REQUIRE(w != nullptr);
  CHECK(w->cpu == "vcpu1");
  CHECK(w->cycles_per_MB == Approx(7174.0 * 1e6 / 4088));
  CHECK(validate_topology(plan, limits_for(plan)).empty());
}

TEST_CASE("bound: virtio-vsock applications pay their own model's user cost per call", "[explain][bound]")
{
  // Issue 31 item 8: the loop's per send()/recv(), iperf3's per block sent
  // and received (one block per message); four different costs, so that a swap
  // of any two fails.
  auto load = [](const char* dir, const char* app, const char* thread) {
    Experiment ex = load_experiment_text(
        slurp(kSource + "/tests/data/cli/tiny-virtio.yaml"), "t.yaml",
        {std::string("workload.app=") + app, "costs.guest_user_per_call=100", "costs.virtio_host_user_per_call=200",
         "costs.virtio_guest_iperf3_user_per_call=3000", "costs.virtio_host_iperf3_user_per_call=5000"},
        registry());
    // Point 0 is guest to host, point 1 host to guest.
    const Params& p = ex.points.at(std::string(dir) == "guest_to_host" ? 0 : 1).params;
    REQUIRE(p.text("direction") == dir);
    for (const auto& l : platform_plan(p).loads)
      if (l.thread == thread)
        return l.cycles_per_MB;
    FAIL("no load " << thread);
    return 0.0;
  };
  const double msgs = 1e6 / 4096; // messages per MB
  auto more = [&](const char* dir, const char* thread) {
    return load(dir, "iperf3", thread) - load(dir, "loop", thread);
  };
  CHECK(more("guest_to_host", "guest_writer0") == Approx(msgs * (3000 - 100)));
  CHECK(more("guest_to_host", "host_reader0") == Approx(msgs * (5000 - 200)));
  CHECK(more("host_to_guest", "host_writer0") == Approx(msgs * (5000 - 200)));
  CHECK(more("host_to_guest", "guest_reader0") == Approx(msgs * (3000 - 100)));
}

// --------------------------------------------------------------- explain

TEST_CASE("explain: hv_sock with the default ring names the fill-drain ping-pong with its counts", "[explain][e2e]")
{
  auto j = run_json(slurp(kSource + "/tests/data/cli/tiny.yaml"), kTinyHv);
  std::string s = explain_point(j["points"][0], 0);
  INFO(s);
  CHECK(s.find("waiting, not CPU, is the limit") != std::string::npos);
  CHECK(s.find("Fill-drain ping-pong") != std::string::npos);
  CHECK(s.find("writer stalls on a full ring") != std::string::npos);
  CHECK(s.find("analytic bound") != std::string::npos);
  CHECK(s.find("guest writer") != std::string::npos);
}

TEST_CASE("explain: a virtio run whose vhost tx cost dominates names the vhost worker", "[explain][e2e]")
{
  auto j = run_json(kVirtio, {"costs.virtio_host_tx_pkt=200000"});
  std::string s = explain_point(j["points"][0], 0);
  INFO(s);
  CHECK(s.find("busiest thread: vhost") != std::string::npos);
  CHECK(s.find("verdict: CPU limits this point") != std::string::npos);
  CHECK(s.find("the vhost worker") != std::string::npos);
  CHECK(s.find("set by hcpu0") != std::string::npos);
}

namespace {

struct Out {
  int status;
  std::string out, err;
};
Out run_cli(const std::string& args, const std::string& dir)
{
  std::string cmd = kBinary + " " + args + " >" + dir + "/out.txt 2>" + dir + "/err.txt";
  int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(dir + "/out.txt"), slurp(dir + "/err.txt")};
}

} // namespace

TEST_CASE("explain: bad input exits 2 naming the file and what is allowed", "[explain][cli]")
{
  namespace fs = std::filesystem;
  char pattern[] = "/tmp/vsim-explain-XXXXXX";
  REQUIRE(mkdtemp(pattern) != nullptr);
  const std::string dir = pattern;
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  Out r = run_cli("explain " + dir + "/missing.json", dir);
  CHECK(r.status == 2);
  CHECK(r.err.find("missing.json: error: cannot open") != std::string::npos);
  CHECK(r.err.find("allowed: the JSON written by `vsocksim run --format json`") != std::string::npos);
  CHECK(r.out.empty());

  r = run_cli("explain " + write("bad.json", "{ not json"), dir);
  CHECK(r.status == 2);
  CHECK(r.err.find("bad.json: error: not valid JSON") != std::string::npos);

  r = run_cli("explain " + write("other.json", R"({"a": 1})"), dir);
  CHECK(r.status == 2);
  CHECK(r.err.find("other.json: error: not a vsocksim result") != std::string::npos);

  // A real result: point 0 explains, point 1 is out of range.
  auto j = run_json(slurp(kSource + "/tests/data/cli/tiny.yaml"), kTinyHv);
  const std::string good = write("result.json", j.dump(2));
  r = run_cli("explain " + good + " --point 0", dir);
  CHECK(r.status == 0);
  CHECK(r.out.find("point 0") != std::string::npos);
  r = run_cli("explain " + good + " --point 1", dir);
  CHECK(r.status == 2);
  CHECK(r.err.find("--point 1 is out of range (allowed: 0 to 0)") != std::string::npos);
  r = run_cli("explain", dir);
  CHECK(r.status == 2);
  fs::remove_all(dir);
}

TEST_CASE("explain: one rule for every verdict, a thread or CPU busy 85% or more", "[explain][e2e]")
{
  // A real point, its busy shares then set by hand: the verdict follows the
  // busiest thread (and CPU), not the share of the analytic bound.
  auto j = run_json(kVirtio, {});
  nlohmann::json point = j["points"][0];
  auto set_busy = [&](const std::string& entity, double busy) {
    point["metrics"][entity + ".busy_percent"] = {{"min", busy}, {"max", busy}, {"mean", busy}, {"median", busy}};
  };
  for (auto it = point["metrics"].begin(); it != point["metrics"].end(); ++it)
    if ((it.key().starts_with("thread.") || it.key().starts_with("cpu.")) && it.key().ends_with(".busy_percent"))
      it.value() = {{"min", 10.0}, {"max", 10.0}, {"mean", 10.0}, {"median", 10.0}};
  set_busy("thread.vhost", 84);
  CHECK(explain_point(point, 0).find("verdict: waiting, not CPU, is the limit") != std::string::npos);
  set_busy("thread.vhost", 86);
  const std::string cpu = explain_point(point, 0);
  INFO(cpu);
  CHECK(cpu.find("verdict: CPU limits this point: ") != std::string::npos);
  CHECK(cpu.find("[vhost] is busy 86.0% of the time (saturated: at least 85%)") != std::string::npos);
  // No thread saturated, but a CPU its threads share is: that CPU.
  set_busy("thread.vhost", 50);
  set_busy("cpu.vcpu1", 91);
  CHECK(explain_point(point, 0).find("verdict: CPU limits this point: vcpu1 is busy 91.0% of the time") !=
        std::string::npos);
}

TEST_CASE("explain: iperf3's streams, one thread on one CPU, have a bound and a verdict", "[explain][e2e]")
{
  auto j = run_json(kVirtio, {"workload.app=iperf3", "workload.connections=2", "guest.vcpus=4"});
  const std::string s = explain_point(j["points"][0], 0);
  INFO(s);
  CHECK(s.find("bound: not computed") == std::string::npos);
  CHECK(s.find("analytic bound: ") != std::string::npos);
  CHECK(s.find("  verdict: ") != std::string::npos);
}
