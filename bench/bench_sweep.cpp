// Cost of a large sweep on this machine (wall clock; figures to read, never a
// test): a 1000-point sweep of small runs through the real command line,
// with --jobs set to the number of cores.
//
//   build/bench_sweep [PATH/TO/vsocksim] [POINTS]
//
// Prints the CPU use (children's user+sys time over wall time: 200% = both
// cores busy) and the overhead per point beyond the simulation itself,
// measured as the wall time per point of a sweep whose simulations move a
// single 128-byte message (so nearly all of it is process, engine and result
// handling).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.hpp"

namespace {

vsim::bench::CliOutcome run(const std::string& bin, const std::string& yaml, unsigned jobs)
{
  return vsim::bench::run_cli(bin, {"run", yaml, "-q", "--format", "json", "--jobs", std::to_string(jobs)});
}

std::string sweep_file(const std::string& path, int points, const char* total_bytes, const char* message_size)
{
  std::ofstream f(path);
  f << "name: bench-sweep\ntransport: hv_sock\nplatform: hyperv-2019\niterations: 1\nsim: {run_length: full}\n"
    << "workload:\n  total_bytes: " << total_bytes << "\n  message_size: " << message_size << "\n"
    << "sweep:\n  grid:\n    seed: [";
  for (int i = 0; i < points; ++i)
    f << (i ? ", " : "") << i + 1;
  f << "]\n";
  return path;
}

} // namespace

int main(int argc, char** argv)
{
  std::string bin = argc > 1 ? argv[1] : "build/vsocksim";
  int points = argc > 2 ? std::atoi(argv[2]) : 1000;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  char dir[] = "/tmp/vsocksim-bench.XXXXXX";
  if (mkdtemp(dir) == nullptr)
    return 1;
  std::string d = dir;

  std::printf("%d-point sweeps, --jobs %u, through %s\n", points, jobs, bin.c_str());
  for (const char* bytes : {"20MB", "2MB"}) {
    vsim::bench::CliOutcome small = run(bin, sweep_file(d + "/small.yaml", points, bytes, "4KiB"), jobs);
    if (small.status != 0) {
      std::fprintf(stderr, "bench_sweep: vsocksim failed (status %d)\n", small.status);
      return 1;
    }
    std::printf("small runs (%s of 4 KiB messages each): wall %.2f s (%.1f ms per point), CPU use %.0f%%\n", bytes,
                small.wall, 1000.0 * small.wall / points, 100.0 * small.cpu / small.wall);
  }
  vsim::bench::CliOutcome empty = run(bin, sweep_file(d + "/empty.yaml", points, "128", "128"), jobs);
  std::remove((d + "/small.yaml").c_str());
  std::remove((d + "/empty.yaml").c_str());
  rmdir(dir);
  if (empty.status != 0) {
    std::fprintf(stderr, "bench_sweep: vsocksim failed (status %d)\n", empty.status);
    return 1;
  }
  std::printf("near-empty runs (one 128 B message each):  wall %.2f s -> overhead %.1f ms per point "
              "(%.1f ms of CPU per point)\n",
              empty.wall, 1000.0 * empty.wall / points, 1000.0 * empty.cpu / points);
  std::printf("goals (issue 4): CPU use > 180%% on 2 cores; overhead < 50 ms per point\n");
  return 0;
}
