// A profile that breaks a tie or has a cost outside its plausible range
// (issue 50: a fit standing in for a mechanism the model lacks) says so
// wherever its figures are read: the run's table footer, the manifest
// (ties, caveats), explain's note, compare and validate; a profile that keeps its ties says
// nothing of the kind.
#include "cli_support.hpp"

using namespace cli_test;

namespace {

std::string study(const std::string& platform)
{
  return "platform: " + platform +
         "\ntransport: virtio_vsock\niterations: 1\nseed: 3\ndirection: guest_to_host\n"
         "workload: {total_bytes: 2MB, message_size: 64KiB}\nvirtio_vsock: {preset: linux-4.19}\n"
         "sim: {run_length: full}\n";
}

} // namespace

TEST_CASE("cli: a profile that breaks its ties is named in the table, the manifest and explain", "[cli][caveats]")
{
  TempDir dir;
  write_file(dir.in_ws("k18.yaml"), study("kvm-2018"));
  write_file(dir.in_ws("k24.yaml"), study("kvm-2024"));

  const Run table = run_cli(dir, {"run", "k18.yaml", "-q"});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("platform kvm-2018 breaks the tie copy_hot (values differ: ") != std::string::npos);
  CHECK(table.out.find("breaks the tie copy_remote (") != std::string::npos);
  CHECK(table.out.find("virtio_host_guest_copy_bytes_per_cycle outside the situation's range 2.5 .. 16") !=
        std::string::npos);

  const Run js = run_cli(dir, {"run", "k18.yaml", "-q", "--format", "json"});
  REQUIRE(js.status == 0);
  const ojson j = parse_json(js.out);
  const ojson& prof = j["manifest"]["platforms"]["kvm-2018"];
  REQUIRE(prof["ties"].size() == 2);
  CHECK(prof["ties"][0]["name"] == "copy_hot");
  CHECK(prof["ties"][0]["kept"] == false);
  CHECK(prof["ties"][1]["name"] == "copy_remote");
  CHECK(prof["ties"][1]["kept"] == false);
  REQUIRE(prof["caveats"].size() == 2);
  CHECK(prof["caveats"][0].get<std::string>().rfind("breaks the tie copy_hot (", 0) == 0);

  write_file(dir.in_ws("k18.json"), js.out);
  const Run ex = run_cli(dir, {"explain", "k18.json"});
  REQUIRE(ex.status == 0);
  CHECK(ex.out.find("  note: the platform breaks the tie copy_hot (") != std::string::npos);
  CHECK(ex.out.find("what binds here may be what its fit made bind") != std::string::npos);
  // compare, where a change is read, says it once per profile.
  const Run cmp = run_cli(dir, {"compare", "k18.json", "k18.json"});
  REQUIRE(cmp.status == 0);
  const std::string note = "platform kvm-2018 breaks the tie copy_hot (";
  REQUIRE(cmp.out.find(note) != std::string::npos);
  CHECK(cmp.out.find(note) == cmp.out.rfind(note));
  // validate, after the study's effects.
  const Run val = run_cli(dir, {"validate", kSource + "/experiments/validation/vsock-mrgrx-2018.yaml", "-q", "--set",
                                "workload.total_bytes=4MB", "--set", "iterations=1"});
  REQUIRE(val.status == 0);
  CHECK(val.out.find(note) != std::string::npos);

  // kvm-2024 keeps both ties inside their ranges: no caveat anywhere.
  const Run clean = run_cli(dir, {"run", "k24.yaml", "-q", "--format", "json"});
  REQUIRE(clean.status == 0);
  const ojson c = parse_json(clean.out);
  const ojson& cp = c["manifest"]["platforms"]["kvm-2024"];
  REQUIRE(cp["ties"].size() == 2);
  CHECK(cp["ties"][0]["kept"] == true);
  CHECK(cp["ties"][1]["kept"] == true);
  CHECK(cp["caveats"].empty());
  write_file(dir.in_ws("k24.json"), clean.out);
  const Run cex = run_cli(dir, {"explain", "k24.json"});
  REQUIRE(cex.status == 0);
  CHECK(cex.out.find("breaks the tie") == std::string::npos);
  const Run ctable = run_cli(dir, {"run", "k24.yaml", "-q"});
  REQUIRE(ctable.status == 0);
  CHECK(ctable.out.find("breaks the tie") == std::string::npos);
  const Run ccmp = run_cli(dir, {"compare", "k24.json", "k24.json"});
  REQUIRE(ccmp.status == 0);
  CHECK(ccmp.out.find("breaks the tie") == std::string::npos);
}
