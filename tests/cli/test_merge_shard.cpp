// run --shard (given or from Slurm's array variables) and vsocksim merge.
#include "cli_support.hpp"

#include <cstdlib>
#include <string>
#include <vector>

using namespace cli_test;

TEST_CASE("cli: sharded runs merged give the unsharded result", "[cli][shard]")
{
  TempDir dir;
  const std::vector<std::string> base = std::vector<std::string>{"run", kTiny, "-q"} + kTinySets;
  for (const char* shard : {"0/2", "1/2"}) {
    const Run r = run_cli(dir, base + std::vector<std::string>{"--shard", shard, "--output",
                                                               dir.ws + "/shard" + std::string(1, shard[0])});
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
  }
  const Run whole = run_cli(dir, base + std::vector<std::string>{"--output", dir.ws + "/whole"});
  REQUIRE(whole.status == 0);
  const Run merged = run_cli(dir, {"merge", dir.ws + "/shard0", dir.ws + "/shard1", "--output", dir.ws + "/merged"});
  INFO("stderr: " << merged.err);
  REQUIRE(merged.status == 0);
  ojson a = parse_json(read_file(dir.ws + "/merged/result.json"));
  ojson b = parse_json(read_file(dir.ws + "/whole/result.json"));
  CHECK(parse_json(merged.out) == a);
  for (ojson* r : {&a, &b}) {
    (*r)["manifest"].erase("wall");
    (*r)["manifest"].erase("command_line");
  }
  CHECK(a.dump() == b.dump());

  // A missing shard, a shard given twice, and a directory that is not a result are bad input.
  const Run missing = run_cli(dir, {"merge", dir.ws + "/shard0"});
  CHECK(missing.status == 2);
  CHECK(missing.err.find("point 1 is in none of the directories") != std::string::npos);
  const Run twice = run_cli(dir, {"merge", dir.ws + "/shard0", dir.ws + "/shard0", dir.ws + "/shard1"});
  CHECK(twice.status == 2);
  CHECK(twice.err.find("point 0 is also in another directory") != std::string::npos);
  const Run notdir = run_cli(dir, {"merge", dir.ws});
  CHECK(notdir.status == 2);
  const Run badshard = run_cli(dir, base + std::vector<std::string>{"--shard", "2/2"});
  CHECK(badshard.status == 2);
  CHECK(badshard.err.find("--shard '2/2': error:") == 0);
}

TEST_CASE("cli: a shard compares its own points with the published figures", "[cli][shard]")
{
  // Point 1 alone: its row is compared with point 1's prediction, the other
  // row matches no point of the shard.
  TempDir dir;
  const std::vector<std::string> args =
      std::vector<std::string>{
          "run", kTiny, "-q", "--format", "json", "--set", "validation.measurements=tiny-measurements.csv"} +
      kTinySets;
  const Run shard = run_cli(dir, args + std::vector<std::string>{"--shard", "1/2"});
  INFO("stderr: " << shard.err);
  REQUIRE(shard.status == 0);
  const Run whole = run_cli(dir, args);
  REQUIRE(whole.status == 0);
  const ojson s = parse_json(shard.out), w = parse_json(whole.out);
  REQUIRE(s["validation"]["rows"].size() == 1);
  CHECK(s["validation"]["unmatched_rows"] == 1);
  CHECK(s["validation"]["rows"][0]["point"] == 1);
  CHECK(s["validation"]["rows"][0] == w["validation"]["rows"][1]);
}

TEST_CASE("cli: the shard comes from Slurm's array variables when --shard is not given", "[cli][shard]")
{
  TempDir dir;
  ::setenv("SLURM_ARRAY_TASK_ID", "4", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "3", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--format", "json"} + kTinySets);
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  ojson j = parse_json(r.out);
  CHECK(j["manifest"]["shard"] == "1/2");
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["index"] == 1);
}
