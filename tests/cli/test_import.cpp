// vsocksim import: benchmark outputs (tests/data/import) to a measurements
// CSV on stdout or --output, the rows accepted by `vsocksim validate` on a
// matching experiment, --append, and bad input (exit 2, one message naming
// the file, nothing written).
#include "cli_support.hpp"

#include <string>
#include <vector>

using namespace cli_test;

namespace {

const std::string kImport = kSource + "/tests/data/import";

std::vector<std::string> iperf3_files(const std::string& pattern_dir, const std::vector<std::string>& names)
{
  std::vector<std::string> out;
  for (const std::string& n : names)
    out.push_back(kImport + "/" + pattern_dir + "/" + n);
  return out;
}

const std::vector<std::string> kG2h =
    iperf3_files("iperf3", {"g2h-4k-1.json", "g2h-4k-2.json", "g2h-4k-3.json", "g2h-64k-1.json", "g2h-64k-2.json",
                            "g2h-64k-3.json", "g2h-512k-1.json", "g2h-512k-2.json", "g2h-512k-3.json"});
const std::vector<std::string> kH2g = iperf3_files("iperf3", {"h2g-4k-1.json", "h2g-4k-2.json", "h2g-64k-1.json",
                                                              "h2g-64k-2.json", "h2g-512k-1.json", "h2g-512k-2.json"});

// A study of the recorded machine: both directions, the three sizes, tiny transfers.
const std::string kStudy = R"(name: my-host-check
platform: kvm-2019
transport: virtio_vsock
seed: 1
iterations: 2
workload:
  app: iperf3
  total_bytes: 1MiB
virtio_vsock:
  preset: linux-5.4
validation:
  measurements: my-host.csv
sweep:
  grid:
    direction: [guest_to_host, host_to_guest]
    workload.message_size: [4096, 65536, 524288]
)";

std::vector<std::string> data_lines(const std::string& csv)
{
  std::vector<std::string> out;
  for (const std::string& l : lines_of(csv))
    if (!l.empty() && l[0] != '#')
      out.push_back(l);
  return out;
}

} // namespace

TEST_CASE("cli: import iperf3 prints a header and one row per size and metric, the files named in comments",
          "[cli][import]")
{
  TempDir dir;
  const Run r = run_cli(dir, std::vector<std::string>{"import", "iperf3"} + kG2h);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const std::vector<std::string> rows = data_lines(r.out);
  REQUIRE(rows.size() == 1 + 3 * 4);
  CHECK(rows[0] == "direction,workload.message_size,workload.connections,metric,min,max,mean,median,unit,source");
  CHECK(starts_with(rows[1], "guest_to_host,4096,1,throughput_Gbps,"));
  CHECK(starts_with(rows[5], "guest_to_host,65536,1,throughput_Gbps,"));
  CHECK(rows[5].find(",Gbit/s,iperf3") != std::string::npos);
  CHECK(r.out.find("g2h-512k-3.json") != std::string::npos);
  CHECK(names_in(dir.ws).empty());
}

TEST_CASE("cli: import --output writes the file whole, and validate accepts its rows on a matching experiment",
          "[cli][import]")
{
  TempDir dir;
  write_file(dir.in_ws("my-host.yaml"), kStudy);
  const Run g = run_cli(dir, std::vector<std::string>{"import", "iperf3"} + kG2h +
                                 std::vector<std::string>{"--output", dir.in_ws("my-host.csv")});
  INFO("stderr: " << g.err);
  REQUIRE(g.status == 0);
  CHECK(g.out.empty());
  CHECK(g.err == "wrote 12 row(s) to " + dir.in_ws("my-host.csv") + "\n");
  const Run h = run_cli(dir, std::vector<std::string>{"import", "iperf3"} + kH2g +
                                 std::vector<std::string>{"--output", dir.in_ws("my-host.csv"), "--append"});
  REQUIRE(h.status == 0);
  CHECK(data_lines(read_file(dir.in_ws("my-host.csv"))).size() == 1 + 24);

  const Run v = run_cli(dir, {"validate", dir.in_ws("my-host.yaml"), "-q", "--jobs", "2"});
  INFO("validate stderr: " << v.err << "\nstdout:\n" << v.out);
  REQUIRE(v.status == 0);
  CHECK(v.out.find("my-host-check: 24 row(s), mean absolute error") != std::string::npos);
  CHECK(v.out.find("host_to_guest   524288") != std::string::npos);
}

TEST_CASE("cli: import vsock_perf takes the direction from the sender's CID and --key for a receiver alone",
          "[cli][import]")
{
  TempDir dir;
  const std::string vp = kImport + "/vsock_perf/";
  const Run r = run_cli(dir, {"import", "vsock_perf", vp + "g2h-64k-1.txt", vp + "g2h-64k-2.txt", vp + "g2h-4k-1.txt",
                              "--key", "virtio_vsock.preset=linux-5.4", "--source", "my-host"});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const std::vector<std::string> rows = data_lines(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] ==
        "direction,virtio_vsock.preset,workload.message_size,workload.connections,metric,min,max,mean,median,unit,"
        "source");
  CHECK(rows[1] == "guest_to_host,linux-5.4,4096,1,throughput_Gbps,5.30128,5.30128,5.30128,5.30128,Gbit/s,my-host");
  CHECK(rows[2] == "guest_to_host,linux-5.4,65536,1,throughput_Gbps,27.4029,27.9033,27.6531,27.6531,Gbit/s,my-host");

  // A receiver's output alone says neither the direction nor the message size.
  const Run rx = run_cli(dir, {"import", "vsock_perf", vp + "g2h-64k-rx.txt", "--direction", "guest_to_host", "--key",
                               "workload.message_size=64KiB"});
  INFO("stderr: " << rx.err);
  REQUIRE(rx.status == 0);
  CHECK(data_lines(rx.out).at(1) == "guest_to_host,65536,1,throughput_Gbps,27.6118,27.6118,27.6118,27.6118,Gbit/s,"
                                    "vsock_perf");
}

TEST_CASE("cli: import refuses bad input with exit 2, one message naming the file, and writes nothing", "[cli][import]")
{
  TempDir dir;
  const std::string out = dir.in_ws("m.csv");
  const std::string bad = kImport + "/bad/";
  const std::string vp = kImport + "/vsock_perf/";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"iperf3", bad + "iperf3-text.json"}, bad + "iperf3-text.json:1:1: error: not JSON"},
      {{"iperf3", kG2h[0], bad + "iperf3-error.json"}, bad + "iperf3-error.json: error: \"error\": iperf3 reported"},
      {{"vsock_perf", bad + "vsock_perf-no-perf.txt"}, bad + "vsock_perf-no-perf.txt:1:1: error: the receiver output"},
      {{"vsock_perf", kG2h[0]}, kG2h[0] + ":1:1: error: not a vsock_perf output"},
      {{"iperf3", kG2h[0], kH2g[0]}, kH2g[0] + ": error: direction: mixed directions"},
      {{"vsock_perf", vp + "g2h-64k-1.txt", vp + "h2g-64k-1.txt"}, "mixed directions"},
      {{"iperf3", kG2h[0], "--direction", "host_to_guest"}, "direction: the file says guest_to_host"},
      {{"iperf3", kG2h[0], "--key", "virtio_vsock.prest=linux-5.4"},
       "--key 'virtio_vsock.prest=linux-5.4': error: virtio_vsock.prest: not an experiment key"},
      {{"iperf3", kG2h[0], "--key", "virtio_vsock.preset"}, "--key 'virtio_vsock.preset': error: expected KEY=VALUE"},
      {{"iperf3", kG2h[0], "--metrics", "throughput_Gbps,latency"}, "--metrics: error: 'latency'"},
      {{"iperf3", kImport + "/iperf3/missing.json"}, "missing.json: error: cannot read the file"},
      {{"iperf3", kG2h[0], "--append"}, "--append: error: needs --output"},
      {{"iperf", kG2h[0]}, "tool: iperf not in {iperf3,vsock_perf}"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = std::vector<std::string>{"import"} + c.args;
    if (c.message.find("--append") == std::string::npos)
      args = args + std::vector<std::string>{"--output", out};
    const Run r = run_cli(dir, args);
    INFO(command_text(args) << "\nstderr: " << r.err);
    const std::string msg = bad_input_message(r);
    CHECK(msg.find(c.message) != std::string::npos);
    CHECK(!fs::exists(out));
  }
}

TEST_CASE("cli: import --append keeps the file as it was when the new rows do not fit it", "[cli][import]")
{
  TempDir dir;
  const std::string out = dir.in_ws("m.csv");
  REQUIRE(run_cli(dir, {"import", "iperf3", kG2h[0], "--output", out}).status == 0);
  const std::string before = read_file(out);
  const Run again = run_cli(dir, {"import", "iperf3", kG2h[1], "--output", out, "--append"});
  CHECK(bad_input_message(again).find("already has a row for guest_to_host,4096,1,throughput_Gbps") !=
        std::string::npos);
  const Run other = run_cli(
      dir, {"import", "iperf3", kH2g[0], "--output", out, "--append", "--key", "virtio_vsock.preset=linux-5.4"});
  CHECK(bad_input_message(other).find(out + ":3:1: error: --append: the header is") != std::string::npos);
  CHECK(read_file(out) == before);
}
