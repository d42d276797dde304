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
const char* kBase = "transport: virtio_vsock\nplatform: kvm-2019\niterations: 1\n"
                    "sim: {run_length: full}\n"; // the engine's speed: every byte simulated
} // namespace

int main(int argc, char** argv)
{
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  double small_bytes = quick ? 5e6 : 50e6;
  double big_bytes = quick ? 0.5e9 : 5e9;
  std::printf("virtio_vsock simulation speed (one core, wall clock), profile kvm-2019\n");
  calibration_line(engine_floor());
  header(" wakeups/m");
  struct Case {
    const char* label;
    const char* size;
    const char* direction;
    const char* preset;
    double bytes;
  };
  std::vector<Case> cases = {
      {"128 B g2h, linux-4.19", "128", "guest_to_host", "linux-4.19", small_bytes},
      {"128 B g2h, linux-4.19, 1/4 bytes", "128", "guest_to_host", "linux-4.19", small_bytes / 4},
      {"128 B h2g, linux-4.19", "128", "host_to_guest", "linux-4.19", small_bytes},
      {"128 B g2h, linux-5.4", "128", "guest_to_host", "linux-5.4", small_bytes},
      {"128 B h2g, linux-5.4", "128", "host_to_guest", "linux-5.4", small_bytes},
      {"128 B g2h, linux-6.6", "128", "guest_to_host", "linux-6.6", small_bytes},
      {"128 B g2h, linux-6.12", "128", "guest_to_host", "linux-6.12", small_bytes},
      {"128 B h2g, linux-6.12", "128", "host_to_guest", "linux-6.12", small_bytes},
      {"64 KiB g2h, linux-4.19", "64KiB", "guest_to_host", "linux-4.19", big_bytes},
      {"64 KiB g2h, linux-4.19, 1/10 bytes", "64KiB", "guest_to_host", "linux-4.19", big_bytes / 10},
      {"64 KiB h2g, linux-4.19", "64KiB", "host_to_guest", "linux-4.19", big_bytes},
      {"64 KiB g2h, linux-5.4", "64KiB", "guest_to_host", "linux-5.4", big_bytes},
      {"64 KiB h2g, linux-5.4", "64KiB", "host_to_guest", "linux-5.4", big_bytes},
      {"64 KiB g2h, linux-6.12", "64KiB", "guest_to_host", "linux-6.12", big_bytes},
      {"64 KiB h2g, linux-6.12", "64KiB", "host_to_guest", "linux-6.12", big_bytes},
  };
  for (const Case& c : cases) {
    char total[64];
    std::snprintf(total, sizeof total, "workload.total_bytes=%.0f", c.bytes);
    Outcome o =
        measure(kBase, {std::string("workload.message_size=") + c.size, total, std::string("direction=") + c.direction,
                        std::string("virtio_vsock.preset=") + c.preset});
    double msg_size = std::strcmp(c.size, "128") == 0 ? 128.0 : 65536.0;
    // Times per message a sleeping thread of the simulated system is woken
    // (vhost by a kick, vCPU 0 by an interrupt, a reader by data, a writer
    // by credit).
    double per_mb = 0;
    for (const char* k :
         {"worker_wakeups_per_MB", "interrupts_to_guest_per_MB", "reader_sleeps_per_MB", "credit_stalls_per_MB"})
      per_mb += o.metrics.count(k) ? o.metrics.at(k) : 0;
    row(c.label, c.bytes / msg_size, c.bytes, o, fmt::format(" {:9.2f}", per_mb * msg_size / 1e6));
  }
  std::printf("goals (issue 12): >= 1e6 msgs/s for 128 B g2h linux-4.19, >= 0.5e6 in every 128 B case; "
              ">= 5 GB/s simulated payload with 64 KiB\n");
  std::printf("events/m: simulated-thread resumptions per message; simcall/m: SimGrid main-loop iterations "
              "(time advances) per message\n");
  return 0;
}
