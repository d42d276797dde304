// Simulation speed of the hv_sock model on this machine (wall clock; a
// figure to read, never a test). Each case runs in a forked child process
// (one SimGrid engine per process) on one core; memory is the child's peak
// resident set, to show it does not grow with the transfer size.
//
//   build/bench_hvsock            all cases
//   build/bench_hvsock --quick    smaller transfers
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"

using namespace vsim::bench;

namespace {
const char* kBase = "transport: hv_sock\nplatform: hyperv-2019\ndirection: guest_to_host\niterations: 1\n"
                    "sim: {run_length: full}\n"; // the engine's speed: every byte simulated
} // namespace

int main(int argc, char** argv)
{
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  double small_bytes = quick ? 20e6 : 200e6;
  double big_bytes = quick ? 1e9 : 10e9;
  std::printf("hv_sock simulation speed (one core, wall clock), guest to host, profile hyperv-2019\n");
  calibration_line(engine_floor());
  header();
  struct Case {
    const char* label;
    const char* size;
    const char* sndbuf;
    double bytes;
  };
  std::vector<Case> cases = {
      {"128 B messages, default rings", "128", "default", small_bytes},
      {"128 B messages, default rings, 1/4 bytes", "128", "default", small_bytes / 4},
      {"64 KiB messages, default rings", "64KiB", "default", big_bytes},
      {"64 KiB messages, default rings, 1/10 bytes", "64KiB", "default", big_bytes / 10},
      {"64 KiB messages, SO_SNDBUF 64KiB (128 KiB ring)", "64KiB", "64KiB", big_bytes},
  };
  for (const Case& c : cases) {
    char total[64];
    std::snprintf(total, sizeof total, "workload.total_bytes=%.0f", c.bytes);
    Outcome o = measure(
        kBase, {std::string("workload.message_size=") + c.size, total, std::string("hv_sock.sndbuf=") + c.sndbuf});
    double msg_size = std::strcmp(c.size, "128") == 0 ? 128.0 : 65536.0;
    row(c.label, c.bytes / msg_size, c.bytes, o);
  }
  std::printf("goals (issue 12): >= 3e6 msgs/s with 128 B messages\n");
  return 0;
}
