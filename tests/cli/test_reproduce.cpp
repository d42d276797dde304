// vsocksim reproduce: a fresh result (a JSON file or an --output directory)
// reruns identically from itself alone; an edited one is reported as
// different, naming the point and metric and the likely cause; a file that
// is not a result, or one too old to be rerun, exits 2; every result holds
// the platform profiles it used, whole.
#include "cli_support.hpp"

#include "app/experiment/sha256.hpp"

#include <string>
#include <vector>

using namespace cli_test;

namespace {

// The tiny run's JSON, written into the workspace as `name` (away from the
// experiment and its measurements, which reproduce must not need).
std::string tiny_result(const TempDir& dir, const std::string& name, const std::vector<std::string>& extra = {})
{
  const Run r = tiny_run(dir, std::vector<std::string>{"-q", "--format", "json"} + extra);
  write_file(dir.in_ws(name), r.out);
  return dir.in_ws(name);
}

} // namespace

TEST_CASE("cli: reproduce reruns a fresh result identically, from a JSON file or an --output directory",
          "[cli][reproduce]")
{
  TempDir dir;
  SECTION("a JSON file, with the predicted-against-measured section")
  {
    const std::string file = tiny_result(dir, "r.json", {"--set", "validation.measurements=tiny-measurements.csv"});
    REQUIRE(parse_json(read_file(file)).contains("validation"));
    const Run r = run_cli(dir, {"reproduce", file, "-q"});
    CHECK(r.status == 0);
    CHECK(r.out == "identical: 2 points, 103 metrics (the JSON text, manifest.wall aside)\n");
    CHECK(r.err.empty());
  }
  SECTION("an --output directory, the rerun written as run --output writes it")
  {
    REQUIRE(tiny_run(dir, {"-q", "--output", dir.in_ws("out")}).status == 0);
    const Run r = run_cli(dir, {"reproduce", dir.in_ws("out"), "-q", "--jobs", "2", "--output", dir.in_ws("again")});
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::StartsWith("identical: 2 points"));
    CHECK(names_in(dir.in_ws("again")) == names_in(dir.in_ws("out")));
    ojson a = parse_json(read_file(dir.in_ws("out/result.json")));
    ojson b = parse_json(read_file(dir.in_ws("again/result.json")));
    CHECK(b["manifest"]["command_line"] == a["manifest"]["command_line"]); // what made the result
    a["manifest"].erase("wall");
    b["manifest"].erase("wall");
    CHECK(a.dump(2) == b.dump(2));
    CHECK(read_file(dir.in_ws("again/point-0001.json")) == read_file(dir.in_ws("out/point-0001.json")));
  }
}

TEST_CASE("cli: reproduce of an edited result names the points and metrics that differ and why", "[cli][reproduce]")
{
  TempDir dir;
  const std::string file = tiny_result(dir, "r.json");
  ojson doc = parse_json(read_file(file));
  SECTION("a metric's mean")
  {
    const double mean = doc["points"][1]["metrics"]["throughput_MBps"]["mean"].get<double>();
    doc["points"][1]["metrics"]["throughput_MBps"]["mean"] = mean * 1.5;
    write_file(file, doc.dump(2));
    const Run r = run_cli(dir, {"reproduce", file, "-q"});
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::StartsWith("different: 1 of 2 point(s) differ\n"));
    CHECK_THAT(r.out, Catch::Contains("point 1 (hv_sock.send_loop=true):"));
    CHECK_THAT(r.out, !Catch::Contains("point 0 ("));
    CHECK_THAT(r.out, Catch::Contains("throughput_MBps: mean " + ojson(mean * 1.5).dump() + " -> " +
                                      ojson(mean).dump() + " (-33.3%)"));
    CHECK_THAT(r.out, Catch::Contains("likely cause: the same version, commit, SimGrid and libraries"));
  }
  SECTION("a cost in a point's params")
  {
    doc["points"][0]["params"]["costs.host_dpc"] = 6000.0;
    write_file(file, doc.dump(2));
    const Run r = run_cli(dir, {"reproduce", file, "-q"});
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("point 0 (hv_sock.send_loop=false):"));
    CHECK_THAT(r.out, Catch::Contains("throughput_MBps: mean "));
    CHECK_THAT(r.out, Catch::Contains("likely cause: the result was edited after its run") &&
                          Catch::Contains("point 0: costs.host_dpc is 6000 in its params, 2000 in "
                                          "manifest.experiment.config"));
  }
  SECTION("a value of the profile the result records")
  {
    doc["manifest"]["platforms"]["hyperv-2019"]["costs"]["host_dpc"] = 999.0;
    write_file(file, doc.dump(2));
    const Run r = run_cli(dir, {"reproduce", file, "-q"});
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::StartsWith("different: 0 of 2 point(s) differ\n"));
    CHECK_THAT(r.out, Catch::Contains("manifest.platforms.hyperv-2019.costs.host_dpc: 999.0 -> 1050.0"));
    CHECK_THAT(r.out, Catch::Contains("likely cause: this build's profile hyperv-2019 is not the one"));
  }
  SECTION("another version and commit")
  {
    doc["manifest"]["version"] = "0.0.1";
    doc["manifest"]["git_commit"] = "0123456";
    write_file(file, doc.dump(2));
    const Run r = run_cli(dir, {"reproduce", file, "-q"});
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::StartsWith("different: 0 of 2 point(s) differ\n"));
    CHECK_THAT(r.out, Catch::Contains("likely cause: another build made the result (result -> this build):\n"
                                      "  version: 0.0.1 -> ") &&
                          Catch::Contains("  git_commit: 0123456 -> "));
  }
}

TEST_CASE("cli: reproduce of a file that is not a result, or too old a result, exits 2 and writes nothing",
          "[cli][reproduce]")
{
  TempDir dir;
  const std::string out = dir.in_ws("out");
  SECTION("not JSON (a truncated result)")
  {
    const std::string text = read_file(tiny_result(dir, "r.json"));
    write_file(dir.in_ws("cut.json"), text.substr(0, text.size() / 2));
    const std::string msg = bad_input_message(run_cli(dir, {"reproduce", dir.in_ws("cut.json"), "--output", out}));
    CHECK_THAT(msg, Catch::Contains("cut.json: error: not valid JSON"));
  }
  SECTION("JSON that is no result")
  {
    write_file(dir.in_ws("x.json"), R"({"experiment": "x"})");
    const std::string msg = bad_input_message(run_cli(dir, {"reproduce", dir.in_ws("x.json"), "--output", out}));
    CHECK_THAT(msg, Catch::Contains("x.json: error: not a vsocksim result"));
  }
  SECTION("a result from before reproduce")
  {
    const std::string msg =
        bad_input_message(run_cli(dir, {"reproduce", kData + "/result-small.json", "--output", out}));
    CHECK_THAT(msg, Catch::Contains("result-small.json: error: a result too old to be reproduced") &&
                        Catch::Contains("it lacks manifest.experiment") && Catch::Contains("manifest.platforms"));
  }
  SECTION("--output the result's own directory")
  {
    REQUIRE(tiny_run(dir, {"-q", "--output", out}).status == 0);
    const auto before = snapshot(out);
    const std::string msg = bad_input_message(run_cli(dir, {"reproduce", out, "--output", out}));
    CHECK_THAT(msg, Catch::Contains("holds the result being reproduced"));
    CHECK(snapshot(out) == before);
    return;
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("cli: a result's manifest.platforms holds the profile its points use, with every cost", "[cli][reproduce]")
{
  TempDir dir;
  const ojson doc = parse_json(read_file(tiny_result(dir, "r.json")));
  const ojson& platforms = doc["manifest"]["platforms"];
  REQUIRE(platforms.size() == 1);
  REQUIRE(platforms.contains("hyperv-2019"));
  const ojson& p = platforms["hyperv-2019"];
  for (const char* key : {"origin", "sha256", "transport", "description", "hardware", "base", "costs", "implausible"})
    CHECK(p.contains(key));
  CHECK(p["transport"] == "hv_sock");
  std::vector<std::string> costs, params;
  for (const auto& [k, v] : p["costs"].items())
    costs.push_back("costs." + k);
  for (const auto& [k, v] : doc["points"][0]["params"].items())
    if (k.rfind("costs.", 0) == 0)
      params.push_back(k);
  CHECK(costs == params); // every cost the point resolves
  // The profile's own values, not the experiment's overrides (tiny.yaml sets its costs).
  CHECK(p["costs"]["host_signal_latency"] == 36370.0);
  CHECK(doc["points"][0]["params"]["costs.host_signal_latency"] == 25000.0);
  CHECK(doc["manifest"]["experiment"]["config"]["params"]["name"] == "cli-tiny");
}

TEST_CASE("cli: reproduce rebuilds a profile this build does not ship from manifest.platforms", "[cli][reproduce]")
{
  // A result made on a profile file: here the tiny result with its profile
  // renamed, origin and SHA-256 as a file's, everywhere the result names it.
  TempDir dir;
  const std::string file = tiny_result(dir, "r.json");
  ojson doc = parse_json(read_file(file));
  ojson profile = doc["manifest"]["platforms"]["hyperv-2019"];
  profile["origin"] = "/home/me/profiles/my-box.yaml";
  profile["sha256"] = std::string(64, 'c');
  profile["costs"]["host_dpc"] = 2100.0; // not the shipped profile's values
  doc["manifest"]["platforms"] = ojson{{"my-box", profile}};
  for (ojson& p : doc["points"])
    p["params"]["platform"] = "my-box";
  ojson& config = doc["manifest"]["experiment"]["config"];
  config["params"]["platform"] = "my-box";
  doc["manifest"]["config_sha256"] = vsim::app::sha256_hex(nlohmann::json::parse(config.dump()).dump());
  write_file(file, doc.dump(2));
  const Run r = run_cli(dir, {"reproduce", file, "-q", "--output", dir.in_ws("again")});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith("identical: 2 points"));
  const ojson again = parse_json(read_file(dir.in_ws("again/result.json")));
  CHECK(again["manifest"]["platforms"] == doc["manifest"]["platforms"]); // rebuilt from the result, as it was
}
