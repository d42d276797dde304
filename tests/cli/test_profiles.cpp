// Profile files on the command line (docs/profiles.md): a study on a
// profile file, `describe platforms FILE`, a bad profile file.
#include "cli_support.hpp"

using namespace cli_test;

namespace {

const std::string kStudy = "transport: hv_sock\niterations: 2\nseed: 5\nworkload: {total_bytes: 200kB}\n"
                           "sweep:\n  grid:\n    workload.message_size: [4KiB, 64KiB]\n";

} // namespace

TEST_CASE("cli: a study on a profile file gives the figures of the same study on the shipped profile", "[cli]")
{
  TempDir dir;
  std::string profile = read_file(kSource + "/experiments/platforms/hyperv-2019.yaml");
  profile.replace(profile.find("name: hyperv-2019"), 17, "name: my-hyperv");
  fs::create_directories(dir.in_ws("hosts"));
  write_file(dir.in_ws("hosts/my-hyperv.yaml"), profile);
  write_file(dir.in_ws("file.yaml"), "platform: hosts/my-hyperv.yaml\n" + kStudy);
  write_file(dir.in_ws("shipped.yaml"), "platform: hyperv-2019\n" + kStudy);
  const Run a = run_cli(dir, {"run", "file.yaml", "--format", "json", "-q"});
  const Run b = run_cli(dir, {"run", "shipped.yaml", "--format", "json", "-q"});
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  const ojson ja = ojson::parse(a.out), jb = ojson::parse(b.out);
  REQUIRE(ja["points"].size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    INFO(i);
    CHECK(ja["points"][i]["params"]["platform"] == "my-hyperv");
    CHECK(jb["points"][i]["params"]["platform"] == "hyperv-2019");
    CHECK(ja["points"][i]["metrics"] == jb["points"][i]["metrics"]);
    ojson pa = ja["points"][i]["params"], pb = jb["points"][i]["params"];
    for (const char* k : {"platform", "name"}) {
      pa.erase(k);
      pb.erase(k);
    }
    CHECK(pa == pb);
  }
}

TEST_CASE("cli: describe platforms FILE shows a profile file against the plausible ranges, and a bad one exits 2",
          "[cli]")
{
  TempDir dir;
  write_file(dir.in_ws("odd.yaml"), "name: odd\ntransport: hv_sock\nbase: hyperv-2019\nhardware: {cpu: Xeon 6230}\n"
                                    "costs:\n  guest_isr: {value: 90000, reason: \"nested guest\"}\n");
  const Run r = run_cli(dir, {"describe", "platforms", "odd.yaml"});
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith("odd\n  transport: hv_sock\n"));
  CHECK_THAT(r.out, Catch::Contains("  file: odd.yaml, sha256 ") && Catch::Contains("  base: hyperv-2019\n") &&
                        Catch::Contains("  cpu: Xeon 6230\n"));
  CHECK_THAT(r.out, Catch::Contains("costs.guest_isr") && Catch::Contains("90000 cycles") &&
                        Catch::Contains("400 .. 3000 cycles") && Catch::Contains("given  OUTSIDE\n"));
  CHECK_THAT(r.out, Catch::Contains("  1 value(s) outside the plausible range") &&
                        Catch::Contains("      reason: nested guest\n"));
  CHECK_THAT(r.out, Catch::Contains("base (hyperv-2019: fitted)"));
  write_file(dir.in_ws("bad.yaml"), "name: bad\ntransport: hv_sock\nbase: hyperv-2019\ncosts:\n  guest_isr: 90000\n");
  const Run bad = run_cli(dir, {"describe", "platforms", "bad.yaml"});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK_THAT(bad.err, Catch::StartsWith("bad.yaml:5:14: error: costs.guest_isr: 90000 is outside the plausible range"));
  write_file(dir.in_ws("e.yaml"), "platform: bad.yaml\n");
  const Run check = run_cli(dir, {"check", "e.yaml"});
  CHECK(check.status == 2);
  CHECK_THAT(check.err, Catch::StartsWith("bad.yaml:5:14: error: costs.guest_isr:"));
}
