// Simulation speed of the firecracker_vsock model against virtio_vsock's on
// the same points (wall clock; a figure to read, never a test). Issue 52's
// goal: a 64 KiB point at least as fast per simulated message as
// virtio-vsock's. Each case runs in a forked child on one core.
//
//   build/bench_firecracker            all cases
//   build/bench_firecracker --quick    smaller transfers
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"

using namespace vsim::bench;

int main(int argc, char** argv)
{
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const double bytes = quick ? 0.5e9 : 5e9;
  std::printf("firecracker_vsock against virtio_vsock, 64 KiB writes, iperf3, guest Linux 5.10 (one core, wall "
              "clock)\n");
  calibration_line(engine_floor());
  header("");
  struct Case {
    const char* label;
    const char* base;
    const char* direction;
    const char* vcpus;
  };
  const char* fc = "transport: firecracker_vsock\nplatform: firecracker-m6i\niterations: 1\n"
                   "sim: {run_length: full}\nworkload: {app: iperf3}\nvirtio_vsock: {preset: linux-5.10}\n";
  const char* vh = "transport: virtio_vsock\nplatform: kvm-2024\niterations: 1\n"
                   "sim: {run_length: full}\nworkload: {app: iperf3}\nvirtio_vsock: {preset: linux-5.10}\n";
  const std::vector<Case> cases = {
      {"firecracker 64 KiB g2h, 1 vCPU", fc, "guest_to_host", "1"},
      {"virtio      64 KiB g2h, 1 vCPU", vh, "guest_to_host", "1"},
      {"firecracker 64 KiB h2g, 1 vCPU", fc, "host_to_guest", "1"},
      {"virtio      64 KiB h2g, 1 vCPU", vh, "host_to_guest", "1"},
      {"firecracker 64 KiB bidirectional, 2 vCPUs", fc, "bidirectional", "2"},
      {"virtio      64 KiB bidirectional, 2 vCPUs", vh, "bidirectional", "2"},
  };
  // The default guest (CONFIG_PREEMPT_VOLUNTARY) and Firecracker's CI guest
  // (CONFIG_PREEMPT_NONE, as experiments/firecracker-vsock-2023.yaml runs
  // it): without kernel preemption a thread's user and kernel work are
  // separate steps around each system call, so the same point takes more
  // events.
  for (const char* preemption : {"voluntary", "none"}) {
    std::printf("guest.preemption=%s\n", preemption);
    for (const Case& c : cases) {
      char total[64];
      std::snprintf(total, sizeof total, "workload.total_bytes=%.0f", bytes);
      const std::string v = c.vcpus;
      const Outcome o = measure(c.base, {"workload.message_size=64KiB", total, std::string("direction=") + c.direction,
                                         "guest.vcpus=" + v, "workload.connections=" + v,
                                         std::string("guest.preemption=") + preemption});
      row(c.label, bytes * std::stod(v) / 65536.0, bytes * std::stod(v), o, "");
    }
  }
  std::printf("goal (issue 52): firecracker's msgs/s at 64 KiB at least virtio's on the same point\n");
  return 0;
}
