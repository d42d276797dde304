// Bad input: exit 2, one precise line on stderr, nothing on stdout, nothing
// created or changed under --output; the catalogue of tests/data/bad.
// (validate's bad input: test_validate.cpp; plot's: test_plot.cpp; --trace's:
// test_trace.cpp; --output's: test_output_dir.cpp.)
#include "cli_support.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

// Runs `run ARGS --output DIR` twice: DIR new (must not be created), then DIR
// existing with a file in it (must stay exactly as it was). Checks the
// bad-input contract for both and returns the message.
std::string bad_run_leaves_output_alone(const std::vector<std::string>& run_args)
{
  TempDir dir;
  const std::string fresh = dir.in_ws("fresh-out");
  const std::string existing = dir.in_ws("old-out");
  fs::create_directory(existing);
  write_file(existing + "/keep.txt", "results of an earlier run\n");
  const auto before = snapshot(dir.ws);

  const Run a = run_cli(dir, run_args + std::vector<std::string>{"--output", fresh});
  const std::string message = bad_input_message(a);
  CHECK_FALSE(fs::exists(fresh));
  CHECK(snapshot(dir.ws) == before);

  const Run b = run_cli(dir, run_args + std::vector<std::string>{"--output", existing});
  CHECK(bad_input_message(b) == message);
  CHECK(snapshot(dir.ws) == before);
  CHECK(read_file(existing + "/keep.txt") == "results of an earlier run\n");
  return message;
}

} // namespace

TEST_CASE("cli: bad experiment files exit 2 naming FILE:LINE:COL, the key path and what is allowed", "[cli]")
{
  struct Case {
    const char* what;
    std::string yaml;
    std::string needle; // where the error must point: this text's n-th occurrence
    int occurrence;
    std::string key;                    // the key path in the message ("" = none)
    std::vector<std::string> fragments; // also in the message
  };
  const std::vector<Case> cases = {
      // yaml-cpp gives up at the ':' of the next mapping line when a flow map
      // is not closed.
      {"YAML syntax error", "workload: {message_size: 4KiB\nseed: 3\n", ": 3", 0, "", {"invalid YAML"}},
      {"unknown nested key",
       "workload:\n  message_size: 4KiB\n  msg_size: 4KiB\n",
       "msg_size",
       0,
       "workload.msg_size",
       {"unknown key (allowed: app, connections, message_size, outstanding, pattern, request_size, response_size, "
        "socket_type, start_interval, think_time, think_time_distribution, total_bytes, transactions, zerocopy)"}},
      {"unknown top-level key",
       "seed: 3\nseeed: 4\n",
       "seeed",
       0,
       "seeed",
       {"unknown key, did you mean seed? (allowed: ", "iterations", "seed", "workload"}},
      {"duplicate key",
       "seed: 1\niterations: 3\nseed: 2\n",
       "seed",
       1,
       "seed",
       {"duplicate key (first given at line 1, column 1)"}},
      {"duplicate nested key",
       "workload:\n  connections: 1\n  connections: 2\n",
       "connections",
       1,
       "workload.connections",
       {"duplicate key (first given at line 2, column 3)"}},
      {"wrong type: text for an integer",
       "iterations: many\n",
       "many",
       0,
       "iterations",
       {"expected an integer, got 'many'", "(allowed: 1 .. 1000"}},
      {"wrong type: scalar for a group", "workload: 5\n", "5", 0, "workload", {"expected a map of keys, got '5'"}},
      {"wrong type: yes for a boolean",
       "hv_sock:\n  send_loop: yes\n",
       "yes",
       0,
       "hv_sock.send_loop",
       {"expected true or false, got 'yes' (allowed: true, false)"}},
      {"unknown unit",
       "workload:\n  message_size: 12 KB\n",
       "12 KB",
       0,
       "workload.message_size",
       {"unknown unit 'KB' in '12 KB' (allowed: B, KiB, MiB, GiB, kB, MB, GB)"}},
      {"out-of-range value",
       "workload:\n  connections: 65\n",
       "65",
       0,
       "workload.connections",
       {"65 is out of range (allowed: 1 .. 64"}},
      {"out-of-range sweep element",
       "sweep:\n  grid:\n    workload.message_size: [4KiB, 2GiB]\n",
       "2GiB",
       0,
       "workload.message_size",
       {"2GiB is out of range (allowed: 1B .. 1GiB)"}},
      {"choice not allowed",
       "direction: sideways\n",
       "sideways",
       0,
       "direction",
       {"'sideways' is not one of the choices (allowed: guest_to_host, host_to_guest, bidirectional)"}},
      {"virtio knobs no kernel has together",
       "transport: virtio_vsock\nplatform: kvm-2019\nvirtio_vsock:\n  packet_type: virtio_vsock_pkt\n  "
       "tx_fast_path: true\n",
       "true",
       0,
       "virtio_vsock.tx_fast_path",
       {"needs virtio_vsock.packet_type sk_buff", "(allowed: false with packet_type virtio_vsock_pkt)"}},
      {"platform not allowed",
       "platform: hyperv-2025\n",
       "hyperv-2025",
       0,
       "platform",
       {"unknown platform 'hyperv-2025' (allowed: ", "hyperv-2019", "or a profile file PATH.yaml"}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.what)
    {
      TempDir files;
      const std::string file = files.in_ws("bad.yaml");
      write_file(file, c.yaml);
      std::string prefix = file + ":" + where(c.yaml, c.needle, c.occurrence) + ": error: ";
      if (!c.key.empty())
        prefix += c.key + ": ";
      INFO("input:\n" << c.yaml);
      INFO("expected prefix: " << prefix);

      TempDir dir;
      const Run checked = run_cli(dir, {"check", file});
      const std::string message = bad_input_message(checked);
      CHECK(starts_with(message, prefix));
      for (const std::string& f : c.fragments)
        CHECK_THAT(message, Catch::Contains(f));

      // `run` refuses it with the same message and leaves --output alone.
      CHECK(bad_run_leaves_output_alone(std::vector<std::string>{"run", file} + kTinySets) == message);
    }
  }
}

TEST_CASE("cli: bad --set entries exit 2 naming the entry, the key and what is allowed", "[cli]")
{
  struct Case {
    const char* what;
    std::string entry;
    std::string key; // key path after "error: " ("" = none)
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"missing '='", "seed", "seed", {"missing '='", "(allowed: KEY=VALUE"}},
      {"missing key", "=3", "", {"missing key before '='"}},
      {"unknown key",
       "hv_sock.sndbufz=32KiB",
       "hv_sock.sndbufz",
       {"unknown key, did you mean hv_sock.sndbuf? (allowed: ", "sndbuf", "rcvbuf"}},
      {"bad integer", "seed=x", "seed", {"expected an integer, got 'x'", "(allowed: 0 .. "}},
      {"unknown unit",
       "hv_sock.sndbuf=32KB",
       "hv_sock.sndbuf",
       {"unknown unit 'KB' in '32KB' (allowed: B, KiB, MiB, GiB, kB, MB, GB)"}},
      {"out of range", "iterations=0", "iterations", {"0 is out of range (allowed: 1 .. 1000"}},
      {"choice not allowed", "direction=up", "direction", {"'up' is not one of the choices"}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.what)
    {
      std::string prefix = "--set '" + c.entry + "': error: ";
      if (!c.key.empty())
        prefix += c.key + ": ";
      INFO("expected prefix: " << prefix);
      TempDir dir;
      const std::string message = bad_input_message(run_cli(dir, {"check", kTiny, "--set", c.entry}));
      CHECK(starts_with(message, prefix));
      for (const std::string& f : c.fragments)
        CHECK_THAT(message, Catch::Contains(f));
      CHECK(bad_run_leaves_output_alone({"run", kTiny, "--set", c.entry}) == message);
    }
  }
}

TEST_CASE("cli: bad run options exit 2 and leave --output alone", "[cli]")
{
  SECTION("--format xml")
  {
    const std::string m = bad_run_leaves_output_alone({"run", kTiny, "--format", "xml"});
    CHECK_THAT(m, Catch::Contains("--format") && Catch::Contains("xml") && Catch::Contains("table") &&
                      Catch::Contains("json") && Catch::Contains("csv"));
  }
  SECTION("--jobs 0")
  {
    const std::string m = bad_run_leaves_output_alone({"run", kTiny, "--jobs", "0"});
    CHECK_THAT(m, Catch::Contains("--jobs") && Catch::Contains("0") && Catch::Contains("1"));
  }
  SECTION("--jobs not a number")
  {
    const std::string m = bad_run_leaves_output_alone({"run", kTiny, "--jobs", "two"});
    CHECK_THAT(m, Catch::Contains("--jobs") && Catch::Contains("two"));
  }
  SECTION("missing experiment file")
  {
    TempDir files;
    const std::string missing = files.in_ws("nosuch.yaml");
    const std::string m = bad_run_leaves_output_alone({"run", missing});
    CHECK(m == missing + ": error: cannot read the file: No such file or directory");
  }
  SECTION("experiment file is a directory")
  {
    TempDir files;
    const std::string m = bad_run_leaves_output_alone({"run", files.ws});
    CHECK(m == files.ws + ": error: cannot read the file: it is a directory");
  }
  SECTION("measurements file with an unknown column")
  {
    const std::string csv = kData + "/unknown-column.csv";
    const std::string text = read_file(csv);
    const std::string m =
        bad_run_leaves_output_alone(std::vector<std::string>{"run", kTiny, "-q"} + kTinySets +
                                    std::vector<std::string>{"--set", "validation.measurements=unknown-column.csv"});
    // The path is the experiment file's directory joined with the setting.
    const std::string shown = (fs::path(kTiny).parent_path() / "unknown-column.csv").lexically_normal().string();
    // The header cell (the comment above it names the key too, followed by ')').
    CHECK_THAT(m, Catch::StartsWith(shown + ":" + where(text, "hv_sock.sndbufz,") +
                                    ": error: unknown column 'hv_sock.sndbufz'"));
    CHECK_THAT(m, Catch::Contains("(allowed: experiment keys, metric, min, max, mean, median, source, unit)"));
  }
  SECTION("missing measurements file")
  {
    const std::string m =
        bad_run_leaves_output_alone(std::vector<std::string>{"run", kTiny, "-q"} + kTinySets +
                                    std::vector<std::string>{"--set", "validation.measurements=nosuch.csv"});
    CHECK_THAT(m, Catch::StartsWith(kData + "/nosuch.csv: error: "));
  }
  SECTION("unknown metric in report.metrics")
  {
    const std::string m =
        bad_run_leaves_output_alone(std::vector<std::string>{"run", kTiny, "-q"} + kTinySets +
                                    std::vector<std::string>{"--set", "report.metrics=throughput_MBps,speed"});
    CHECK_THAT(m, Catch::Contains("report.metrics: unknown metric 'speed' (allowed: ") &&
                      Catch::Contains("throughput_MBps"));
  }
}

TEST_CASE("cli: bad commands exit 2 with one message and nothing on stdout", "[cli]")
{
  TempDir dir;
  SECTION("no subcommand")
  {
    const std::string m = bad_input_message(run_cli(dir, {}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: ") && Catch::Contains("subcommand"));
  }
  SECTION("unknown subcommand")
  {
    const std::string m = bad_input_message(run_cli(dir, {"frobnicate", kTiny}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: "));
  }
  SECTION("unknown option")
  {
    const std::string m = bad_input_message(run_cli(dir, {"run", kTiny, "--fromat", "json"}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: ") && Catch::Contains("--fromat"));
  }
  SECTION("run without a file")
  {
    const std::string m = bad_input_message(run_cli(dir, {"run"}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: ") && Catch::Contains("file"));
  }
  SECTION("describe nosuchtopic")
  {
    const std::string m = bad_input_message(run_cli(dir, {"describe", "nosuchtopic"}));
    CHECK_THAT(m, Catch::StartsWith("describe 'nosuchtopic': error: unknown topic (allowed: ") &&
                      Catch::Contains("hv_sock") && Catch::Contains("platforms") && Catch::Contains("workload"));
  }
  SECTION("check of a missing file")
  {
    const std::string missing = dir.in_ws("nosuch.yaml");
    const std::string m = bad_input_message(run_cli(dir, {"check", missing}));
    CHECK(m == missing + ": error: cannot read the file: No such file or directory");
  }
  CHECK(snapshot(dir.ws).empty());
}

TEST_CASE("cli: an unknown subcommand is named in the message", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"frobnicate"});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("frobnicate"));
}

TEST_CASE("cli: report.metrics errors point at FILE:LINE:COL or the --set entry", "[cli]")
{
  TempDir dir;
  const std::string file = dir.in_ws("metrics.yaml");
  const std::string yaml = "iterations: 2\nworkload:\n  total_bytes: 200kB\nreport:\n  metrics: speed\n";
  write_file(file, yaml);
  const Run in_file = run_cli(dir, {"run", file, "-q"});
  CHECK(in_file.status == 2);
  CHECK_THAT(in_file.err, Catch::StartsWith(file + ":" + where(yaml, "speed") + ": error: report.metrics: "));
  const Run in_set =
      run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--set", "report.metrics=speed"} + kTinySets);
  CHECK(in_set.status == 2);
  CHECK_THAT(in_set.err, Catch::StartsWith("--set 'report.metrics=speed': error: report.metrics: "));
}

TEST_CASE("cli: every file of the bad-input catalogue exits 2 with exactly its expected line", "[cli][catalogue]")
{
  TempDir dir;
  const std::string bad = std::string(VSIM_SOURCE_DIR) + "/tests/data/bad";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(bad))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 30);
  for (const std::string& f : files) {
    INFO(f);
    const std::string text = read_file(f);
    const std::string head = text.substr(0, text.find('\n'));
    REQUIRE(starts_with(head, "# expect: "));
    const Run r = run_cli(dir, {"check", f});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == f + ":" + head.substr(10) + "\n");
  }
}
