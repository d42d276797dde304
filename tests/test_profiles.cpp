// Platform profile files (docs/profiles.md; app/experiment/profile_file.hpp,
// app/experiment/platforms.hpp): the shipped ones, reading and writing,
// and the bad files of tests/data/bad/profiles.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/experiment/experiment.hpp"
#include "app/experiment/origin.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/sha256.hpp"

using namespace vsim;
using namespace vsim::app;
namespace fs = std::filesystem;

namespace {

const std::string kSource = VSIM_SOURCE_DIR;
const std::string kBad = "tests/data/bad/profiles/";

std::string slurp(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const PlatformProfile& shipped_base(const std::string& name, const std::string& at)
{
  if (const PlatformProfile* p = find_profile(name))
    return *p;
  throw InputError(at + "base: no such profile");
}

// The message loading a bad file gives (run from the source tree, so the
// file is named as the catalogue names it).
std::string error_of(const std::string& file)
{
  const fs::path cwd = fs::current_path();
  fs::current_path(kSource);
  std::string message;
  try {
    load_profile_file(kBad + file, load::in_file(kBad + file));
  } catch (const InputError& e) {
    message = e.what();
  }
  fs::current_path(cwd);
  return message;
}

} // namespace

TEST_CASE("profiles: the shipped files are compiled in byte for byte, each named by its file", "[profiles]")
{
  REQUIRE(shipped_profile_texts().size() == 5);
  for (const ShippedProfileText& t : shipped_profile_texts()) {
    INFO(t.path);
    CHECK(slurp(kSource + "/" + t.path) == t.text);
    const PlatformProfile* p = find_profile(fs::path(t.path).stem().string());
    REQUIRE(p != nullptr);
    CHECK(p->origin == "shipped");
    CHECK(p->sha256 == sha256_hex(t.text));
    CHECK(!p->hardware.empty());
    CHECK(!p->calibrated.empty());
  }
  CHECK(platform_profiles().front().name == "firecracker-m6i"); // in name order
  CHECK(find_profile("kvm-2018")->base == "kvm-2019");
}

TEST_CASE("profiles: a written profile reads back equal, and writing is idempotent", "[profiles]")
{
  for (const PlatformProfile& p : platform_profiles()) {
    INFO(p.name);
    PlatformProfile with_fit = p;
    FitReport f;
    f.experiment = "experiments/calibration/x.yaml";
    f.measurements = "m.csv";
    f.optimiser = "NLopt LN_BOBYQA";
    f.fitted = {"clock_ghz"};
    f.not_fitted = {{"latency_jitter", "no row moves it"}};
    f.folds = 5;
    f.evaluations = 17;
    f.mae_before = 12.5;
    f.mae_fit = 3.25;
    f.mae_cv = 4.0625;
    f.rows = {{"direction=guest_to_host, workload.message_size=4096", "throughput_Gbps", "fit", 1.5, 1.75, 1.625}};
    with_fit.fit = f;
    // An ensemble of two members of the clock (a cost of every transport).
    with_fit.ensemble = Ensemble{4.5, "made up", {{0.25, {{"clock_ghz", 2.4}}}, {0.75, {{"clock_ghz", 2.6}}}}};
    const std::string text = write_profile(with_fit);
    const PlatformProfile back = parse_profile(text, "back.yaml", shipped_base);
    CHECK(back.name == p.name);
    CHECK(back.transport == p.transport);
    CHECK(back.doc == p.doc);
    CHECK(back.costs == p.costs);
    CHECK(back.hardware == p.hardware);
    CHECK(back.calibrated == p.calibrated);
    for (const auto& [key, prov] : p.provenance) {
      INFO(key);
      CHECK(back.provenance.at(key).source == prov.source);
      CHECK(back.provenance.at(key).note == prov.note);
    }
    REQUIRE(back.fit.has_value());
    CHECK(back.fit->rows.size() == 1);
    CHECK(back.fit->rows[0].after == 1.625);
    CHECK(back.fit->mae_cv == 4.0625);
    CHECK(back.fit->mae_held_out == -1);
    CHECK(back.fit->not_fitted == f.not_fitted);
    REQUIRE(back.ensemble.has_value());
    CHECK(back.ensemble->noise_percent == 4.5);
    CHECK(back.ensemble->method == "made up");
    REQUIRE(back.ensemble->members.size() == 2);
    CHECK(back.ensemble->members[1].weight == 0.75);
    CHECK(back.ensemble->members[1].costs.at("clock_ghz") == 2.6);
    CHECK(write_profile(back) == text);
  }
}

TEST_CASE("profiles: a profile with a base is written with only the values it does not take from it", "[profiles]")
{
  const PlatformProfile& k18 = *find_profile("kvm-2018");
  const PlatformProfile& k19 = *find_profile("kvm-2019");
  const std::string text = write_profile(k18);
  CHECK(text.find("base: \"kvm-2019\"") != std::string::npos);
  std::size_t written = 0, from_base = 0;
  for (const auto& [key, prov] : k18.provenance) {
    INFO(key);
    const bool listed = text.find("\n  " + key + ": {") != std::string::npos;
    CHECK(listed == (prov.source != "base"));
    written += listed;
    from_base += !listed;
  }
  CHECK(written > 0);
  CHECK(from_base > 0);
  // Read back over the same base: every value, the base's included.
  CHECK(parse_profile(text, "back.yaml", shipped_base).costs == k18.costs);
  CHECK(k18.costs.at("virtio_guest_pkt") == k19.costs.at("virtio_guest_pkt"));
}

TEST_CASE("profiles: a value outside its plausible range needs a reason, and is then reported", "[profiles]")
{
  const std::string text = "name: odd-host\ntransport: hv_sock\nbase: hyperv-2019\ncosts:\n"
                           "  guest_isr: {value: 90000, source: given, reason: \"a slow nested guest\"}\n";
  const PlatformProfile p = parse_profile(text, "odd.yaml", shipped_base);
  CHECK(p.costs.at("guest_isr") == 90000);
  CHECK(p.provenance.at("guest_isr").reason == "a slow nested guest");
  const std::vector<ImplausibleCost> outside = implausible_costs(p);
  REQUIRE(outside.size() == 1);
  CHECK(outside[0].key == "guest_isr");
  // the rest comes from the base, with its provenance
  CHECK(p.costs.at("host_dpc") == find_profile("hyperv-2019")->costs.at("host_dpc"));
  CHECK(p.provenance.at("host_dpc").source == "base");
  CHECK(p.provenance.at("host_dpc").note == "hyperv-2019: held");
  // a cost given as a plain number is "given"
  const std::string plain = "name: q\ntransport: hv_sock\nbase: hyperv-2019\ncosts:\n  guest_isr: 1200\n";
  const PlatformProfile q = parse_profile(plain, "q.yaml", shipped_base);
  CHECK(q.provenance.at("guest_isr").source == "given");
  CHECK(q.costs.at("guest_isr") == 1200);
}

TEST_CASE("profiles: caveats name each broken tie and each cost outside its range, and nothing else", "[profiles]")
{
  // kvm-2018 breaks both copy ties (its vhost copies guest memory at 1.367
  // bytes/cycle); kvm-2024 keeps both.
  const std::vector<std::string> k18 = profile_caveats(*find_profile("kvm-2018"));
  REQUIRE(k18.size() == 2);
  CHECK(k18[0].rfind("breaks the tie copy_hot (values differ: guest_copy_bytes_per_cycle 19.41, ", 0) == 0);
  CHECK(k18[1].rfind("breaks the tie copy_remote (", 0) == 0);
  CHECK(profile_caveats(*find_profile("kvm-2024")).empty());
  // A cost outside its range (allowed with a reason) is one caveat.
  const std::string text = "name: odd-host\ntransport: hv_sock\nbase: hyperv-2019\ncosts:\n"
                           "  guest_isr: {value: 90000, source: given, reason: \"a slow nested guest\"}\n";
  const PlatformProfile p = parse_profile(text, "odd.yaml", shipped_base);
  const std::vector<std::string> odd = profile_caveats(p);
  const std::size_t base = profile_caveats(*find_profile("hyperv-2019")).size();
  REQUIRE(odd.size() == base + 1);
  CHECK(odd.back().rfind("has costs.guest_isr = 90000 cycles outside its plausible range ", 0) == 0);
}

TEST_CASE("profiles: each bad file of the catalogue is refused with file:line:column, key and what is allowed",
          "[profiles]")
{
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bad-name.yaml", "bad-name.yaml:1:7: error: name: 'my/host' is not a profile name (allowed: letters, digits, "
                        "'-', '_' and '.', at most 64, not ending in .yaml or .yml)"},
      {"base-other-transport.yaml", "base-other-transport.yaml:3:7: error: base: kvm-2019 is a profile of transport "
                                    "virtio_vsock, and this profile's transport is hv_sock (allowed: a profile of "
                                    "hv_sock)"},
      {"duplicate-key.yaml", "duplicate-key.yaml:6:3: error: costs.guest_isr: duplicate key (first given at line 5, "
                             "column 3)"},
      {"ensemble-one-member.yaml",
       "ensemble-one-member.yaml:8:5: error: ensemble.members: an ensemble needs at least two members"},
      {"ensemble-weights.yaml", "ensemble-weights.yaml:7:5: error: ensemble.members: the weights sum to 0.9, not 1"},
      {"ensemble-hv-cost.yaml", "ensemble-hv-cost.yaml:8:29: error: ensemble.members.costs.guest_isr: unknown cost "
                                "(allowed: costs of virtio_vsock)"},
      {"ensemble-implausible.yaml",
       "ensemble-implausible.yaml:8:58: error: ensemble.members.costs.virtio_zero_bytes_per_cycle: 1.5 is outside the "
       "plausible range 2 .. 32 bytes/cycle (allowed: a member inside the ranges)"},
      {"ensemble-different-costs.yaml",
       "ensemble-different-costs.yaml:7:5: error: ensemble.members: every member names the same costs (at least one)"},
      {"ensemble-unknown-key.yaml", "ensemble-unknown-key.yaml:6:3: error: ensemble.sigma: unknown key (allowed: "
                                    "noise_percent, method, members)"},
      {"flag-not-0-or-1.yaml", "flag-not-0-or-1.yaml:5:38: error: costs.virtio_host_init_on_alloc: 0.5 is not 0 or 1 "
                               "(allowed: 0 off, 1 on)"},
      {"hard-range.yaml", "hard-range.yaml:5:39: error: costs.guest_copy_bytes_per_cycle: -1 is out of range "
                          "(allowed: 0.01 .. 1000 bytes/cycle)"},
      {"implausible-no-reason.yaml",
       "implausible-no-reason.yaml:5:22: error: costs.guest_isr: 90000 is outside the plausible range 400 .. 3000 "
       "cycles (docs/cost-sources.md) (allowed: a value in the range, or {value: 90000, reason: \"why it is right "
       "here\"})"},
      {"invalid-yaml.yaml", "invalid-yaml.yaml:6:1: error: invalid YAML: end of map flow not found"},
      {"missing-name.yaml", "missing-name.yaml:1:1: error: name: missing (a profile file needs name, transport and "
                            "costs)"},
      {"missing-value.yaml", "missing-value.yaml:5:14: error: costs.guest_isr: missing `value` (allowed: a number, "
                             "or {value: NUMBER, source: WORD, note: TEXT})"},
      {"two-documents.yaml", "two-documents.yaml:7:1: error: expected one YAML document, found another one here"},
      {"unknown-base.yaml",
       "unknown-base.yaml:3:7: error: base: unknown profile hyperv-2018 (allowed: firecracker-m6i, hyperv-2019, "
       "kvm-2018, kvm-2019, kvm-2024, or a profile file PATH.yaml relative to this file)"},
      {"unknown-hardware.yaml", "unknown-hardware.yaml:6:3: error: hardware.ram: unknown key (allowed: cpu, cpu_ghz, "
                                "host_kernel, guest_kernel, hypervisor, vmm, vcpus, pinning, notes)"},
      {"unknown-key.yaml", "unknown-key.yaml:4:1: error: clock: unknown key (allowed: name, description, transport, "
                           "base, hardware, costs, calibrated, fit, ensemble)"},
      {"unknown-source.yaml", "unknown-source.yaml:5:36: error: costs.guest_isr.source: unknown source (allowed: "
                              "fitted, held, base, prior, given)"},
      {"unknown-transport.yaml", "unknown-transport.yaml:2:12: error: transport: unknown transport (allowed: "
                                 "hv_sock, virtio_vsock, firecracker_vsock)"},
      {"wrong-type.yaml", "wrong-type.yaml:5:14: error: costs.guest_isr: expected a number, got 'fast' (allowed: 0 "
                          ".. 10000000 cycles)"},
  };
  for (const auto& [file, message] : cases) {
    INFO(file);
    CHECK(error_of(file) == kBad + message);
  }
  // Long lists of the allowed costs: the start and that the list is there.
  CHECK_THAT(error_of("unknown-cost.yaml"),
             Catch::StartsWith(kBad + "unknown-cost.yaml:6:3: error: costs.guest_foo: unknown cost (allowed: "
                                      "clock_ghz, guest_user_per_call,") &&
                 Catch::Contains(", host_interrupt_latency)"));
  CHECK_THAT(error_of("other-transport.yaml"),
             Catch::StartsWith(kBad + "other-transport.yaml:5:3: error: costs.virtio_guest_kick: applies to transport "
                                      "virtio_vsock and firecracker_vsock only, and this profile's transport is "
                                      "hv_sock (allowed: "));
  CHECK_THAT(error_of("missing-no-base.yaml"),
             Catch::StartsWith(kBad + "missing-no-base.yaml:3:1: error: costs: no value for clock_ghz, ") &&
                 !Catch::Contains("guest_isr,") &&
                 Catch::EndsWith("(allowed: give each a value, or name a `base` profile to take them from)"));
  CHECK_THAT(error_of("unknown-span.yaml"),
             Catch::StartsWith(kBad + "unknown-span.yaml:8:5: error: calibrated.guest_to_host.message_size: unknown "
                                      "quantity (allowed: workload.message_size,"));
  CHECK_THAT(error_of("cycle-a.yaml"), Catch::Contains("error: base: the profile files name each other as base: "));
  // every file of the catalogue is covered here
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(kSource + "/" + kBad))
    files += e.path().extension() == ".yaml";
  CHECK(files == cases.size() + 6);
}

TEST_CASE("profiles: an experiment names a profile file relative to itself, and a copy of a shipped one is that one",
          "[profiles]")
{
  const fs::path dir = fs::temp_directory_path() / "vsim-test-profiles";
  fs::remove_all(dir);
  fs::create_directories(dir / "hosts");
  std::string text = slurp(kSource + "/experiments/platforms/kvm-2019.yaml");
  std::ofstream(dir / "hosts" / "copy.yaml") << text;
  text.replace(text.find("name: kvm-2019"), 14, "name: test-host");
  text.replace(text.find("virtio_guest_kick: {value: 5714"), 31, "virtio_guest_kick: {value: 4000");
  std::ofstream(dir / "hosts" / "mine.yaml") << text;
  const std::string exp = "transport: virtio_vsock\nplatform: hosts/mine.yaml\n";
  std::ofstream(dir / "e.yaml") << exp;
  const Experiment mine = load_experiment((dir / "e.yaml").string(), {}, registry());
  CHECK(mine.points.at(0).params.text("platform") == "test-host");
  CHECK(mine.points.at(0).params.number("costs.virtio_guest_kick") == 4000);
  const PlatformProfile* p = find_profile("test-host");
  REQUIRE(p != nullptr);
  CHECK(p->origin == (dir / "hosts" / "mine.yaml").lexically_normal().string());
  const Experiment copy = load_experiment((dir / "e.yaml").string(), {"platform=hosts/copy.yaml"}, registry());
  CHECK(copy.points.at(0).params.text("platform") == "kvm-2019");
  CHECK(copy.points.at(0).params.all() ==
        load_experiment((dir / "e.yaml").string(), {"platform=kvm-2019"}, registry()).points.at(0).params.all());
  // Another file of the same name with other values is refused.
  text.replace(text.find("virtio_guest_kick: {value: 4000"), 31, "virtio_guest_kick: {value: 4100");
  std::ofstream(dir / "hosts" / "other.yaml") << text;
  CHECK_THROWS_WITH(load_experiment((dir / "e.yaml").string(), {"platform=hosts/other.yaml"}, registry()),
                    Catch::Contains("error: platform: two different profiles are named test-host"));
  CHECK_THROWS_WITH(load_experiment((dir / "e.yaml").string(), {"platform=hosts/none.yaml"}, registry()),
                    Catch::Contains("--set 'platform=hosts/none.yaml': error: platform: cannot read the profile file"));
  fs::remove_all(dir);
}

TEST_CASE("profiles: a cost the file lacks is written back only when it has moved from its declared off", "[profiles]")
{
  // kvm-2019's file predates the tick costs: the reader supplies their
  // declared "off".
  PlatformProfile p = *find_profile("kvm-2019");
  REQUIRE(p.costs.count("guest_tick_hz") == 1);
  REQUIRE(p.provenance.at("guest_tick_hz").implicit);
  const std::string text = write_profile(p);
  CHECK(text.find("\n  guest_tick_hz: {") == std::string::npos);
  CHECK(text.find("\n  virtio_guest_pkt: {") != std::string::npos);
  CHECK(parse_profile(text, "back.yaml", shipped_base).costs == p.costs);
  // Moved (as a fit may move it): written, and read back as written.
  p.costs["guest_tick_hz"] = 250;
  const std::string moved = write_profile(p);
  CHECK(moved.find("\n  guest_tick_hz: {value: 250") != std::string::npos);
  const PlatformProfile back = parse_profile(moved, "back.yaml", shipped_base);
  CHECK(back.costs.at("guest_tick_hz") == 250);
  CHECK_FALSE(back.provenance.at("guest_tick_hz").implicit);
}
