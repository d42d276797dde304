// vsocksim check: every shipped experiment accepted, what run refuses refused
// before simulating, the warnings about clamped values.
#include "cli_support.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace cli_test;

TEST_CASE("cli: check accepts every experiment under experiments/ (not the profiles of experiments/platforms)", "[cli]")
{
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kSource + "/experiments"))
    if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml") &&
        e.path().parent_path().filename() != "platforms") // profile files (docs/profiles.md), not experiments
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 3);
  CHECK(std::count(files.begin(), files.end(), kSource + "/experiments/calibration/hyperv-2019.yaml") == 1);
  TempDir dir;
  for (const std::string& file : files) {
    INFO(file);
    const Run r = run_cli(dir, {"check", file});
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::StartsWith(file + ": ok"));
    CHECK(lines_of(r.out).size() == 1);
  }
  CHECK(snapshot(dir.ws).empty());
}

TEST_CASE("cli: check refuses what run refuses before simulating", "[cli]")
{
  TempDir dir;
  for (const char* entry :
       {"report.metrics=speed", "validation.measurements=unknown-column.csv", "validation.measurements=nosuch.csv"}) {
    INFO(entry);
    const Run ran = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--set", entry} + kTinySets);
    CHECK(ran.status == 2);
    const Run checked = run_cli(dir, std::vector<std::string>{"check", kTiny, "--set", entry} + kTinySets);
    CHECK(checked.status == 2);
    CHECK(checked.err == ran.err);
  }
}

TEST_CASE("cli: check and run warn about swept values the transport clamps, and name identical points",
          "[cli][effective]")
{
  TempDir dir;
  const std::vector<std::string> sweep = {"--set", "sweep.grid.hv_sock.rcvbuf=[64KiB,1MiB,4MiB]",
                                          "--set", "direction=host_to_guest",
                                          "--set", "workload.total_bytes=200kB"};
  const Run c = run_cli(dir, std::vector<std::string>{"check", kTiny} + sweep);
  REQUIRE(c.status == 0);
  CHECK(c.out.find(kTiny + ": warning: hv_sock.rcvbuf=1048576: capped by hv_sock.sysctl_rmem_max at 212992; the "
                           "kernel's 425984 exceeds the largest ring, 262144 bytes: the ring is 262144 bytes (points "
                           "1 and 4)") != std::string::npos);
  // send_loop false and true, each with 1 MiB and 4 MiB: the same 256 KiB ring.
  CHECK(c.out.find(kTiny + ": note: points 1 and 2 are the same run") != std::string::npos);
  CHECK(c.out.find(kTiny + ": note: points 4 and 5 are the same run") != std::string::npos);
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q"} + sweep);
  REQUIRE(r.status == 0);
  CHECK(r.err.find(kTiny + ": warning: hv_sock.rcvbuf=4194304: ") != std::string::npos);
  CHECK(r.out.find("effective.ring_bytes_host_to_guest") != std::string::npos);
}

TEST_CASE("cli: check says which kernel and machine a file gets when it names none", "[cli]")
{
  TempDir dir;
  // `check` of a file of this text: its output (it must pass).
  auto checked = [&](const std::string& file, const std::string& text) {
    write_file(dir.in_ws(file), text);
    const Run r = run_cli(dir, {"check", file});
    REQUIRE(r.status == 0);
    return r.out;
  };
  const std::string v = checked("v.yaml", "transport: virtio_vsock\nworkload: {total_bytes: 1MB}\n");
  CHECK_THAT(v, Catch::Contains("v.yaml: note: platform is not given: the points run on kvm-2024 (the newest "
                                "shipped profile of their transport); set it to pin a machine\n"));
  CHECK_THAT(v, Catch::Contains("v.yaml: note: virtio_vsock.preset is not given: the points model linux-6.12's "
                                "virtio-vsock"));
  // Both transports swept: each its own profile.
  CHECK_THAT(checked("both.yaml", "workload: {total_bytes: 1MB}\nsweep:\n  grid:\n    transport: [hv_sock, "
                                  "virtio_vsock]\n"),
             Catch::Contains("the points run on hyperv-2019 and kvm-2024"));
  // hv_sock: the knobs left to hv_sock.preset named; none when all are set.
  CHECK_THAT(checked("h.yaml", "transport: hv_sock\nplatform: hyperv-2019\nhv_sock: {send_loop: false}\n"
                               "workload: {total_bytes: 1MB}\n"),
             Catch::Contains("h.yaml: note: hv_sock.preset is not given: hv_sock.ring_sizing, "
                             "hv_sock.pending_send_size follow linux-5.3's hv_sock"));
  CHECK(checked("h3.yaml", "transport: hv_sock\nplatform: hyperv-2019\nhv_sock: {send_loop: false, "
                           "ring_sizing: fixed, pending_send_size: once}\nworkload: {total_bytes: 1MB}\n")
            .find("note:") == std::string::npos);
  // Named: no note.
  CHECK(checked("named.yaml", "transport: virtio_vsock\nplatform: kvm-2019\nvirtio_vsock: {preset: linux-4.19}\n"
                              "workload: {total_bytes: 1MB}\n")
            .find("note:") == std::string::npos);
}
