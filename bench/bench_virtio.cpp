// Simulation speed of the virtio-vsock model on this machine (wall clock; a
// figure to read, never a test). Each case runs in a forked child process
// (one SimGrid engine per process) on one core; memory is the child's peak
// resident set, to show it does not grow with the transfer size.
//
//   build/bench_virtio            all cases
//   build/bench_virtio --quick    smaller transfers
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"

using namespace vsim::bench;

namespace {
const char* kBase = "transport: virtio_vsock\nplatform: kvm-2019\niterations: 1\n";
}  // namespace

int main(int argc, char** argv)
{
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  double small_bytes = quick ? 5e6 : 50e6;
  double big_bytes = quick ? 0.5e9 : 5e9;
  std::printf("virtio_vsock simulation speed (one core, wall clock), profile kvm-2019\n");
  const EngineFloor fl = engine_floor();
  std::printf("SimGrid on this machine: %.0f ns per semaphore hand-off between two actors, %.0f ns per sleep_until\n",
              fl.handoff_ns, fl.sleep_ns);
  std::printf("%-44s %10s %12s %10s %9s %8s %9s %9s %12s\n", "case", "wall s", "msgs/s", "GB/s sim", "simcall/m",
              "MB/s", "RSS MiB", "wakeups/m", "floor msgs/s");
  struct Case {
    const char* label;
    const char* size;
    const char* direction;
    const char* preset;
    double bytes;
    const char* mode;
  };
  std::vector<Case> cases = {
      {"128 B g2h, linux-4.19", "128", "guest_to_host", "linux-4.19", small_bytes, "fast"},
      {"128 B g2h, linux-4.19, 1/4 bytes", "128", "guest_to_host", "linux-4.19", small_bytes / 4, "fast"},
      {"128 B h2g, linux-4.19", "128", "host_to_guest", "linux-4.19", small_bytes, "fast"},
      {"128 B g2h, linux-5.4", "128", "guest_to_host", "linux-5.4", small_bytes, "fast"},
      {"128 B g2h, linux-4.19 (exact mode)", "128", "guest_to_host", "linux-4.19", small_bytes / 4, "exact"},
      {"64 KiB g2h, linux-4.19", "64KiB", "guest_to_host", "linux-4.19", big_bytes, "fast"},
      {"64 KiB g2h, linux-4.19, 1/10 bytes", "64KiB", "guest_to_host", "linux-4.19", big_bytes / 10, "fast"},
      {"64 KiB h2g, linux-4.19", "64KiB", "host_to_guest", "linux-4.19", big_bytes, "fast"},
      {"64 KiB g2h, linux-5.4", "64KiB", "guest_to_host", "linux-5.4", big_bytes, "fast"},
      {"64 KiB h2g, linux-5.4", "64KiB", "host_to_guest", "linux-5.4", big_bytes, "fast"},
  };
  for (const Case& c : cases) {
    char total[64];
    std::snprintf(total, sizeof total, "workload.total_bytes=%.0f", c.bytes);
    Outcome o = measure(kBase, {std::string("workload.message_size=") + c.size, total,
                         std::string("direction=") + c.direction, std::string("virtio_vsock.preset=") + c.preset,
                         std::string("sim.mode=") + c.mode});
    double msg_size = std::strcmp(c.size, "128") == 0 ? 128.0 : 65536.0;
    // Times per message a sleeping thread of the simulated system is woken
    // (vhost by a kick, vCPU 0 by an interrupt, a reader by data, a writer
    // by credit): each needs its actor resumed, at least one hand-off.
    double per_mb = 0;
    for (const char* k : {"worker_wakeups_per_MB", "interrupts_to_guest_per_MB", "reader_sleeps_per_MB",
                          "credit_stalls_per_MB"})
      per_mb += o.metrics.count(k) ? o.metrics.at(k) : 0;
    const double wakeups = per_mb * msg_size / 1e6;
    row(c.label, c.bytes / msg_size, c.bytes, o, fmt::format(" {:9.2f} {:12.0f}", wakeups, 1e9 / (wakeups * fl.handoff_ns)));
  }
  std::printf("goals (issue 3): >= 1e6 msgs/s with 128 B messages; >= 2 GB/s simulated payload with 64 KiB\n");
  std::printf("floor msgs/s: what the engine's hand-offs alone allow, with no model work and no other simcall\n");
  return 0;
}
