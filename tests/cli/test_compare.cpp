// vsocksim compare: metrics side by side, the change, the spread, and what
// differs between the two results. (The golden table: test_show.cpp.)
#include "cli_support.hpp"

#include <string>
#include <vector>

using namespace cli_test;

TEST_CASE("cli: compare prints each metric side by side with the change and whether it is beyond the spread",
          "[cli][compare]")
{
  TempDir dir;
  const std::string out_dir = dir.ws + "/out";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", out_dir}).status == 0);
  const Run two =
      run_cli(dir, {"compare", out_dir, "--points", "0,1", "--metrics", "throughput_MBps,writer_sys_seconds"});
  REQUIRE(two.status == 0);
  const std::vector<std::string> lines = lines_of(two.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "A: cli-tiny point 0 (hv_sock.send_loop=false)");
  CHECK(lines[1] == "B: cli-tiny point 1 (hv_sock.send_loop=true)");
  CHECK(lines[2].rfind("metric ", 0) == 0);
  CHECK(lines[3].rfind("throughput_MBps ", 0) == 0);
  CHECK(lines[4].rfind("writer_sys_seconds ", 0) == 0);
  // The send loop cuts the writer's sys time by more than its spread.
  CHECK(lines[4].find("%") != std::string::npos);
  CHECK(lines[4].substr(lines[4].size() - 3) == "yes");
  // A result against itself: no change, nothing beyond the spread.
  const Run same = run_cli(dir, {"compare", out_dir, out_dir + "/result.json"});
  REQUIRE(same.status == 0);
  CHECK(same.out.find("+0.00%") != std::string::npos);
  CHECK(same.out.find(" yes") == std::string::npos);
  CHECK(bad_input_message(run_cli(dir, {"compare", out_dir, "--points", "0,7"})) ==
        out_dir + "/result.json: error: --points: point 7 does not exist (allowed: 0 to 1)");
  CHECK(bad_input_message(run_cli(dir, {"compare", out_dir})) ==
        "compare: error: give two results, or one result and --points I,J");
  CHECK(bad_input_message(run_cli(dir, {"compare", out_dir, "--points", "x"})) ==
        "--points 'x': error: needs two point indices (allowed: I,J, e.g. 0,3)");
}

TEST_CASE("cli: compare says what differs between two results (parameters, code), or that nothing does",
          "[cli][compare]")
{
  TempDir dir;
  const std::string a = dir.ws + "/a", b = dir.ws + "/b";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", a}).status == 0);
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", b, "--set", "costs.host_dpc=3000", "--set",
                        "report.metrics=throughput_MBps"})
              .status == 0);
  // A result against itself: each pair says so.
  const Run same = run_cli(dir, {"compare", a, a + "/result.json", "--metrics", "throughput_MBps"});
  REQUIRE(same.status == 0);
  std::vector<std::string> lines = lines_of(same.out);
  REQUIRE(lines.size() == 11);
  CHECK(lines[2] == "same parameters, same code");
  CHECK(lines[3].rfind("metric ", 0) == 0);
  CHECK(lines[8] == "same parameters, same code");
  // A cost set on B: each pair names it (report.* changes no figure: not named).
  const Run cost = run_cli(dir, {"compare", a, b, "--metrics", "throughput_MBps"});
  REQUIRE(cost.status == 0);
  lines = lines_of(cost.out);
  REQUIRE(lines.size() == 13);
  CHECK(lines[0] == "A: " + a + "/result.json point 0 (hv_sock.send_loop=false)");
  CHECK(lines[2] == "what differs (A -> B):");
  CHECK(lines[3] == "  costs.host_dpc: 2000 -> 3000");
  CHECK(lines[4].rfind("metric ", 0) == 0);
  CHECK(lines[9] == "what differs (A -> B):");
  CHECK(lines[10] == "  costs.host_dpc: 2000 -> 3000");
  // The code that made them (the manifest), then the platform: its costs counted in one line, and the
  // sections only one side has (another transport's keys).
  ojson doc = parse_json(read_file(kData + "/result-small.json"));
  const std::string old_file = dir.in_ws("old.json"), new_file = dir.in_ws("new.json");
  for (ojson& p : doc["points"]) {
    p["params"]["platform"] = "hyperv-2019";
    p["params"]["costs.host_dpc"] = 2000;
    p["params"]["costs.clock_ghz"] = 2.5;
  }
  write_file(old_file, doc.dump(2));
  doc["manifest"]["version"] = "0.2.0";
  doc["manifest"]["git_commit"] = "fedcba9876543210";
  for (ojson& p : doc["points"]) {
    p["params"]["platform"] = "kvm-2019";
    p["params"]["transport"] = "virtio_vsock";
    p["params"]["costs.host_dpc"] = 1000;
    p["params"].erase("hv_sock.sndbuf");
    p["params"]["virtio_vsock.queue_size"] = 128;
    p["params"]["virtio_vsock.event_idx"] = true;
    p["params"]["report.metrics"] = "throughput_MBps";
  }
  write_file(new_file, doc.dump(2));
  const Run code = run_cli(dir, {"compare", old_file, new_file, "--metrics", "throughput_MBps"});
  REQUIRE(code.status == 0);
  const std::string head = "what differs (A -> B):\n"
                           "  version: 0.1.0 -> 0.2.0\n"
                           "  git_commit: 0123456789abcdef -> fedcba9876543210\n"
                           "  platform: hyperv-2019 -> kvm-2019\n"
                           "  transport: hv_sock -> virtio_vsock\n"
                           "  costs.*: 1 value(s) differ (the platforms' profiles: `vsocksim describe platforms`)\n"
                           "  hv_sock.*: 1 key(s) -> (absent)\n"
                           "  virtio_vsock.*: (absent) -> 2 key(s)\n"
                           "metric ";
  CHECK(code.out.rfind("A: " + old_file + " point 0 (hv_sock.sndbuf=default)\nB: " + new_file +
                           " point 0 (hv_sock.sndbuf=default)\n" + head,
                       0) == 0);
  CHECK(code.out.find("B: " + new_file + " point 1 (hv_sock.sndbuf=64KiB)\n" + head) != std::string::npos);
  // Two points of one result: as before, their swept values say what differs.
  const Run points = run_cli(dir, {"compare", a, "--points", "0,1", "--metrics", "throughput_MBps"});
  CHECK(lines_of(points.out).size() == 4);
}
