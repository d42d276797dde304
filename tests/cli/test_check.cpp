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
