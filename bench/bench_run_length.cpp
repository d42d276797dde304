// Wall time of one point against its transfer size, under sim.run_length
// auto (flat once the steady state is known) and full (linear): a figure to
// read, never a test. Each run is one iteration in a forked child.
//
//   build/bench_run_length            16 MB to 16 GB
//   build/bench_run_length --quick    16 MB to 1 GB
//
// `full` runs expected to take over a minute are skipped (the expected time
// is printed, from the rate of the largest one done).
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"

using namespace vsim::bench;

namespace {

struct Point {
  const char* label;
  const char* yaml;
};

const Point kPoints[] = {
    {"hv_sock g2h 4 KiB, default rings",
     "transport: hv_sock\nplatform: hyperv-2019\ndirection: guest_to_host\niterations: 1\n"
     "workload: {message_size: 4KiB}\n"},
    {"hv_sock h2g 64 KiB, SO_RCVBUF 64 KiB",
     "transport: hv_sock\nplatform: hyperv-2019\ndirection: host_to_guest\niterations: 1\n"
     "workload: {message_size: 64KiB}\nhv_sock: {rcvbuf: 64KiB}\n"},
    {"virtio 4.19 g2h 4 KiB, precision 2%",
     "transport: virtio_vsock\nplatform: kvm-2019\ndirection: guest_to_host\niterations: 1\n"
     "workload: {message_size: 4KiB}\nvirtio_vsock: {preset: linux-4.19}\nsim: {precision: 0.02}\n"},
};

} // namespace

int main(int argc, char** argv)
{
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::vector<double> sizes = {16e6, 64e6, 256e6, 1e9};
  if (!quick)
    for (double s : {4e9, 16e9})
      sizes.push_back(s);
  std::printf("wall time of one point against total_bytes (one core, wall clock)\n");
  std::printf("%-38s %10s %6s %10s %12s %10s %s\n", "point", "total", "mode", "wall s", "simulated MB", "MB/s", "how");
  for (const Point& p : kPoints) {
    double full_rate = 0; // wall seconds per byte of the largest full run done
    for (const char* mode : {"auto", "full"}) {
      for (double bytes : sizes) {
        char total[64];
        std::snprintf(total, sizeof total, "%.0fMB", bytes / 1e6);
        if (std::strcmp(mode, "full") == 0 && full_rate > 0 && full_rate * bytes > 60) {
          std::printf("%-38s %10s %6s %10s %12s %10s skipped (about %.0f s expected)\n", p.label, total, mode, "-", "-",
                      "-", full_rate * bytes);
          continue;
        }
        Outcome o =
            measure(p.yaml, {std::string("workload.total_bytes=") + total, std::string("sim.run_length=") + mode});
        const double simulated =
            o.metrics.count("run_length.simulated_bytes") ? o.metrics.at("run_length.simulated_bytes") : 0;
        const bool extrapolated =
            o.metrics.count("run_length.extrapolated") && o.metrics.at("run_length.extrapolated") != 0;
        if (std::strcmp(mode, "full") == 0)
          full_rate = o.wall_seconds / bytes;
        std::printf("%-38s %10s %6s %10.3f %12.1f %10.1f %s\n", p.label, total, mode, o.wall_seconds, simulated / 1e6,
                    o.throughput_MBps, extrapolated ? "extrapolated" : "simulated in full");
        std::fflush(stdout);
      }
    }
  }
  std::printf("goal (issue 13): auto flat beyond the steady state, full linear in total_bytes\n");
  return 0;
}
