// Cost and quality of `vsocksim search` (wall clock; figures to read, never
// a test).
//
//   build/bench_search [time|compare|all] [JOBS]
//
// time: the wall time of a 500-evaluation NSGA-II search over five knobs of
// each transport (the goal: at most 3 minutes each with --jobs 2 on the
// 2-core development machine), points as the shipped search experiments
// simulate them (3 iterations; hv_sock 256 MB, virtio-vsock 64 MB at 4 KiB).
// compare: NSGA-II against MOEA/D-DE on spaces small enough to search
// exhaustively (cheap points), throughput against memory per connection:
// the share of the exhaustive front's hypervolume each reaches within a
// budget of a 20th and an 8th of the space, over five seeds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/search/search.hpp"
#include "transports/simulate.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

const char* kObjectives = R"(  objectives:
    - max: throughput_MBps
    - min: (host_cpu_percent+guest_cpu_percent)/throughput_MBps
)";

const std::string kHvTimed = std::string(R"(name: bench-search-hv
platform: hyperv-2019
transport: hv_sock
iterations: 3
workload: {total_bytes: 256MB}
search:
  space:
    hv_sock.sndbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.rcvbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.send_loop: [false, true]
    hv_sock.pending_send_size: [per_check, once]
    workload.message_size: {from: 1KiB, to: 64KiB, scale: log2}
)") + kObjectives + "  budget: 500\n  method: nsga2\n";

const std::string kVirtioTimed = std::string(R"(name: bench-search-virtio
platform: kvm-2024
transport: virtio_vsock
iterations: 3
workload: {total_bytes: 64MB, message_size: 4KiB}
virtio_vsock: {preset: linux-6.12}
search:
  space:
    virtio_vsock.rx_buf_size: {from: 1KiB, to: 64KiB, scale: log2}
    virtio_vsock.queue_size: {from: 64, to: 1024, scale: log2}
    virtio_vsock.buf_alloc: {from: 64KiB, to: 2MiB, scale: log2}
    virtio_vsock.credit_update: [every_read, threshold, threshold_rcvlowat]
    virtio_vsock.event_idx: [false, true]
)") + kObjectives + "  budget: 500\n  method: nsga2\n";

// Spaces for the comparison: 392 and 576 combinations of cheap points,
// throughput against memory per connection (a long front: each doubling of
// a buffer buys some throughput).
const char* kTradeOff = R"(  objectives:
    - max: throughput_MBps
    - min: memory_bytes_per_connection
)";
const std::string kHvSmall = std::string(R"(name: bench-compare-hv
platform: hyperv-2019
transport: hv_sock
iterations: 1
workload: {total_bytes: 128kB}
search:
  space:
    hv_sock.sndbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.rcvbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.send_loop: [false, true]
    workload.message_size: [1KiB, 4KiB, 16KiB, 64KiB]
)") + kTradeOff + "  budget: 400\n";

const std::string kVirtioSmall = std::string(R"(name: bench-compare-virtio
platform: kvm-2024
transport: virtio_vsock
iterations: 1
workload: {total_bytes: 256kB, message_size: 4KiB}
virtio_vsock: {preset: linux-6.12}
search:
  space:
    virtio_vsock.rx_buf_size: {from: 1KiB, to: 32KiB, scale: log2}
    virtio_vsock.queue_size: [64, 128, 256, 512]
    virtio_vsock.buf_alloc: {from: 64KiB, to: 512KiB, scale: log2}
    virtio_vsock.credit_update: [every_read, threshold, threshold_rcvlowat]
    virtio_vsock.event_idx: [false, true]
)") + kTradeOff + "  budget: 600\n";

SearchHooks hooks(unsigned jobs)
{
  SearchHooks h;
  h.iteration = simulate_iteration;
  h.run.jobs = jobs;
  h.run.progress = false;
  return h;
}

Experiment load_text(const std::string& text)
{
  return load_experiment_text(text, "bench.yaml", {}, registry());
}

std::vector<std::vector<double>> minimised_front(const SearchResult& r)
{
  std::vector<std::vector<double>> f;
  for (std::size_t at : r.front)
    f.push_back({-r.evaluated[at].objectives[0].mean, r.evaluated[at].objectives[1].mean});
  return f;
}

void timed(unsigned jobs)
{
  std::printf("500-evaluation NSGA-II searches over five knobs, --jobs %u\n", jobs);
  std::printf("%-14s %10s %12s %12s %10s\n", "transport", "wall_s", "evaluations", "generations", "front");
  for (const auto& [name, text] : {std::pair{"hv_sock", &kHvTimed}, std::pair{"virtio_vsock", &kVirtioTimed}}) {
    const Experiment ex = load_text(*text);
    const auto t0 = std::chrono::steady_clock::now();
    const SearchResult r = run_search(ex, {}, "", hooks(jobs));
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-14s %10.1f %12zu %12zu %10zu\n", name, wall, r.evaluated.size(), r.generations, r.front.size());
    std::fflush(stdout);
  }
}

void compare(unsigned jobs)
{
  std::printf("NSGA-II against MOEA/D-DE: share of the exhaustive front's hypervolume within a budget of a 20th "
              "and an 8th of the space\n");
  std::printf("%-14s %6s %8s %10s %10s %10s %10s\n", "space", "seed", "budget", "nsga2_%", "moead_%", "nsga2_pts",
              "moead_pts");
  for (const auto& [name, text] : {std::pair{"hv_sock", &kHvSmall}, std::pair{"virtio_vsock", &kVirtioSmall}}) {
    const Experiment ex = load_text(*text);
    const SearchResult all = run_search(ex, {}, "", hooks(jobs));
    std::vector<double> lo = {INFINITY, INFINITY}, hi = {-INFINITY, -INFINITY};
    for (const Evaluated& e : all.evaluated)
      if (e.feasible) {
        const std::vector<double> f = {-e.objectives[0].mean, e.objectives[1].mean};
        for (int m = 0; m < 2; ++m) {
          lo[m] = std::min(lo[m], f[m]);
          hi[m] = std::max(hi[m], f[m]);
        }
      }
    const std::vector<double> ref = {hi[0] + 0.1 * (hi[0] - lo[0]), hi[1] + 0.1 * (hi[1] - lo[1])};
    const double best = hypervolume(minimised_front(all), ref);
    for (const std::size_t share_of_space : {20, 8}) {
      const auto budget = static_cast<std::int64_t>(all.evaluated.size() / share_of_space);
      double sum[2] = {0, 0};
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        double share[2];
        std::size_t points[2];
        int k = 0;
        for (const char* method : {"nsga2", "moead"}) {
          SearchOptions opt;
          opt.method = method;
          opt.budget = budget;
          opt.seed = seed;
          const SearchResult r = run_search(ex, opt, "", hooks(jobs));
          share[k] = hypervolume(minimised_front(r), ref) / best * 100;
          points[k] = r.evaluated.size();
          sum[k] += share[k];
          ++k;
        }
        std::printf("%-14s %6llu %8lld %10.1f %10.1f %10zu %10zu\n", name, static_cast<unsigned long long>(seed),
                    static_cast<long long>(budget), share[0], share[1], points[0], points[1]);
        std::fflush(stdout);
      }
      std::printf("%-14s %6s %8lld %10.1f %10.1f   (mean over the seeds; exhaustive: %zu points, front %zu)\n", name,
                  "mean", static_cast<long long>(budget), sum[0] / 5, sum[1] / 5, all.evaluated.size(),
                  all.front.size());
    }
  }
}

} // namespace

int main(int argc, char** argv)
{
  const std::string what = argc > 1 ? argv[1] : "all";
  const unsigned jobs = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 2;
  if (what == "compare" || what == "all")
    compare(jobs);
  if (what == "time" || what == "all")
    timed(jobs);
  return 0;
}
