// `vsocksim import` as a library (app/validation/import.hpp): iperf3 --json
// and vsock_perf outputs (tests/data/import) read into runs, runs into rows
// (direction, CPU roles, statistics over files, units), the CSV it writes
// read back by load_measurements, and bad input. The command line is tested
// in tests/cli/test_import.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/validation/import.hpp"
#include "app/validation/measurements.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

const std::string kDir = std::string(VSIM_SOURCE_DIR) + "/tests/data/import";

std::string slurp(const std::string& path)
{
  std::ifstream f(path);
  REQUIRE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

ImportedRun iperf3(const std::string& name)
{
  return parse_iperf3(name, slurp(kDir + "/iperf3/" + name));
}

ImportedRun vsock_perf(const std::string& name)
{
  return parse_vsock_perf(name, slurp(kDir + "/vsock_perf/" + name));
}

nlohmann::json doc(const std::string& name)
{
  return nlohmann::json::parse(slurp(kDir + "/iperf3/" + name));
}

// The InputError message of `f`, failing the test when there is none.
template <class F> std::string error_of(F&& f)
{
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError");
  return "";
}

const ImportRow& row_of(const ImportTable& t, const std::string& metric, std::int64_t size = 65536)
{
  for (const ImportRow& r : t.rows)
    if (r.metric == metric &&
        std::find(r.keys.begin(), r.keys.end(),
                  std::pair<std::string, std::string>("workload.message_size", std::to_string(size))) != r.keys.end())
      return r;
  FAIL("no row for " << metric << " at " << size);
  return t.rows.front();
}

ImportOptions options(ImportTool tool = ImportTool::Iperf3)
{
  ImportOptions o;
  o.tool = tool;
  return o;
}

// A copy of a recorded iperf3 output with one edit to its JSON.
std::string edited(const std::string& name, const std::function<void(nlohmann::json&)>& edit)
{
  nlohmann::json j = doc(name);
  edit(j);
  return j.dump(1, '\t');
}

} // namespace

TEST_CASE("import: an iperf3 client in the guest without -R is guest to host: its own CPU is the guest's", "[import]")
{
  const ImportedRun r = iperf3("g2h-64k-1.json");
  const nlohmann::json j = doc("g2h-64k-1.json");
  CHECK(r.direction == "guest_to_host");
  CHECK(r.evidence.find("start.connecting_to.host 2") != std::string::npos);
  CHECK(r.message_size == 65536);
  CHECK(r.connections == 1);
  CHECK(r.reverse == 0);
  CHECK(*r.received_bps == j["end"]["sum_received"]["bits_per_second"].get<double>());
  CHECK(*r.sent_bps == j["end"]["sum_sent"]["bits_per_second"].get<double>());
  CHECK(*r.received_bps != *r.sent_bps);
  CHECK(*r.sender_cpu == j["end"]["cpu_utilization_percent"]["host_total"].get<double>());
  CHECK(*r.receiver_cpu == j["end"]["cpu_utilization_percent"]["remote_total"].get<double>());
}

TEST_CASE("import: -R makes the server the sender: a host client and a host server are told apart by the peer's CID",
          "[import]")
{
  SECTION("guest client with -R: host to guest, the sender's CPU is remote_total")
  {
    const ImportedRun r = iperf3("h2g-64k-1.json");
    CHECK(r.direction == "host_to_guest");
    CHECK(r.reverse == 1);
    CHECK(*r.sender_cpu == doc("h2g-64k-1.json")["end"]["cpu_utilization_percent"]["remote_total"].get<double>());
  }
  SECTION("host client (connecting to CID 3) without -R: host to guest, the sender's CPU is host_total")
  {
    const ImportedRun r = iperf3("h2g-64k-2.json");
    CHECK(r.direction == "host_to_guest");
    CHECK(r.reverse == 0);
    CHECK(*r.sender_cpu == doc("h2g-64k-2.json")["end"]["cpu_utilization_percent"]["host_total"].get<double>());
  }
  SECTION("the host server's own output (accepted_connection from CID 3): guest to host, it is the receiver")
  {
    const ImportedRun r = iperf3("g2h-64k-server.json");
    CHECK(r.direction == "guest_to_host");
    CHECK(*r.receiver_cpu == doc("g2h-64k-server.json")["end"]["cpu_utilization_percent"]["host_total"].get<double>());
  }
  SECTION("-P 2: two connections")
  {
    CHECK(iperf3("g2h-64k-P2.json").connections == 2);
  }
}

TEST_CASE("import: runs of one size are iterations: min, max, mean and median over the files", "[import]")
{
  std::vector<ImportedRun> runs;
  std::vector<double> gbps;
  for (const std::string f : {"g2h-64k-1.json", "g2h-64k-2.json", "g2h-64k-3.json", "g2h-4k-1.json"}) {
    runs.push_back(iperf3(f));
    if (f.find("64k") != std::string::npos)
      gbps.push_back(doc(f)["end"]["sum_received"]["bits_per_second"].get<double>() / 1e9);
  }
  std::sort(gbps.begin(), gbps.end());
  const ImportTable t = import_rows(runs, options(), registry());
  REQUIRE(t.rows.size() == 8); // two sizes x four default metrics
  const ImportRow& r = row_of(t, "throughput_Gbps");
  CHECK(r.files.size() == 3);
  CHECK(r.min == Approx(gbps[0]).epsilon(1e-12));
  CHECK(r.max == Approx(gbps[2]).epsilon(1e-12));
  CHECK(r.median == Approx(gbps[1]).epsilon(1e-12));
  CHECK(r.mean == Approx((gbps[0] + gbps[1] + gbps[2]) / 3).epsilon(1e-12));
  CHECK(r.unit == "Gbit/s");
  CHECK(row_of(t, "throughput_Gbps", 4096).files.size() == 1);
  // Sizes in numeric order, 4096 before 65536 though given after.
  CHECK(t.rows.front().keys[1].second == "4096");
}

TEST_CASE("import: bit/s become the unit the metric declares (Gbit/s = 10^9 bit/s, MB/s = 10^6 bytes/s)", "[import]")
{
  CHECK(throughput_in(8e9, "Gbit/s") == 8.0);
  CHECK(throughput_in(8e9, "MB/s") == 1000.0);
  CHECK_THROWS_AS(throughput_in(8e9, "%"), std::logic_error);
  ImportOptions o = options();
  o.metrics = {"throughput_MBps"};
  o.sent = true;
  const ImportedRun run = iperf3("g2h-64k-1.json");
  const ImportRow r = import_rows({run}, o, registry()).rows.at(0);
  CHECK(r.unit == "MB/s");
  CHECK(r.mean == Approx(*run.sent_bps / 8e6).epsilon(1e-12));
}

TEST_CASE("import: CPU figures go to the guest or the host by the direction: efficiency is Mbit/s per %CPU of both",
          "[import]")
{
  const ImportedRun g2h = iperf3("g2h-64k-1.json"), h2g = iperf3("h2g-64k-1.json");
  const ImportTable tg = import_rows({g2h}, options(), registry());
  CHECK(row_of(tg, "app_cpu_percent_guest").mean == *g2h.sender_cpu);
  CHECK(row_of(tg, "app_cpu_percent_host").mean == *g2h.receiver_cpu);
  CHECK(row_of(tg, "efficiency").mean ==
        Approx(*g2h.received_bps / 1e6 / (*g2h.sender_cpu + *g2h.receiver_cpu)).epsilon(1e-12));
  const ImportTable th = import_rows({h2g}, options(), registry());
  CHECK(row_of(th, "app_cpu_percent_guest").mean == *h2g.receiver_cpu);
  CHECK(row_of(th, "app_cpu_percent_host").mean == *h2g.sender_cpu);
  CHECK(th.rows[0].keys[0] == std::pair<std::string, std::string>("direction", "host_to_guest"));
}

TEST_CASE("import: bad iperf3 outputs name the file, the place and what was expected", "[import]")
{
  CHECK_THAT(error_of([] { parse_iperf3("t.json", slurp(kDir + "/bad/iperf3-text.json")); }),
             Catch::StartsWith("t.json:1:1: error: not JSON"));
  CHECK_THAT(error_of([] { parse_iperf3("e.json", slurp(kDir + "/bad/iperf3-error.json")); }),
             Catch::Contains("e.json: error: \"error\": iperf3 reported \"unable to connect to server") &&
                 Catch::Contains("the run failed"));
  CHECK_THAT(error_of([] { parse_iperf3("a.json", "[1, 2]"); }), Catch::Contains("not an iperf3 result"));
  CHECK_THAT(error_of([] { parse_iperf3("b.json", "{\"start\": {}}"); }), Catch::Contains("not an iperf3 result"));
  const auto bad = [](const std::function<void(nlohmann::json&)>& edit) {
    return error_of([&] { parse_iperf3("x.json", edited("g2h-64k-1.json", edit)); });
  };
  CHECK_THAT(bad([](nlohmann::json& j) { j["end"].erase("sum_received"); }),
             Catch::Contains("x.json: error: end.sum_received.bits_per_second: missing (expected a number"));
  CHECK_THAT(bad([](nlohmann::json& j) { j["start"]["test_start"]["blksize"] = "64K"; }),
             Catch::Contains("start.test_start.blksize: expected an integer >= 1, got \"64K\""));
  CHECK_THAT(bad([](nlohmann::json& j) { j["start"]["test_start"]["protocol"] = "UDP"; }),
             Catch::Contains("\"UDP\" (allowed: VSOCK, TCP"));
  CHECK_THAT(bad([](nlohmann::json& j) { j["start"]["test_start"]["bidir"] = 1; }), Catch::Contains("--bidir"));
  CHECK_THAT(bad([](nlohmann::json& j) { j["start"]["connecting_to"]["host"] = "1"; }),
             Catch::Contains("CID 1 is the local loopback"));
  CHECK_THAT(bad([](nlohmann::json& j) { j["end"]["sum_received"]["bits_per_second"] = 0; }),
             Catch::Contains("end.sum_received.bits_per_second: 0 (expected a rate above 0"));
}

TEST_CASE("import: each run counts once: a file given twice, or both sides' outputs of one test, are errors",
          "[import]")
{
  const ImportedRun a = iperf3("g2h-64k-1.json");
  CHECK_THAT(error_of([&] {
               import_rows({a, iperf3("g2h-64k-2.json"), a}, options(), registry());
             }),
             Catch::StartsWith("g2h-64k-1.json: error: given twice"));
  // The server's output of the same test carries the client's cookie.
  const ImportedRun server = parse_iperf3("server.json", edited("g2h-64k-server.json", [&](nlohmann::json& j) {
                                            j["start"]["cookie"] = doc("g2h-64k-1.json")["start"]["cookie"];
                                          }));
  CHECK_THAT(error_of([&] {
               import_rows({a, server}, options(), registry());
             }),
             Catch::StartsWith("server.json: error: start.cookie: the same test as g2h-64k-1.json"));
  CHECK(import_rows({a, iperf3("g2h-64k-server.json")}, options(), registry()).rows.at(0).files.size() == 2);
}

TEST_CASE("import: a run that does not say its direction takes --direction, and -R then may not differ", "[import]")
{
  // Over TCP (e.g. a vsock proxy) the peer is an address, not a CID.
  const auto tcp = [](const std::string& name) {
    return parse_iperf3(name, edited(name, [](nlohmann::json& j) {
                          j["start"]["test_start"]["protocol"] = "TCP";
                          j["start"]["connecting_to"]["host"] = "192.168.122.1";
                        }));
  };
  const ImportedRun a = tcp("g2h-64k-1.json"), b = tcp("h2g-64k-1.json");
  CHECK(a.direction.empty());
  CHECK_THAT(error_of([&] { import_rows({a}, options(), registry()); }), Catch::Contains("give --direction"));
  ImportOptions o = options();
  o.direction = "guest_to_host";
  CHECK(import_rows({a}, o, registry()).rows.at(0).keys[0].second == "guest_to_host");
  CHECK_THAT(error_of([&] {
               import_rows({a, b}, o, registry());
             }),
             Catch::Contains("mixed directions: start.test_start.reverse is 1 here, 0 in g2h-64k-1.json"));
}

TEST_CASE("import: mixed directions, and a --direction the output contradicts, are errors", "[import]")
{
  CHECK_THAT(error_of([] {
               import_rows({iperf3("g2h-64k-1.json"), iperf3("h2g-64k-2.json")}, options(), registry());
             }),
             Catch::StartsWith("h2g-64k-2.json: error: direction: mixed directions: host_to_guest here"));
  ImportOptions o = options();
  o.direction = "host_to_guest";
  CHECK_THAT(error_of([&] { import_rows({iperf3("g2h-64k-1.json")}, o, registry()); }),
             Catch::Contains("direction: the file says guest_to_host") &&
                 Catch::Contains("--direction host_to_guest says host_to_guest"));
}

TEST_CASE("import: --key entries are experiment keys with valid values, printed as a point prints them", "[import]")
{
  const ImportedRun run = iperf3("g2h-64k-1.json");
  const auto with_key = [&](const std::string& k, const std::string& v) {
    ImportOptions o = options();
    o.keys = {{k, v}};
    return import_rows({run}, o, registry());
  };
  const ImportTable t = with_key("virtio_vsock.preset", "linux-5.4");
  CHECK(t.key_columns ==
        std::vector<std::string>{"direction", "virtio_vsock.preset", "workload.message_size", "workload.connections"});
  CHECK(with_key("virtio_vsock.queue_size", "256").rows[0].keys[1].second == "256");
  CHECK_THAT(error_of([&] { with_key("virtio_vsock.presett", "linux-5.4"); }),
             Catch::Contains("virtio_vsock.presett: not an experiment key"));
  CHECK_THAT(error_of([&] { with_key("virtio_vsock.preset", "linux-9.9"); }),
             Catch::StartsWith("--key 'virtio_vsock.preset=linux-9.9': error: virtio_vsock.preset:") &&
                 Catch::Contains("linux-4.19"));
  CHECK_THAT(error_of([&] { with_key("workload.connections", "2"); }),
             Catch::Contains("workload.connections: the file says 1") && Catch::Contains("says 2"));
  CHECK(with_key("workload.connections", "1").rows.size() == 4);
  CHECK_THAT(error_of([&] { with_key("sweep.grid", "x"); }), Catch::Contains("not an experiment key"));
  ImportOptions o = options();
  o.keys = {{"workload.app", "iperf3"}, {"workload.app", "loop"}};
  CHECK_THAT(error_of([&] { import_rows({run}, o, registry()); }), Catch::Contains("given twice"));
  o.keys = {};
  o.metrics = {"throughput_Gbps", "elapsed_seconds"};
  CHECK_THAT(error_of([&] { import_rows({run}, o, registry()); }),
             Catch::Contains("--metrics: error: 'elapsed_seconds' is not a figure an import gives"));
}

TEST_CASE("import: vsock_perf's receiver figure is the throughput, the sender's TX buffer the message size", "[import]")
{
  const ImportedRun both = vsock_perf("g2h-64k-1.txt");
  CHECK(both.direction == "guest_to_host");
  CHECK(both.message_size == 65536);
  CHECK(*both.received_bps == Approx(27.903341e9));
  CHECK(*both.sent_bps == Approx(29.204117e9));
  CHECK(vsock_perf("g2h-64k-2.txt").message_size == 65536); // receiver's output first
  CHECK(vsock_perf("h2g-64k-1.txt").direction == "host_to_guest");
  const ImportTable t = import_rows({both, vsock_perf("g2h-64k-2.txt")}, options(ImportTool::VsockPerf), registry());
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].mean == Approx((27.903341 + 27.402914) / 2));
  CHECK(t.source == "vsock_perf");

  const ImportedRun rx = vsock_perf("g2h-64k-rx.txt"), tx = vsock_perf("g2h-64k-tx.txt");
  CHECK(rx.direction.empty());
  CHECK(!rx.message_size);
  ImportOptions o = options(ImportTool::VsockPerf);
  o.direction = "guest_to_host";
  CHECK_THAT(error_of([&] { import_rows({rx}, o, registry()); }), Catch::Contains("--key workload.message_size=BYTES"));
  o.keys = {{"workload.message_size", "64KiB"}};
  CHECK(import_rows({rx}, o, registry()).rows.at(0).keys[1].second == "65536");
  CHECK_THAT(error_of([&] { import_rows({tx}, options(ImportTool::VsockPerf), registry()); }),
             Catch::Contains("no receiver output") && Catch::Contains("--throughput sent"));
  o = options(ImportTool::VsockPerf);
  o.sent = true;
  CHECK(import_rows({tx}, o, registry()).rows.at(0).mean == Approx(29.012356));
  o.metrics = {"app_cpu_percent_guest"};
  CHECK_THAT(error_of([&] { import_rows({tx}, o, registry()); }), Catch::Contains("vsock_perf reports no CPU use"));
}

TEST_CASE("import: bad vsock_perf outputs name the file and line", "[import]")
{
  CHECK_THAT(error_of([] { parse_vsock_perf("n.txt", slurp(kDir + "/bad/vsock_perf-no-perf.txt")); }),
             Catch::StartsWith("n.txt:1:1: error: the receiver output has no 'rx performance: X Gbits/s' line"));
  CHECK_THAT(error_of([] { parse_vsock_perf("j.txt", slurp(kDir + "/iperf3/g2h-64k-1.json")); }),
             Catch::StartsWith("j.txt:1:1: error: not a vsock_perf output"));
  const std::string sender = slurp(kDir + "/vsock_perf/g2h-64k-tx.txt");
  CHECK_THAT(error_of([&] { parse_vsock_perf("d.txt", sender + sender); }),
             Catch::StartsWith("d.txt:9:1: error: a second sender output (the first at line 1"));
  std::string garbled = sender;
  garbled.replace(garbled.find("29.012356"), 9, "fast");
  CHECK_THAT(error_of([&] { parse_vsock_perf("g.txt", garbled); }),
             Catch::StartsWith("g.txt:6:17: error: expected 'tx performance: NUMBER Gbits/s'"));
}

TEST_CASE("import: the CSV it writes loads as measurements, rows and keys as built, and --append checks the header",
          "[import]")
{
  std::vector<ImportedRun> runs;
  for (const std::string f : {"g2h-4k-1.json", "g2h-4k-2.json", "g2h-64k-1.json", "g2h-64k-2.json"})
    runs.push_back(iperf3(f));
  ImportOptions o = options();
  o.keys = {{"virtio_vsock.preset", "linux-5.4"}};
  const ImportTable t = import_rows(runs, o, registry());
  const std::string csv = import_csv(t, ImportTool::Iperf3, false);
  CHECK(csv.rfind("# vsocksim import iperf3: 4 run(s)", 0) == 0);
  const std::string path = (std::filesystem::temp_directory_path() / "vsim-test-import.csv").string();
  {
    std::ofstream(path) << csv;
  }
  const std::vector<Measurement> ms = load_measurements(path, registry());
  REQUIRE(ms.size() == t.rows.size());
  for (std::size_t i = 0; i < ms.size(); ++i) {
    CHECK(ms[i].keys == t.rows[i].keys);
    CHECK(ms[i].metric == t.rows[i].metric);
    CHECK(ms[i].stats.at("mean") == Approx(t.rows[i].mean).epsilon(1e-5));
    CHECK(ms[i].stats.at("min") <= ms[i].stats.at("max"));
  }
  std::filesystem::remove(path);

  ImportOptions h = options();
  h.keys = o.keys;
  const ImportTable th = import_rows({iperf3("h2g-4k-1.json")}, h, registry());
  const std::string both = append_csv("m.csv", csv, th, ImportTool::Iperf3, false);
  CHECK(both.rfind(csv, 0) == 0);
  CHECK(both.find("host_to_guest,linux-5.4,4096,1,throughput_Gbps,") != std::string::npos);
  CHECK_THAT(error_of([&] { append_csv("m.csv", both, th, ImportTool::Iperf3, false); }),
             Catch::Contains("already has a row for host_to_guest,linux-5.4,4096,1,throughput_Gbps"));
  const ImportTable plain = import_rows({iperf3("h2g-4k-1.json")}, options(), registry());
  CHECK_THAT(error_of([&] { append_csv("m.csv", csv, plain, ImportTool::Iperf3, false); }),
             Catch::StartsWith("m.csv:4:1: error: --append: the header is"));
}
