// vsocksim search (app/search/): the search section as the loader reads it,
// the memory metric it constrains, exhaustive search against a brute-force
// front, the evolutionary methods against the exhaustive front's
// hypervolume, and constraints on every reported point.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "app/experiment/describe.hpp"
#include "app/experiment/effective.hpp"
#include "app/experiment/params_json.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/stats.hpp"
#include "app/run/runner.hpp"
#include "app/search/search.hpp"
#include "transports/simulate.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

// 18 cheap hv_sock points: three send rings, three receive rings, the send
// loop on and off.
const std::string kSmallBase = R"(name: search-small
platform: hyperv-2019
transport: hv_sock
seed: 5
iterations: 2
workload:
  message_size: 16KiB
  total_bytes: 200kB
)";
const std::string kSmallSearch = R"(search:
  space:
    hv_sock.sndbuf: [16KiB, 64KiB, 256KiB]
    hv_sock.rcvbuf: [default, 64KiB, 256KiB]
    hv_sock.send_loop: [false, true]
  objectives:
    - max: throughput_MBps
    - min: (host_cpu_percent+guest_cpu_percent)/throughput_MBps
  budget: 30
)";

SearchHooks hooks(unsigned jobs = 2)
{
  SearchHooks h;
  h.iteration = simulate_iteration;
  h.run.jobs = jobs;
  h.run.progress = false;
  return h;
}

Experiment load_text(const std::string& text)
{
  return load_experiment_text(text, "search-test.yaml", {}, registry());
}

double mean_of(const PointResult& r, const std::string& metric)
{
  return summarize(metric_values(r).at(metric)).mean;
}

// (throughput, CPU per MB/s) of each iteration, averaged: the objectives
// computed here, not by the search.
std::vector<double> objectives_by_hand(const PointResult& r)
{
  double t = 0, c = 0;
  for (const Metrics& m : r.iterations) {
    t += m.at("throughput_MBps");
    c += (m.at("host_cpu_percent") + m.at("guest_cpu_percent")) / m.at("throughput_MBps");
  }
  const auto n = static_cast<double>(r.iterations.size());
  return {t / n, c / n};
}

// Whether a (maximised) dominates b in the first, minimised in the second.
bool dominates(const std::vector<double>& a, const std::vector<double>& b)
{
  return a[0] >= b[0] && a[1] <= b[1] && (a[0] > b[0] || a[1] < b[1]);
}

std::set<std::string> front_params(const SearchResult& r)
{
  std::set<std::string> out;
  for (std::size_t at : r.front)
    out.insert(params_json(r.evaluated[at].point.params).dump());
  return out;
}

} // namespace

TEST_CASE("search: the loader reads the search section, and describe lists its keys", "[search]")
{
  const Experiment ex = load_text(kSmallBase + kSmallSearch);
  REQUIRE(ex.search);
  CHECK(ex.points.size() == 1);
  REQUIRE(ex.search->space.size() == 3);
  CHECK(ex.search->space[0].values.size() == 3);
  CHECK(ex.search->space[1].values[0].raw == "default");
  REQUIRE(ex.search->objectives.size() == 2);
  CHECK(ex.search->objectives[0].maximise);
  CHECK_FALSE(ex.search->objectives[1].maximise);
  CHECK(ex.search->budget == 30);
  CHECK(ex.search->method == "auto");
  // A log2 range doubles from `from` while at most `to`.
  const Experiment ranged = load_text(kSmallBase + R"(search:
  space:
    hv_sock.sndbuf: {from: 16KiB, to: 1000KiB, scale: log2}
    workload.connections: {from: 1, to: 7, step: 3}
  objectives:
    - max: throughput_MBps
  constraints:
    - memory_bytes_per_connection <= 1MiB
)");
  std::vector<std::string> raws;
  for (const auto& g : ranged.search->space[0].values)
    raws.push_back(g.raw);
  CHECK(raws == std::vector<std::string>{"16KiB", "32KiB", "64KiB", "128KiB", "256KiB", "512KiB"});
  CHECK(ranged.search->space[1].values.size() == 3); // 1, 4, 7
  REQUIRE(ranged.search->constraints.size() == 1);
  CHECK(ranged.search->constraints[0].bound == 1048576);
  CHECK(ranged.search->constraints[0].holds(1048576));
  CHECK_FALSE(ranged.search->constraints[0].holds(1048577));
  // describe and docs/parameters.md list the keys, from one declaration.
  const std::string text = describe_text(registry(), "search");
  for (const SearchKeyDoc& k : search_keys())
    CHECK(text.find(k.path + "\n  type:    " + k.type + "\n") != std::string::npos);
  CHECK(describe_markdown(registry()).find("| `search.budget` | integer (simulated points) | 100 | 1 .. 100000 |") !=
        std::string::npos);
  // The search section is part of the configuration's hash.
  CHECK(load_text(kSmallBase + kSmallSearch).config_sha256 != ranged.config_sha256);
  CHECK(load_text(kSmallBase).config_sha256 != ex.config_sha256);
}

TEST_CASE("memory_bytes_per_connection: the parts in effective, their sum the metric", "[search][metrics]")
{
  SECTION("hv_sock: the two VMBus rings and the send buffer")
  {
    const Experiment ex = load_text(kSmallBase + "hv_sock:\n  sndbuf: 64KiB\n  rcvbuf: default\n");
    const Params& p = ex.points[0].params;
    double parts = 0;
    for (const Effective& e : effective_values(p))
      if (e.name.rfind("memory_", 0) == 0)
        parts += e.value;
    // SO_SNDBUF 64 KiB: the kernel doubles it, 128 KiB of ring; the default
    // receive ring is 6 pages; hvs_send_buf is 4 KiB.
    CHECK(parts == 131072 + 24576 + 4096);
    CHECK(params_metrics(p).at("memory_bytes_per_connection") == parts);
  }
  SECTION("virtio_vsock: three vrings and the rx buffers, shared by the connections, and buf_alloc each end")
  {
    const Experiment ex = load_text(R"(platform: kvm-2024
transport: virtio_vsock
virtio_vsock: {preset: linux-6.12, queue_size: 128, rx_buf_size: 4KiB, buf_alloc: 256KiB}
workload: {connections: 2}
)");
    const Params& p = ex.points[0].params;
    std::map<std::string, double> parts;
    for (const Effective& e : effective_values(p))
      if (e.name.rfind("memory_", 0) == 0)
        parts[e.name] = e.value;
    // vring_size(128, 64): ALIGN(16*128 + 2*131, 64) + 6 + 8*128 = 3398: one
    // page, half of it this connection's.
    CHECK(parts.at("memory_vring_rx") == 2048);
    CHECK(parts.at("memory_vring_tx") == 2048);
    CHECK(parts.at("memory_vring_event") == 2048);
    // 128 skbs: 256 + kmalloc_size_roundup(ALIGN(44 + 4096, 64) + 320 = 4480) = 256 + 8192 each, halved.
    CHECK(parts.at("memory_rx_buffers") == 128 * (256 + 8192) / 2.0);
    CHECK(parts.at("memory_buf_alloc_guest") == 262144);
    CHECK(parts.at("memory_buf_alloc_host") == 262144);
    double sum = 0;
    for (const auto& [name, v] : parts)
      sum += v;
    CHECK(params_metrics(p).at("memory_bytes_per_connection") == sum);
  }
}

TEST_CASE("search: exhaustive returns exactly the non-dominated set of a brute-force sweep", "[search]")
{
  const Experiment ex = load_text(kSmallBase + kSmallSearch);
  const SearchResult r = run_search(ex, {}, "", hooks());
  CHECK(r.plan.chosen == "exhaustive");
  REQUIRE(r.evaluated.size() == 18);
  // The same 18 points as a sweep, simulated and judged here.
  const Experiment sweep = load_text(kSmallBase + R"(sweep:
  grid:
    hv_sock.sndbuf: [16KiB, 64KiB, 256KiB]
    hv_sock.rcvbuf: [default, 64KiB, 256KiB]
    hv_sock.send_loop: [false, true]
)");
  RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  const std::vector<PointResult> results = run_points(sweep, simulate_iteration, opt);
  std::vector<std::vector<double>> f;
  for (const PointResult& pr : results)
    f.push_back(objectives_by_hand(pr));
  std::set<std::string> brute;
  for (std::size_t i = 0; i < f.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < f.size(); ++j)
      dominated = dominated || dominates(f[j], f[i]);
    if (!dominated)
      brute.insert(params_json(sweep.points[i].params).dump());
  }
  REQUIRE_FALSE(brute.empty());
  CHECK(front_params(r) == brute);
  // Sorted along the first objective, best (highest throughput) first.
  for (std::size_t a = 1; a < r.front.size(); ++a)
    CHECK(r.evaluated[r.front[a - 1]].objectives[0].mean >= r.evaluated[r.front[a]].objectives[0].mean);
  // The sensitivity table: a row per knob and objective.
  CHECK(r.sensitivity.size() == 3 * 2);
}

TEST_CASE("search: the evolutionary methods reach 95% of the exhaustive front hypervolume and no reported point "
          "breaks a constraint",
          "[search][hypervolume]")
{
  // 7 x 7 x 2 x 4 = 392 combinations of cheap hv_sock points, three
  // objectives (throughput, CPU per MB/s, memory), a memory bound that rules
  // some out before simulating and a throughput floor that only simulating
  // can check.
  const std::string base = R"(name: search-hv
platform: hyperv-2019
transport: hv_sock
seed: 3
iterations: 1
workload:
  total_bytes: 128kB
search:
  space:
    hv_sock.sndbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.rcvbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.send_loop: [false, true]
    workload.message_size: [1KiB, 4KiB, 16KiB, 64KiB]
  objectives:
    - max: throughput_MBps
    - min: (host_cpu_percent+guest_cpu_percent)/throughput_MBps
    - min: memory_bytes_per_connection
  constraints:
    - memory_bytes_per_connection <= 400KiB
    - throughput_MBps >= 200
)";
  const Experiment ex = load_text(base + "  budget: 400\n");
  const SearchResult all = run_search(ex, {}, "", hooks());
  REQUIRE(all.plan.chosen == "exhaustive");
  // Each point's objectives, all minimised.
  auto objectives = [](const Evaluated& e) {
    return std::vector<double>{-e.objectives[0].mean, e.objectives[1].mean, e.objectives[2].mean};
  };
  auto minimised = [&](const SearchResult& r) {
    std::vector<std::vector<double>> f;
    for (std::size_t at : r.front)
      f.push_back(objectives(r.evaluated[at]));
    return f;
  };
  // The reference point: beyond the worst feasible point of the whole space
  // by a tenth of the range in each objective.
  std::vector<double> lo(3, INFINITY), hi(3, -INFINITY);
  for (const Evaluated& e : all.evaluated)
    if (e.feasible) {
      const std::vector<double> f = objectives(e);
      for (int m = 0; m < 3; ++m) {
        lo[m] = std::min(lo[m], f[m]);
        hi[m] = std::max(hi[m], f[m]);
      }
    }
  std::vector<double> ref;
  for (int m = 0; m < 3; ++m)
    ref.push_back(hi[m] + 0.1 * (hi[m] - lo[m]));
  CHECK(all.front.size() >= 3);
  const double best = hypervolume(minimised(all), ref);
  REQUIRE(best > 0);
  for (const char* method : {"nsga2", "moead"}) {
    SearchOptions opt;
    opt.method = method;
    opt.budget = 40;
    const SearchResult r = run_search(ex, opt, "", hooks());
    INFO(method << ": " << r.evaluated.size() << " points evaluated in " << r.generations << " generations");
    CHECK(r.evaluated.size() <= 40);
    const double hv = hypervolume(minimised(r), ref);
    WARN(method << ": " << hv / best * 100 << "% of the exhaustive front's hypervolume, " << r.evaluated.size()
                << " points evaluated in " << r.generations << " generations");
    if (std::string(method) == "nsga2")
      CHECK(hv >= 0.95 * best);
    // Every reported point meets every constraint, on its own figures.
    for (std::size_t at : r.front) {
      const Evaluated& e = r.evaluated[at];
      CHECK(mean_of(e.result, "memory_bytes_per_connection") <= 400 * 1024);
      CHECK(mean_of(e.result, "throughput_MBps") >= 200);
    }
  }
  for (std::size_t at : all.front)
    CHECK(mean_of(all.evaluated[at].result, "throughput_MBps") >= 200);
}

TEST_CASE("search: the seed decides everything and the number of jobs nothing", "[search]")
{
  const std::string text = kSmallBase + R"(search:
  space:
    hv_sock.sndbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.rcvbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.send_loop: [false, true]
  objectives:
    - max: throughput_MBps
    - min: (host_cpu_percent+guest_cpu_percent)/throughput_MBps
  budget: 24
  method: nsga2
)";
  const Experiment ex = load_text(text);
  auto order = [](const SearchResult& r) {
    std::vector<std::string> out;
    for (const Evaluated& e : r.evaluated)
      out.push_back(params_json(e.point.params).dump());
    return out;
  };
  const SearchResult one = run_search(ex, {}, "", hooks(1));
  const SearchResult two = run_search(ex, {}, "", hooks(2));
  CHECK(order(one) == order(two));
  CHECK(search_json(one)["front"] == search_json(two)["front"]);
  SearchOptions other;
  other.seed = 99;
  CHECK(order(run_search(ex, other, "", hooks(2))) != order(one));
}
