// What running a profile's ensemble costs (issue 50: "a study on an
// ensemble profile at most 10x the single profile's time"; wall clock,
// figures to read, never a test): each shipped study on an ensemble profile
// run through the real command line with and without --ensemble, --jobs set
// to the number of cores.
//
//   build/bench_ensemble [PATH/TO/vsocksim]
//
// Each member is one simulation (iteration 0's random streams) added to the
// point's own iterations, so the factor is about 1 + members / iterations.
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.hpp"

int main(int argc, char** argv)
{
  const std::string bin = argc > 1 ? argv[1] : "build/vsocksim";
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::string> studies = {"experiments/vsock-avoid-queuing-2024.yaml",
                                            "experiments/vsock-latency-2024.yaml",
                                            "experiments/vsock-skbuff-2023.yaml"};
  std::printf("studies on kvm-2024 (16 members), --jobs %u, through %s\n", jobs, bin.c_str());
  std::printf("%-45s %12s %14s %8s\n", "study", "single (s)", "ensemble (s)", "factor");
  double worst = 0;
  for (const std::string& study : studies) {
    std::vector<std::string> args{"run", study, "-q", "--format", "json", "--jobs", std::to_string(jobs)};
    const vsim::bench::CliOutcome single = vsim::bench::run_cli(bin, args);
    args.push_back("--ensemble");
    const vsim::bench::CliOutcome ensemble = vsim::bench::run_cli(bin, args);
    if (single.status != 0 || ensemble.status != 0) {
      std::fprintf(stderr, "bench_ensemble: vsocksim failed on %s (status %d, %d)\n", study.c_str(), single.status,
                   ensemble.status);
      return 1;
    }
    const double factor = ensemble.wall / single.wall;
    worst = std::max(worst, factor);
    std::printf("%-45s %12.2f %14.2f %7.1fx\n", study.c_str(), single.wall, ensemble.wall, factor);
  }
  std::printf("largest factor %.1fx; goal (issue 50): at most 10x\n", worst);
  return 0;
}
