// Experiment loading: validation messages, resolution, --set, sweep expansion,
// canonical text and describe.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>
#include <openssl/sha.h>

#include "app/experiment/describe.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/registry.hpp"
#include "transports/simulate.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

// The workload keys, as the messages list them (alphabetically, and as declared).
const std::string kWorkloadKeys = "app, connections, message_size, outstanding, pattern, request_size, response_size, "
                                  "socket_type, start_interval, think_time, think_time_distribution, total_bytes, "
                                  "transactions, zerocopy";
const std::string kWorkloadPaths =
    "workload.message_size, workload.total_bytes, workload.connections, workload.start_interval, workload.pattern, "
    "workload.transactions, workload.request_size, workload.response_size, workload.outstanding, "
    "workload.think_time, workload.think_time_distribution, workload.app, workload.socket_type, workload.zerocopy";

Experiment load_yaml(const std::string& text, const std::vector<std::string>& sets = {})
{
  return load_experiment_text(text, "t.yaml", sets, registry());
}

// The message of the InputError loading TEXT throws ("(no error)" if none).
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {})
{
  try {
    load_yaml(text, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// First segments of every declared path, and "sweep", sorted: the keys
// allowed at the top level of a file (computed, as other components declare
// their own sections).
std::set<std::string> sections()
{
  std::set<std::string> s;
  for (const auto& spec : registry().all())
    s.insert(spec.path.substr(0, spec.path.find('.')));
  return s;
}

std::string join(const std::set<std::string>& items)
{
  std::string out;
  for (const auto& s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string top_keys()
{
  auto s = sections();
  s.insert("sweep");
  s.insert("search");
  return join(s);
}

const std::string kTopKeys = top_keys();
const std::string kSeedRange = "(allowed: 0 .. 9007199254740992)";

// The swept values of each point, as "key=value key=value".
std::vector<std::string> labels(const Experiment& ex)
{
  std::vector<std::string> out;
  for (const auto& p : ex.points) {
    std::string s;
    for (const auto& [k, v] : p.label)
      s += (s.empty() ? "" : " ") + k + "=" + v;
    out.push_back(s);
  }
  return out;
}

std::string first_line(const std::filesystem::path& p)
{
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<std::filesystem::path> yaml_files(const std::string& dir)
{
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(VSIM_SOURCE_DIR) + "/tests/data/" + dir))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

// ---------------------------------------------------------------------------
// Declarations

TEST_CASE("experiment keys are declared with their defaults", "[experiment]")
{
  const auto& reg = registry();
  struct Expect {
    const char* path;
    ParamKind kind;
    const char* def;
  };
  for (const Expect& e :
       {Expect{"name", ParamKind::Text, ""}, Expect{"description", ParamKind::Text, ""},
        Expect{"platform", ParamKind::Text, "hyperv-2019"}, Expect{"transport", ParamKind::Choice, "hv_sock"},
        Expect{"direction", ParamKind::Choice, "guest_to_host"}, Expect{"seed", ParamKind::Integer, "1"},
        Expect{"iterations", ParamKind::Integer, "10"}, Expect{"workload.message_size", ParamKind::Size, "64KiB"},
        Expect{"workload.total_bytes", ParamKind::Size, "1GB"}, Expect{"workload.connections", ParamKind::Integer, "1"},
        Expect{"guest.vcpus", ParamKind::Integer, "2"}, Expect{"host.cpus", ParamKind::Integer, "8"},
        Expect{"report.metrics", ParamKind::Text, "throughput_MBps"}}) {
    INFO(e.path);
    const ParamSpec* spec = reg.find(e.path);
    REQUIRE(spec != nullptr);
    CHECK(spec->kind == e.kind);
    CHECK(spec->default_text == e.def);
    CHECK(!spec->doc.empty());
  }
  CHECK(reg.find("transport")->choices == std::vector<std::string>{"hv_sock", "virtio_vsock", "firecracker_vsock"});
  CHECK(reg.find("sim.mode") == nullptr); // removed: one exact engine
  // a shipped name or a profile file (docs/profiles.md)
  CHECK(reg.find("platform")->check("kvm-2019").empty());
  CHECK(reg.find("platform")->check("my-host.yaml").empty());
  CHECK(reg.find("platform")->check("kvm-2020") ==
        "unknown platform 'kvm-2020' (allowed: firecracker-m6i, hyperv-2019, kvm-2018, "
        "kvm-2019, kvm-2024, or a profile file PATH.yaml, relative "
        "to the experiment file)");
  CHECK(reg.find("seed")->max == 9007199254740992.0);
  CHECK(reg.find("workload.total_bytes")->max == 1e12);
  CHECK(reg.find("workload.message_size")->max == 1073741824.0);
}

// ---------------------------------------------------------------------------
// Errors in the file: one line, FILE:LINE:COL, key path, what is allowed

TEST_CASE("error: YAML syntax, with the parser's position", "[experiment]")
{
  CHECK(error_of("a: [1\nb: 2") == "t.yaml:2:2: error: invalid YAML: end of sequence flow not found");
  CHECK(error_of("seed: 1\n  iterations: 2") == "t.yaml:2:13: error: invalid YAML: illegal map value");
}

TEST_CASE("error: empty file and comment-only file", "[experiment]")
{
  const std::string msg = "t.yaml:1:1: error: the file is empty (allowed: a map of experiment keys, see 'vsocksim "
                          "describe')";
  CHECK(error_of("") == msg);
  CHECK(error_of("# nothing here\n\n") == msg);
  CHECK(error_of("~") == msg);
}

TEST_CASE("error: top level is not a map, or several documents", "[experiment]")
{
  CHECK(error_of("- seed\n- 1") == "t.yaml:1:1: error: the top level must be a map of keys, got a list (allowed: a "
                                   "map of experiment keys, see 'vsocksim describe')");
  CHECK(error_of("hello") == "t.yaml:1:1: error: the top level must be a map of keys, got 'hello' (allowed: a map of "
                             "experiment keys, see 'vsocksim describe')");
  CHECK(error_of("seed: 1\n---\nseed: 2") == "t.yaml:3:1: error: expected one YAML document, found another one here");
}

// Found by scripts/fuzz.sh: yaml-cpp 0.7's LoadAll never returned on these
// (empty documents at the stray ',' until out of memory).
TEST_CASE("error: a stray token the YAML parser cannot take", "[experiment]")
{
  CHECK(error_of(",") == "t.yaml:1:1: error: invalid YAML: unexpected ','");
  CHECK(error_of("- a\n,") == "t.yaml:2:1: error: invalid YAML: unexpected ','");
  CHECK(error_of("# expdy swept ip.seed: alrea/y swept\n  grid:\n    seedseed::2]1  eed: alrea/y swept\n  grid:\n"
                 "    seedseed::2]1  ,[\n  zi: \n,[\n  zi: \np\xbd   seed: [4, 4]\n") ==
        "t.yaml:7:1: error: invalid YAML: unexpected ','");
  CHECK(error_of("seed: 1\n---\n,") == "t.yaml:3:1: error: expected one YAML document, found another one here");
  CHECK(error_of("seed: 1\n...\nseed: 2") == "t.yaml:3:1: error: expected one YAML document, found another one here");
  CHECK(load_yaml("---\nseed: 3\n...\n").base.integer("seed") == 3);
}

TEST_CASE("error: unknown keys list the keys allowed at that level", "[experiment]")
{
  CHECK(error_of("workload:\n  msg_size: 4KiB") ==
        "t.yaml:2:3: error: workload.msg_size: unknown key (allowed: " + kWorkloadKeys + ")");
  CHECK(error_of("seed: 1\nsede: 2") ==
        "t.yaml:2:1: error: sede: unknown key, did you mean seed? (allowed: " + kTopKeys + ")");
  CHECK(error_of("workload.msg_size: 4") ==
        "t.yaml:1:1: error: workload.msg_size: unknown key (allowed: " + kWorkloadKeys + ")");
  CHECK(error_of("sweep:\n  grids: {}") ==
        "t.yaml:2:3: error: sweep.grids: unknown key, did you mean sweep.grid? (allowed: grid, zip)");
  const std::string costs_error = error_of("costs:\n  clock: 3");
  CHECK(costs_error.rfind("t.yaml:2:3: error: costs.clock: unknown key (allowed: clock_ghz, ", 0) == 0);
  CHECK(error_of("hv_sock: {sndbuf: 4KiB, bogus: 1}") ==
        "t.yaml:1:25: error: hv_sock.bogus: unknown key (allowed: host_fill, host_packet_size, pending_send_size, "
        "preset, rcvbuf, "
        "ring_sizing, send_loop, sndbuf, sysctl_rmem_max, sysctl_wmem_max)");
}

TEST_CASE("error: a misspelt key gets the one key it most likely means", "[experiment]")
{
  // Within two edits at the same level (a swap of two letters is one).
  CHECK(error_of("workload:\n  mesage_size: 4KiB") ==
        "t.yaml:2:3: error: workload.mesage_size: unknown key, did you mean workload.message_size? (allowed: " +
            kWorkloadKeys + ")");
  CHECK(error_of("iteartions: 2").starts_with("t.yaml:1:1: error: iteartions: unknown key, did you mean iterations?"));
  // A parameter's own name at the wrong level: the one path it ends.
  CHECK(error_of("message_size: 4KiB")
            .starts_with("t.yaml:1:1: error: message_size: unknown key, did you mean workload.message_size?"));
  // Nothing close, or two equally close: no guess.
  CHECK(error_of("workload:\n  msg_size: 4KiB").find("did you mean") == std::string::npos);
  CHECK(error_of("hv_sock: {bogus: 1}").find("did you mean") == std::string::npos);
}

TEST_CASE("error: a flow mapping whose comma split a value says so", "[experiment]")
{
  CHECK(error_of("report: {metrics: throughput_MBps,writer_sys_seconds}") ==
        "t.yaml:1:35: error: report.writer_sys_seconds: unknown key: in a mapping written {...} a comma ends an "
        "entry, so 'writer_sys_seconds' became a key of its own (a value with commas split in two?) (allowed: "
        "quote the value, {metrics: 'a,b'}, or write the mapping one key per line)");
  // The same key, quoted: accepted.
  CHECK(error_of("report: {metrics: 'throughput_MBps,writer_sys_seconds'}") == "(no error)");
}

TEST_CASE("error: duplicate keys report the second occurrence", "[experiment]")
{
  CHECK(error_of("seed: 1\niterations: 2\nseed: 2") ==
        "t.yaml:3:1: error: seed: duplicate key (first given at line 1, column 1)");
  CHECK(error_of("workload:\n  connections: 1\n  connections: 2") ==
        "t.yaml:3:3: error: workload.connections: duplicate key (first given at line 2, column 3)");
  CHECK(error_of("{seed: 1, seed: 2}") == "t.yaml:1:11: error: seed: duplicate key (first given at line 1, column 2)");
  CHECK(error_of("workload:\n  connections: 1\nworkload:\n  message_size: 1") ==
        "t.yaml:3:1: error: workload: duplicate key (first given at line 1, column 1)");
  // The same parameter, once nested and once as a dotted key.
  CHECK(error_of("workload:\n  connections: 1\nworkload.connections: 2") ==
        "t.yaml:3:1: error: workload.connections: duplicate key (first given at line 2, column 3)");
  CHECK(error_of("sweep:\n  grid:\n    seed: [1]\n    seed: [2]") ==
        "t.yaml:4:5: error: sweep.grid.seed: duplicate key (first given at line 3, column 5)");
}

TEST_CASE("error: wrong types", "[experiment]")
{
  CHECK(error_of("seed:\n  a: 1") == "t.yaml:2:3: error: seed: expected an integer, got a map " + kSeedRange);
  CHECK(error_of("seed: abc") == "t.yaml:1:7: error: seed: expected an integer, got 'abc' " + kSeedRange);
  CHECK(error_of("seed: \"12\"") ==
        "t.yaml:1:7: error: seed: expected an integer, got quoted text \"12\" " + kSeedRange);
  CHECK(error_of("seed: 1.5") == "t.yaml:1:7: error: seed: expected an integer, got '1.5' " + kSeedRange);
  CHECK(error_of("seed: 4KiB") == "t.yaml:1:7: error: seed: expected an integer, got '4KiB' " + kSeedRange);
  CHECK(error_of("seed:") == "t.yaml:1:1: error: seed: expected an integer, got no value " + kSeedRange);
  CHECK(error_of("hv_sock:\n  send_loop: yes") ==
        "t.yaml:2:14: error: hv_sock.send_loop: expected true or false, got 'yes' (allowed: true, false)");
  CHECK(error_of("hv_sock:\n  send_loop: \"true\"") ==
        "t.yaml:2:14: error: hv_sock.send_loop: expected true or false, got quoted text \"true\" (allowed: true, "
        "false)");
  std::string platforms;
  for (const auto& p : platform_profiles())
    platforms += (platforms.empty() ? "" : ", ") + p.name;
  CHECK(error_of("platform: [hyperv-2019]") ==
        "t.yaml:1:11: error: platform: expected text, got a list (allowed: " + platforms +
            ", or a profile file PATH.yaml, relative to the experiment file)");
  CHECK(error_of("costs:\n  clock_ghz: fast") ==
        "t.yaml:2:14: error: costs.clock_ghz: expected a number, got 'fast' (allowed: 0.1 .. 10 GHz)");
  CHECK(error_of("workload: 5") ==
        "t.yaml:1:11: error: workload: expected a map of keys, got '5' (allowed: " + kWorkloadKeys + ")");
  CHECK(error_of("workload:") ==
        "t.yaml:1:1: error: workload: expected a map of keys, got no value (allowed: " + kWorkloadKeys + ")");
  CHECK(error_of("workload:\n  message_size: true") ==
        "t.yaml:2:17: error: workload.message_size: expected a size such as 64KiB, got 'true' (allowed: 1B .. 1GiB)");
  CHECK(error_of("hv_sock:\n  sndbuf: Default") ==
        "t.yaml:2:11: error: hv_sock.sndbuf: expected a size such as 64KiB, got 'Default' (allowed: 1B .. 1GiB, or "
        "default)");
  CHECK(error_of("? [a, b]\n: 1") == "t.yaml:1:3: error: keys must be words, got a list");
}

TEST_CASE("error: unknown unit, fraction of a byte", "[experiment]")
{
  CHECK(error_of("workload:\n  message_size: 12 KB") ==
        "t.yaml:2:17: error: workload.message_size: unknown unit 'KB' in '12 KB' (allowed: B, KiB, MiB, GiB, kB, "
        "MB, GB)");
  CHECK(error_of("workload: {message_size: 1.5B}") ==
        "t.yaml:1:26: error: workload.message_size: '1.5B' is not a whole number of bytes");
}

TEST_CASE("error: out of range shows the range with its unit", "[experiment]")
{
  CHECK(error_of("workload: {message_size: 2GiB}") ==
        "t.yaml:1:26: error: workload.message_size: 2GiB is out of range (allowed: 1B .. 1GiB)");
  CHECK(error_of("workload: {message_size: 0}") ==
        "t.yaml:1:26: error: workload.message_size: 0 is out of range (allowed: 1B .. 1GiB)");
  CHECK(error_of("workload: {message_size: -3}") ==
        "t.yaml:1:26: error: workload.message_size: -3 is out of range (allowed: 1B .. 1GiB)");
  CHECK(error_of("workload: {total_bytes: 1001GB}") ==
        "t.yaml:1:25: error: workload.total_bytes: 1001GB is out of range (allowed: 1B .. 1000GB)");
  CHECK(error_of("iterations: 0") == "t.yaml:1:13: error: iterations: 0 is out of range (allowed: 1 .. 1000 runs)");
  CHECK(error_of("seed: 9007199254740993") ==
        "t.yaml:1:7: error: seed: 9007199254740993 is out of range " + kSeedRange);
  CHECK(error_of("seed: 99999999999999999999999") ==
        "t.yaml:1:7: error: seed: 99999999999999999999999 is out of range " + kSeedRange);
  CHECK(error_of("costs:\n  clock_ghz: 20") ==
        "t.yaml:2:14: error: costs.clock_ghz: 20 is out of range (allowed: 0.1 .. 10 GHz)");
  CHECK(error_of("costs:\n  clock_ghz: 1e400") ==
        "t.yaml:2:14: error: costs.clock_ghz: 1e400 is out of range (allowed: 0.1 .. 10 GHz)");
  CHECK(error_of("guest: {vcpus: 65}") ==
        "t.yaml:1:16: error: guest.vcpus: 65 is out of range (allowed: 1 .. 64 vCPUs)");
}

TEST_CASE("error: the removed sim.mode key says what became of it", "[experiment]")
{
  for (const char* text : {"sim:\n  mode: exact", "sim:\n  mode: fast"})
    CHECK(error_of(text) ==
          "t.yaml:2:3: error: sim.mode: sim.mode was removed: the engine now runs every event in one exact order, so "
          "there is no fast or exact mode any more (delete the key; docs/model.md, 'The engine')");
}

TEST_CASE("error: a choice that is not allowed lists the choices", "[experiment]")
{
  CHECK(error_of("direction: both") ==
        "t.yaml:1:12: error: direction: 'both' is not one of the choices (allowed: guest_to_host, host_to_guest, "
        "bidirectional)");
  CHECK(error_of("transport: tcp") ==
        "t.yaml:1:12: error: transport: 'tcp' is not one of the choices (allowed: hv_sock, virtio_vsock, "
        "firecracker_vsock)");
  const std::string platform_error = error_of("platform: hyperv-2020");
  CHECK(platform_error.rfind("t.yaml:1:11: error: platform: unknown platform 'hyperv-2020' (allowed: ", 0) == 0);
  CHECK_THAT(platform_error, Catch::EndsWith(", or a profile file PATH.yaml, relative to the experiment file)"));
  CHECK(platform_error.find("hyperv-2019") != std::string::npos);
}

TEST_CASE("error: sweep structure", "[experiment]")
{
  CHECK(error_of("sweep: 3") == "t.yaml:1:8: error: sweep: expected a map of keys, got '3' (allowed: grid, zip)");
  CHECK(error_of("sweep:\n  grid: [seed]") ==
        "t.yaml:2:9: error: sweep.grid: expected a map of keys, got a list (allowed: parameter paths mapped to lists "
        "of values)");
  CHECK(error_of("sweep:\n  grid:\n    seed: 5") ==
        "t.yaml:3:11: error: sweep.grid.seed: expected a list of values, got '5'");
  CHECK(error_of("sweep:\n  grid:\n    seed:") ==
        "t.yaml:3:5: error: sweep.grid.seed: expected a list of values, got no value");
  CHECK(error_of("sweep:\n  zip:\n    seed: []") ==
        "t.yaml:3:11: error: sweep.zip.seed: the list is empty (allowed: one or more values)");
  CHECK(error_of("sweep:\n  grid:\n    workload.msg: [1]") ==
        "t.yaml:3:5: error: sweep.grid.workload.msg: 'workload.msg' is not a parameter (allowed: " + kWorkloadPaths +
            ")");
  CHECK(error_of("sweep:\n  grid:\n    workload: [1]") ==
        "t.yaml:3:5: error: sweep.grid.workload: 'workload' is not a parameter (allowed: " + kWorkloadPaths + ")");
  CHECK(error_of("sweep:\n  grid:\n    sede: [1]") ==
        "t.yaml:3:5: error: sweep.grid.sede: 'sede' is not a parameter (allowed: a parameter path, as listed by "
        "'vsocksim describe')");
  CHECK(error_of("sweep:\n  grid:\n    seed: [1]\n  zip:\n    seed: [2]") ==
        "t.yaml:5:5: error: sweep.zip.seed: already swept in sweep.grid at line 3, column 5 (a key can be swept "
        "only once)");
  CHECK(error_of("sweep:\n  zip:\n    seed: [1, 2, 3]\n    iterations: [1, 2]") ==
        "t.yaml:4:17: error: sweep.zip.iterations: the list has 2 values but sweep.zip.seed has 3 (zip lists must "
        "have equal lengths)");
}

TEST_CASE("error: a sweep with too many points", "[experiment]")
{
  std::string seeds; // 1 .. 400
  for (int i = 1; i <= 400; ++i)
    seeds += (i > 1 ? ", " : "") + std::to_string(i);
  const std::string text =
      "sweep:\n  grid:\n    seed: [" + seeds + "]\n    host.cpus: [1, 2]\n    iterations: [" + seeds + "]";
  CHECK(error_of(text) ==
        "t.yaml:5:5: error: sweep.grid.iterations: the sweep has more than 100000 points (allowed: at most 100000)");
  CHECK(load_yaml("sweep:\n  grid:\n    seed: [" + seeds + "]\n    iterations: [1, 2]").points.size() == 800);
}

TEST_CASE("error: every sweep value is validated at its own position", "[experiment]")
{
  CHECK(error_of("sweep:\n  grid:\n    seed: [1, x]") ==
        "t.yaml:3:15: error: seed: expected an integer, got 'x' " + kSeedRange);
  CHECK(error_of("sweep:\n  grid:\n    workload.message_size:\n      - 4KiB\n      - 12 KB") ==
        "t.yaml:5:9: error: workload.message_size: unknown unit 'KB' in '12 KB' (allowed: B, KiB, MiB, GiB, kB, MB, "
        "GB)");
  CHECK(error_of("sweep:\n  zip:\n    direction: [guest_to_host, sideways]") ==
        "t.yaml:3:32: error: direction: 'sideways' is not one of the choices (allowed: guest_to_host, "
        "host_to_guest, bidirectional)");
  CHECK(error_of("sweep.grid.iterations: [5, 2000]") ==
        "t.yaml:1:28: error: iterations: 2000 is out of range (allowed: 1 .. 1000 runs)");
}

TEST_CASE("error: keys of the other transport", "[experiment]")
{
  CHECK(error_of("platform: kvm-2019\ntransport: virtio_vsock\nhv_sock:\n  send_loop: true") ==
        "t.yaml:4:14: error: hv_sock.send_loop: applies to transport hv_sock only, and this point's transport is "
        "virtio_vsock (allowed: keys of virtio_vsock (see `vsocksim describe virtio_vsock`))");
  CHECK(error_of("seed: 1", {"virtio_vsock.event_idx=false"}) ==
        "--set 'virtio_vsock.event_idx=false': error: virtio_vsock.event_idx: applies to transport virtio_vsock "
        "only, and this point's transport is hv_sock (allowed: keys of hv_sock (see `vsocksim describe hv_sock`))");
  CHECK(error_of("costs:\n  virtio_guest_kick: 10") ==
        "t.yaml:2:22: error: costs.virtio_guest_kick: applies to transport virtio_vsock and firecracker_vsock only, "
        "and this point's transport is hv_sock (allowed: keys of hv_sock (see `vsocksim describe hv_sock`))");
  CHECK(error_of("platform: kvm-2019\ntransport: virtio_vsock\nvirtio_vsock:\n  queue_size: 96") ==
        "t.yaml:4:15: error: virtio_vsock.queue_size: 96 is not a power of 2 (virtio 1.1 section 2.6; allowed: 2, "
        "4, 8, ..., 32768)");
}

TEST_CASE("error: a platform calibrated for another transport", "[experiment]")
{
  CHECK(error_of("platform: hyperv-2019\ntransport: virtio_vsock") ==
        "t.yaml:1:11: error: platform: hyperv-2019 is calibrated for transport hv_sock, not virtio_vsock (allowed: "
        "with virtio_vsock: kvm-2018, kvm-2019, kvm-2024)");
  CHECK(error_of("transport: hv_sock\nplatform: kvm-2018") ==
        "t.yaml:2:11: error: platform: kvm-2018 is calibrated for transport virtio_vsock, not hv_sock (allowed: "
        "with hv_sock: hyperv-2019)");
  // Sweeping the transport with the platform left at its default: each
  // point gets its transport's newest profile (issue 51, item 5).
  CHECK(error_of("sweep:\n  grid:\n    transport: [hv_sock, virtio_vsock]") == "(no error)");
  const Experiment both = load_yaml("sweep:\n  grid:\n    transport: [hv_sock, virtio_vsock]\n");
  REQUIRE(both.points.size() == 2);
  CHECK(both.points[0].params.text("platform") == "hyperv-2019");
  CHECK(both.points[1].params.text("platform") == "kvm-2024");
  CHECK(load_yaml("transport: virtio_vsock\n").points[0].params.text("platform") == "kvm-2024");
  // Swept with a platform of another transport given: refused, at the
  // swept value.
  CHECK(error_of("platform: hyperv-2019\nsweep:\n  grid:\n    transport: [hv_sock, virtio_vsock]") ==
        "t.yaml:1:11: error: platform: hyperv-2019 is calibrated for transport hv_sock, not virtio_vsock (allowed: "
        "with virtio_vsock: kvm-2018, kvm-2019, kvm-2024)");
  // A value that is never run is not checked.
  CHECK(error_of("transport: virtio_vsock\nsweep:\n  grid:\n    transport: [hv_sock]") == "(no error)");
}

// ---------------------------------------------------------------------------
// Errors in --set: no file position, the entry quoted

TEST_CASE("error: --set entries", "[experiment]")
{
  CHECK(error_of("seed: 1", {"seed"}) ==
        "--set 'seed': error: seed: missing '=' (allowed: KEY=VALUE, e.g. workload.message_size=4KiB)");
  CHECK(error_of("seed: 1", {"=3"}) ==
        "--set '=3': error: missing key before '=' (allowed: KEY=VALUE, e.g. workload.message_size=4KiB)");
  CHECK(error_of("seed: 1", {"workload.msg=1"}) ==
        "--set 'workload.msg=1': error: workload.msg: unknown key (allowed: " + kWorkloadKeys + ")");
  CHECK(error_of("seed: 1", {"sede=1"}) ==
        "--set 'sede=1': error: sede: unknown key, did you mean seed? (allowed: " + kTopKeys + ")");
  CHECK(error_of("seed: 1", {"workload=3"}) ==
        "--set 'workload=3': error: workload: a group of keys, not a key; set one of them (allowed: " + kWorkloadKeys +
            ")");
  CHECK(error_of("seed: 1", {"seed=x"}) == "--set 'seed=x': error: seed: expected an integer, got 'x' " + kSeedRange);
  CHECK(error_of("seed: 1", {"seed="}) ==
        "--set 'seed=': error: seed: expected an integer, got no value " + kSeedRange);
  CHECK(error_of("seed: 1", {"seed=[1"}) ==
        "--set 'seed=[1': error: seed: invalid YAML value: end of sequence flow not found");
  CHECK(error_of("seed: 1", {"hv_sock.sndbuf=12 KB"}) ==
        "--set 'hv_sock.sndbuf=12 KB': error: hv_sock.sndbuf: unknown unit 'KB' in '12 KB' (allowed: B, KiB, MiB, "
        "GiB, kB, MB, GB)");
  CHECK(error_of("seed: 1", {"iterations=5000"}) ==
        "--set 'iterations=5000': error: iterations: 5000 is out of range (allowed: 1 .. 1000 runs)");
  CHECK(error_of("seed: 1", {"sweep.grid.seed=3"}) ==
        "--set 'sweep.grid.seed=3': error: sweep.grid.seed: expected a list of values, got '3'");
  CHECK(error_of("seed: 1", {"sweep.grid.seed=[1, y]"}) ==
        "--set 'sweep.grid.seed=[1, y]': error: seed: expected an integer, got 'y' " + kSeedRange);
  CHECK(error_of("seed: 1", {"sweep.grid.foo=[1]"}) ==
        "--set 'sweep.grid.foo=[1]': error: sweep.grid.foo: 'foo' is not a parameter (allowed: a parameter path, "
        "as listed by 'vsocksim describe')");
  CHECK(error_of("seed: 1", {"sweep.grid=[1]"}) ==
        "--set 'sweep.grid=[1]': error: sweep.grid: set one sweep axis at a time (allowed: sweep.grid.KEY=[v1, v2], "
        "sweep.zip.KEY=[v1, v2])");
  CHECK(error_of("sweep:\n  zip:\n    seed: [1, 2]\n    iterations: [1, 2]", {"sweep.zip.seed=[7, 8, 9]"}) ==
        "--set 'sweep.zip.seed=[7, 8, 9]': error: sweep.zip.seed: the list has 3 values but sweep.zip.iterations "
        "has 2 (zip lists must have equal lengths)");
}

// Found by scripts/fuzz.sh: text that is not UTF-8 was accepted and then
// made the canonical JSON throw (exit 1, "internal error") instead of exit 2.
TEST_CASE("error: text values and the default name must be UTF-8", "[experiment]")
{
  const std::string utf8 = "utf-8 caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82";
  CHECK(load_yaml("description: " + utf8).base.text("description") == utf8);
  CHECK(error_of("description: caf\xe9") ==
        "t.yaml:1:14: error: description: invalid UTF-8 at byte 4 of the text (allowed: UTF-8 text)");
  CHECK(error_of("seed: 1", {"name=a\xff"}) ==
        "--set 'name=a\xff': error: name: invalid UTF-8 at byte 2 of the text (allowed: UTF-8 text)");
  CHECK(error_of("sweep:\n  grid:\n    description: [ok, \"x\xff\"]") ==
        "t.yaml:3:23: error: description: invalid UTF-8 at byte 2 of the text (allowed: UTF-8 text)");
  // Overlong, surrogate, above U+10FFFF, cut short.
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"})
    CHECK(error_of(std::string("name: \"") + bad + "\"").find("invalid UTF-8 at byte 1") != std::string::npos);
  CHECK(load_yaml("seed: 1").name == "t");
  try {
    load_experiment_text("seed: 1", "dir/caf\xe9.yaml", {}, registry());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "dir/caf\xe9.yaml: error: name: the file name is not UTF-8 text, so it cannot be "
                                   "the default name (allowed: set name to UTF-8 text)");
  }
  CHECK(load_experiment_text("name: x", "dir/caf\xe9.yaml", {}, registry()).name == "x");
}

TEST_CASE("error: reading a missing file names it", "[experiment]")
{
  try {
    load_experiment("/nonexistent/x.yaml", {}, registry());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/x.yaml: error: cannot read the file: No such file or directory");
  }
  const std::string dir = std::string(VSIM_SOURCE_DIR) + "/tests/data";
  try {
    load_experiment(dir, {}, registry());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == dir + ": error: cannot read the file: it is a directory");
  }
}

// ---------------------------------------------------------------------------
// Resolution

TEST_CASE("every declared key is resolved, defaults included", "[experiment]")
{
  const Experiment ex = load_yaml("description: defaults");
  REQUIRE(ex.points.size() == 1);
  std::size_t in_scope = 0;
  for (const auto& spec : registry().all()) {
    INFO(spec.path);
    const bool mine = scope_applies(spec.scope, "hv_sock");
    in_scope += mine;
    CHECK(ex.base.has(spec.path) == mine);
    CHECK(ex.points[0].params.has(spec.path) == mine);
  }
  CHECK(ex.base.all().size() == in_scope);
  const Params& p = ex.points[0].params;
  CHECK(p.text("platform") == "hyperv-2019");
  CHECK(p.text("transport") == "hv_sock");
  CHECK(p.text("direction") == "guest_to_host");
  CHECK(p.integer("seed") == 1);
  CHECK(p.integer("iterations") == 10);
  CHECK(p.integer("workload.message_size") == 65536);
  CHECK(p.integer("workload.total_bytes") == 1000000000);
  CHECK(p.integer("workload.connections") == 1);
  CHECK(p.integer("guest.vcpus") == 2);
  CHECK(p.integer("host.cpus") == 8);
  CHECK(p.text("report.metrics") == "throughput_MBps");
  CHECK(p.is_word("hv_sock.sndbuf", "default"));
  // hv_sock's knobs from the newest modelled kernel (issue 51, item 5).
  CHECK(p.text("hv_sock.preset") == "linux-5.3");
  CHECK(p.boolean("hv_sock.send_loop") == true);
  CHECK(p.text("hv_sock.pending_send_size") == "once");
  CHECK(p.text("hv_sock.ring_sizing") == "sockopt");
  const Experiment before = load_yaml("hv_sock: {preset: linux-5.1, send_loop: true}");
  const Params& old = before.points[0].params;
  CHECK(old.text("hv_sock.ring_sizing") == "fixed");
  CHECK(old.text("hv_sock.pending_send_size") == "per_check");
  CHECK(old.boolean("hv_sock.send_loop") == true); // set alone
  CHECK(p.text("description") == "defaults");
  CHECK(ex.points[0].index == 0);
  CHECK(ex.points[0].label.empty());
  CHECK(ex.grid_keys.empty());
  CHECK(ex.zip_keys.empty());
}

TEST_CASE("values keep their kinds", "[experiment]")
{
  const Experiment ex =
      load_yaml("workload: {message_size: 4 KiB}\nhv_sock: {sndbuf: 32KiB, rcvbuf: default, send_loop: true}\n"
                "costs: {clock_ghz: 3}\nname: \"2019\"");
  const Params& p = ex.base;
  CHECK(std::get<std::int64_t>(p.get("workload.message_size")) == 4096);
  CHECK(std::get<std::int64_t>(p.get("hv_sock.sndbuf")) == 32768);
  CHECK(std::get<std::string>(p.get("hv_sock.rcvbuf")) == "default");
  CHECK(std::get<bool>(p.get("hv_sock.send_loop")) == true);
  CHECK(std::get<double>(p.get("costs.clock_ghz")) == 3.0);
  CHECK(std::get<std::string>(p.get("name")) == "2019");
}

TEST_CASE("name defaults to the file's stem", "[experiment]")
{
  CHECK(load_experiment_text("seed: 1", "dir/fig3.yaml", {}, registry()).name == "fig3");
  CHECK(load_experiment_text("seed: 1", "dir/fig3.yaml", {}, registry()).base.text("name") == "fig3");
  CHECK(load_experiment_text("seed: 1", "dir/fig3.yaml", {}, registry()).file == "dir/fig3.yaml");
  CHECK(load_experiment_text("name: mine", "dir/fig3.yaml", {}, registry()).name == "mine");
  CHECK(load_experiment_text("seed: 1", "dir/fig3.yaml", {"name=cli"}, registry()).name == "cli");
}

TEST_CASE("costs come from the platform profile", "[experiment]")
{
  const Experiment ex = load_yaml("platform: hyperv-2019");
  const PlatformProfile* profile = find_profile("hyperv-2019");
  REQUIRE(profile != nullptr);
  for (const auto& [key, value] : profile->costs) {
    INFO(key);
    CHECK(ex.points[0].params.number("costs." + key) == value);
  }
  CHECK(ex.base.number("costs.clock_ghz") == 2.5);
}

TEST_CASE("explicit costs override the profile", "[experiment]")
{
  const Experiment ex = load_yaml("costs:\n  clock_ghz: 3.5\n  guest_signal_host: 4000", {"costs.host_dpc=123"});
  const Params& p = ex.points[0].params;
  CHECK(p.number("costs.clock_ghz") == 3.5);
  CHECK(p.number("costs.guest_signal_host") == 4000);
  CHECK(p.number("costs.host_dpc") == 123);
  CHECK(p.number("costs.guest_isr") == find_profile("hyperv-2019")->costs.at("guest_isr"));
}

TEST_CASE("each point of a platform sweep gets its own costs", "[experiment]")
{
  std::string list;
  for (const auto& p : platform_profiles())
    if (p.transport == "hv_sock")
      list += (list.empty() ? "" : ", ") + p.name;
  const Experiment ex = load_yaml("costs: {guest_isr: 7}\nsweep:\n  grid:\n    platform: [" + list + "]");
  REQUIRE(!ex.points.empty());
  for (const auto& point : ex.points) {
    const PlatformProfile* profile = find_profile(point.params.text("platform"));
    REQUIRE(profile != nullptr);
    CHECK(point.params.number("costs.clock_ghz") == profile->costs.at("clock_ghz"));
    CHECK(point.params.number("costs.guest_isr") == 7);
  }
  // Sweeping a cost itself.
  const Experiment swept = load_yaml("sweep:\n  grid:\n    costs.clock_ghz: [1, 2.5]");
  REQUIRE(swept.points.size() == 2);
  CHECK(swept.points[0].params.number("costs.clock_ghz") == 1.0);
  CHECK(swept.points[1].params.number("costs.clock_ghz") == 2.5);
  CHECK(swept.points[1].label == std::vector<std::pair<std::string, std::string>>{{"costs.clock_ghz", "2.5"}});
}

TEST_CASE("nested maps and dotted keys are the same paths", "[experiment]")
{
  const Experiment a =
      load_yaml("workload:\n  message_size: 4KiB\n  connections: 3\nsweep:\n  grid:\n    seed: [1, 2]");
  const Experiment b = load_yaml("workload.message_size: 4KiB\nworkload: {connections: 3}\nsweep.grid.seed: [1, 2]");
  CHECK(a.canonical == b.canonical);
  CHECK(b.points.size() == 2);
  CHECK(b.base.integer("workload.connections") == 3);
}

// ---------------------------------------------------------------------------
// Sweep expansion

TEST_CASE("grid: first key outermost, indices in order", "[experiment]")
{
  const Experiment ex = load_yaml("sweep:\n  grid:\n    workload.message_size: [4KiB, 1MB, 3]\n    seed: [1, 2]");
  CHECK(ex.grid_keys == std::vector<std::string>{"workload.message_size", "seed"});
  CHECK(labels(ex) == std::vector<std::string>{"workload.message_size=4KiB seed=1", "workload.message_size=4KiB seed=2",
                                               "workload.message_size=1MB seed=1", "workload.message_size=1MB seed=2",
                                               "workload.message_size=3 seed=1", "workload.message_size=3 seed=2"});
  for (std::size_t i = 0; i < ex.points.size(); ++i)
    CHECK(ex.points[i].index == i);
  CHECK(ex.points[2].params.integer("workload.message_size") == 1000000);
  CHECK(ex.points[3].params.integer("seed") == 2);
  CHECK(ex.points[5].params.integer("workload.message_size") == 3);
}

TEST_CASE("zip: iterated together, outermost", "[experiment]")
{
  const Experiment ex = load_yaml(
      "sweep:\n  grid:\n    seed: [1, 2]\n  zip:\n    hv_sock.sndbuf: [default, 64KiB]\n    iterations: [3, 4]");
  CHECK(ex.zip_keys == std::vector<std::string>{"hv_sock.sndbuf", "iterations"});
  CHECK(ex.grid_keys == std::vector<std::string>{"seed"});
  CHECK(labels(ex) == std::vector<std::string>{
                          "hv_sock.sndbuf=default iterations=3 seed=1", "hv_sock.sndbuf=default iterations=3 seed=2",
                          "hv_sock.sndbuf=64KiB iterations=4 seed=1", "hv_sock.sndbuf=64KiB iterations=4 seed=2"});
  CHECK(ex.points[3].params.integer("hv_sock.sndbuf") == 65536);
  CHECK(ex.points[3].params.integer("iterations") == 4);
  CHECK(ex.points[1].params.is_word("hv_sock.sndbuf", "default"));
}

TEST_CASE("point count is the product of the axes", "[experiment]")
{
  const Experiment ex = load_yaml(
      "sweep:\n  grid:\n    seed: [1, 2, 3]\n    workload.connections: [1, 2]\n    guest.vcpus: [2, 4, 8, 16]\n"
      "  zip:\n    iterations: [1, 2]\n    host.cpus: [4, 8]");
  CHECK(ex.points.size() == 2 * 3 * 2 * 4);
  CHECK(ex.points.back().index == 47);
  CHECK(labels(ex).back() == "iterations=2 host.cpus=8 seed=3 workload.connections=2 guest.vcpus=16");
  CHECK(labels(ex)[1] == "iterations=1 host.cpus=4 seed=1 workload.connections=1 guest.vcpus=4");
}

TEST_CASE("set option: replaces a grid axis with its value", "[experiment]")
{
  const std::string text = "seed: 9\nsweep:\n  grid:\n    workload.message_size: [4KiB, 1MB]\n    seed: [1, 2]";
  const Experiment ex = load_yaml(text, {"seed=5"});
  CHECK(ex.grid_keys == std::vector<std::string>{"workload.message_size"});
  CHECK(labels(ex) == std::vector<std::string>{"workload.message_size=4KiB", "workload.message_size=1MB"});
  for (const auto& p : ex.points)
    CHECK(p.params.integer("seed") == 5);
  CHECK(ex.base.integer("seed") == 5);
  // Without --set the base keeps the file's value and the axis stays.
  CHECK(load_yaml(text).base.integer("seed") == 9);
  CHECK(load_yaml(text).points.size() == 4);
}

TEST_CASE("set option: on a zip key removes it from the zip only", "[experiment]")
{
  const std::string text =
      "sweep:\n  grid:\n    seed: [1, 2]\n  zip:\n    hv_sock.sndbuf: [16KiB, 64KiB]\n    hv_sock.rcvbuf: [16KiB, "
      "64KiB]";
  const Experiment ex = load_yaml(text, {"hv_sock.sndbuf=32KiB"});
  CHECK(ex.zip_keys == std::vector<std::string>{"hv_sock.rcvbuf"});
  CHECK(labels(ex) == std::vector<std::string>{"hv_sock.rcvbuf=16KiB seed=1", "hv_sock.rcvbuf=16KiB seed=2",
                                               "hv_sock.rcvbuf=64KiB seed=1", "hv_sock.rcvbuf=64KiB seed=2"});
  for (const auto& p : ex.points)
    CHECK(p.params.integer("hv_sock.sndbuf") == 32768);
  // Both zip keys set: no zip left.
  const Experiment none = load_yaml(text, {"hv_sock.sndbuf=32KiB", "hv_sock.rcvbuf=default"});
  CHECK(none.zip_keys.empty());
  CHECK(none.points.size() == 2);
}

TEST_CASE("set option: sweep.grid.KEY adds or replaces a grid axis", "[experiment]")
{
  const std::string text = "sweep:\n  grid:\n    workload.message_size: [4KiB, 1MB]\n    seed: [1, 2]";
  const Experiment replaced = load_yaml(text, {"sweep.grid.workload.message_size=[16KiB, 32KiB, 64KiB]"});
  CHECK(replaced.grid_keys == std::vector<std::string>{"workload.message_size", "seed"});
  CHECK(replaced.points.size() == 6);
  CHECK(labels(replaced)[2] == "workload.message_size=32KiB seed=1");
  const Experiment added = load_yaml(text, {"sweep.grid.workload.connections=[1, 4]"});
  CHECK(added.grid_keys == std::vector<std::string>{"workload.message_size", "seed", "workload.connections"});
  CHECK(added.points.size() == 8);
  CHECK(labels(added)[1] == "workload.message_size=4KiB seed=1 workload.connections=4");
  // Without a sweep in the file.
  const Experiment fresh = load_yaml("seed: 1", {"sweep.grid.iterations=[1, 2, 3]"});
  CHECK(labels(fresh) == std::vector<std::string>{"iterations=1", "iterations=2", "iterations=3"});
  // A zip key moved to the grid.
  const Experiment moved =
      load_yaml("sweep:\n  zip:\n    seed: [1, 2]\n    iterations: [1, 2]", {"sweep.grid.seed=[5]"});
  CHECK(moved.zip_keys == std::vector<std::string>{"iterations"});
  CHECK(moved.grid_keys == std::vector<std::string>{"seed"});
  CHECK(labels(moved) == std::vector<std::string>{"iterations=1 seed=5", "iterations=2 seed=5"});
  // --set entries apply in order: a later plain value wins over the axis.
  CHECK(load_yaml("seed: 1", {"sweep.grid.seed=[1, 2]", "seed=3"}).points.size() == 1);
  CHECK(load_yaml("seed: 1", {"seed=3", "sweep.grid.seed=[1, 2]"}).points.size() == 2);
}

TEST_CASE("set option: sweep.zip.KEY replaces a zip list of the same length", "[experiment]")
{
  const Experiment ex =
      load_yaml("sweep:\n  zip:\n    seed: [1, 2]\n    iterations: [1, 2]", {"sweep.zip.seed=[7, 8]"});
  CHECK(labels(ex) == std::vector<std::string>{"seed=7 iterations=1", "seed=8 iterations=2"});
}

// ---------------------------------------------------------------------------
// Canonical text and its hash

TEST_CASE("virtio_vsock points: the preset gives every knob, each can be overridden alone", "[experiment]")
{
  const Experiment ex =
      load_yaml("platform: kvm-2019\ntransport: virtio_vsock\nvirtio_vsock:\n  preset: linux-5.4\n"
                "  credit_update: every_read\nsweep:\n  grid:\n    virtio_vsock.preset: [linux-4.19, linux-5.4]");
  REQUIRE(ex.points.size() == 2);
  const Params& old = ex.points[0].params;
  const Params& neu = ex.points[1].params;
  for (const auto& spec : registry().all()) {
    INFO(spec.path);
    CHECK(old.has(spec.path) == (scope_applies(spec.scope, "virtio_vsock")));
  }
  CHECK(old.integer("virtio_vsock.max_pkt_size") == 4096);
  CHECK(neu.integer("virtio_vsock.max_pkt_size") == 65536);
  CHECK(old.boolean("virtio_vsock.host_split") == false);
  CHECK(neu.boolean("virtio_vsock.host_split") == true);
  CHECK(neu.boolean("virtio_vsock.small_pkt_copy") == true);
  CHECK(neu.integer("virtio_vsock.vhost_weight_packets") == 256);
  CHECK(old.integer("virtio_vsock.vhost_weight_packets") == 0);
  // Set alone: the same value whatever the preset.
  CHECK(old.text("virtio_vsock.credit_update") == "every_read");
  CHECK(neu.text("virtio_vsock.credit_update") == "every_read");
  CHECK(old.integer("virtio_vsock.queue_size") == 128);
  CHECK(old.number("costs.virtio_guest_kick") > 0);
}

TEST_CASE("canonical text: sorted JSON of every base key and the sweep", "[experiment]")
{
  const Experiment ex = load_yaml("seed: 3\nsweep:\n  grid:\n    workload.message_size: [4KiB, 8KiB]\n  zip:\n    "
                                  "iterations: [1, 2]\n    seed: [5, 6]");
  const auto j = nlohmann::json::parse(ex.canonical);
  CHECK(j.dump() == ex.canonical); // nlohmann sorts object keys: the text is already in that form
  std::size_t in_scope = 0;
  for (const auto& spec : registry().all())
    in_scope += scope_applies(spec.scope, "hv_sock");
  CHECK(j["params"].size() == in_scope);
  CHECK(j["params"]["seed"] == 3);
  CHECK(j["params"]["workload.message_size"] == 65536);
  CHECK(j["params"]["name"] == "t");
  CHECK(j["sweep"]["grid"] == nlohmann::json::parse(R"([{"key":"workload.message_size","values":[4096,8192]}])"));
  CHECK(j["sweep"]["zip"] ==
        nlohmann::json::parse(R"([{"key":"iterations","values":[1,2]},{"key":"seed","values":[5,6]}])"));
}

TEST_CASE("config_sha256: stable, spelling-independent, changes with a value", "[experiment]")
{
  const std::string text = "workload:\n  message_size: 64KiB\nsweep:\n  grid:\n    seed: [1, 2]";
  const Experiment a = load_yaml(text);
  CHECK(a.config_sha256.size() == 64);
  CHECK(a.config_sha256.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(load_yaml(text).config_sha256 == a.config_sha256);
  CHECK(load_yaml("sweep:\n  grid:\n    seed: [1, 2]\nworkload: {message_size: 65536}").config_sha256 ==
        a.config_sha256);
  CHECK(load_yaml(text, {"workload.message_size=64 KiB"}).config_sha256 == a.config_sha256);
  CHECK(load_yaml("workload:\n  message_size: 32KiB\nsweep:\n  grid:\n    seed: [1, 2]").config_sha256 !=
        a.config_sha256);
  CHECK(load_yaml(text, {"costs.guest_isr=1001"}).config_sha256 != a.config_sha256);
  CHECK(load_yaml("workload:\n  message_size: 64KiB\nsweep:\n  grid:\n    seed: [1, 3]").config_sha256 !=
        a.config_sha256);
  CHECK(load_yaml("workload:\n  message_size: 64KiB\nsweep:\n  zip:\n    seed: [1, 2]").config_sha256 !=
        a.config_sha256);
}

TEST_CASE("config_sha256 is the SHA-256 of the canonical text", "[experiment]")
{
  const Experiment ex = load_yaml("seed: 1");
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(ex.canonical.data()), ex.canonical.size(), digest);
  std::string hex;
  for (unsigned char c : digest)
    hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15];
  CHECK(ex.config_sha256 == hex);
  CHECK(ex.canonical.rfind("{\"params\":{", 0) == 0);
}

// ---------------------------------------------------------------------------
// Files under tests/data: bad ones start with "# expect: LINE:COL: error: ...",
// good ones with "# points: N".

TEST_CASE("tests/data/bad files give their expected message", "[experiment]")
{
  const auto files = yaml_files("bad");
  REQUIRE(files.size() >= 5);
  for (const auto& f : files) {
    INFO(f.string());
    const std::string head = first_line(f);
    REQUIRE(head.rfind("# expect: ", 0) == 0);
    std::string got = "(no error)";
    try {
      load_experiment(f.string(), {}, registry());
    } catch (const InputError& e) {
      got = e.what();
    }
    CHECK(got == f.string() + ":" + head.substr(10));
  }
}

TEST_CASE("tests/data/good files load with their point count", "[experiment]")
{
  const auto files = yaml_files("good");
  REQUIRE(files.size() >= 3);
  for (const auto& f : files) {
    INFO(f.string());
    const std::string head = first_line(f);
    REQUIRE(head.rfind("# points: ", 0) == 0);
    const Experiment ex = load_experiment(f.string(), {}, registry());
    CHECK(ex.points.size() == std::stoul(head.substr(10)));
    CHECK(ex.file == f.string());
  }
}

// ---------------------------------------------------------------------------
// describe

TEST_CASE("describe: one block per parameter with type, default, allowed, doc", "[experiment][describe]")
{
  const std::string text = describe_text(registry(), "workload");
  CHECK(text.find("workload.message_size\n  type:    size (bytes)\n  default: 64KiB\n  allowed: 1B .. 1GiB\n  "
                  "bytes per send() call\n") != std::string::npos);
  CHECK(text.find("workload.connections") != std::string::npos);
  CHECK(text.find("hv_sock.") == std::string::npos);
  const std::string sndbuf = describe_text(registry(), "hv_sock.sndbuf");
  CHECK(sndbuf.find("allowed: 1B .. 1GiB, or default") != std::string::npos);
  CHECK(sndbuf.find("hv_sock.rcvbuf") == std::string::npos);
}

TEST_CASE("describe: costs show each platform's value", "[experiment][describe]")
{
  const std::string text = describe_text(registry(), "costs");
  CHECK(text.find("costs.clock_ghz\n  type:    number (GHz)\n  default: from the platform profile\n  allowed: 0.1 .. "
                  "10 GHz\n  firecracker-m6i: 2.9 GHz\n  hyperv-2019: 2.5 GHz\n") != std::string::npos);
  const std::string platforms = describe_text(registry(), "platforms");
  for (const auto& p : platform_profiles())
    CHECK(platforms.find(p.name + "\n  transport: " + p.transport + "\n") != std::string::npos);
  CHECK(platforms.find("costs.guest_signal_host") != std::string::npos);
}

TEST_CASE("describe: everything, and unknown topics", "[experiment][describe]")
{
  const std::string all = describe_text(registry(), "");
  for (const auto& spec : registry().all())
    CHECK(all.find(spec.path + "\n  type:") != std::string::npos);
  try {
    describe_text(registry(), "wrkload");
    FAIL("no error");
  } catch (const InputError& e) {
    auto topics = sections();
    topics.insert("platforms");
    topics.insert("metrics");
    topics.insert("search");
    CHECK(std::string(e.what()) == "describe 'wrkload': error: unknown topic (allowed: " + join(topics) + ")");
    CHECK(join(topics).find("costs, description, direction, firecracker_vsock, guest, host, hv_sock, iterations, "
                            "metrics, name, "
                            "platform, platforms, report, search, seed, sim, transport") != std::string::npos);
  }
}

TEST_CASE("describe metrics: every declared metric with its unit and how it is extrapolated", "[experiment][describe]")
{
  const std::string text = describe_text(registry(), "metrics");
  for (const MetricDoc& d : metric_docs())
    CHECK(text.find("\n" + d.name + "\n  unit: " + (d.unit.empty() ? "(none)" : d.unit) + "; extrapolated as: ") !=
          std::string::npos);
  CHECK(text.find("throughput_MBps\n  unit: MB/s; extrapolated as: bytes over a total\n") != std::string::npos);
  CHECK(text.find("syscalls_per_MB\n  unit: 1/MB; extrapolated as: per byte\n") != std::string::npos);
  const std::string md = describe_markdown(registry());
  CHECK(md.find("| `guest_cpu_percent` | % | per time | ") != std::string::npos);
}

TEST_CASE("describe: markdown tables per section", "[experiment][describe]")
{
  const std::string md = describe_markdown(registry());
  CHECK(md.rfind("# Parameters\n", 0) == 0);
  CHECK(md.find("\n## `workload.*`\n\n| key | type | default | allowed | meaning |\n") != std::string::npos);
  CHECK(md.find("| `workload.message_size` | size (bytes) | 64KiB | 1B .. 1GiB | bytes per send() call |\n") !=
        std::string::npos);
  CHECK(md.find("\n## `costs.*`\n") != std::string::npos);
  CHECK(md.find("| `costs.clock_ghz` | GHz | 0.1 .. 10 GHz | 2.9 | 2.5 |") != std::string::npos);
  CHECK(md.find("\n## Platforms\n") != std::string::npos);
  for (const auto& spec : registry().all())
    CHECK(md.find("| `" + spec.path + "` |") != std::string::npos);
}
