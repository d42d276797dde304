// run --output: the files it writes, into new, existing or bad directories,
// and the points a rerun reuses (resume after kill -9 or Ctrl-C, a changed
// sweep, another experiment's directory).
#include "cli_support.hpp"

#include <cstddef>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <signal.h>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

// A sweep long enough to interrupt: tiny.yaml's 2 points x 4 x 2 = 16 points of 2 iterations.
const std::vector<std::string> kSweep = {"--set", "workload.total_bytes=3MB",
                                         "--set", "iterations=2",
                                         "--set", "sweep.grid.workload.message_size=[1KiB,4KiB,16KiB,64KiB]",
                                         "--set", "sweep.grid.hv_sock.sndbuf=[default,64KiB]"};

} // namespace

TEST_CASE("cli: --output naming an existing regular file exits 2 and leaves the file unchanged", "[cli]")
{
  TempDir dir;
  const std::string file = dir.in_ws("results.txt");
  write_file(file, "not a directory\n");
  const auto before = snapshot(dir.ws);
  const std::string m =
      bad_input_message(run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--output", file} + kTinySets));
  CHECK(m == "--output '" + file + "': error: exists and is not a directory");
  CHECK(snapshot(dir.ws) == before);
}

TEST_CASE("cli: --output writes result.json, manifest.json and one point file per point", "[cli]")
{
  TempDir dir;
  const std::string out = dir.in_ws("results");
  const Run r = tiny_run(dir, {"--format", "json", "-q", "--output", out});
  REQUIRE(fs::is_directory(out));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) {
    names.insert(e.path().filename().string());
    CHECK(e.is_regular_file());
  }
  CHECK(names == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  for (const std::string& n : names)
    CHECK_FALSE(n.ends_with(".tmp"));

  const std::string result = read_file(out + "/result.json");
  CHECK(result == r.out);
  const ojson j = parse_json(result);
  CHECK(parse_json(read_file(out + "/manifest.json")) == j["manifest"]);
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("point " << i);
    ojson p = parse_json(read_file(out + "/point-000" + std::to_string(i) + ".json"));
    // The point as in the result, plus the code that made it, the
    // experiment and the hash of its parameters (the key it is reused by).
    for (const char* key : {"version", "git_commit"})
      CHECK(p["run"][key] == j["manifest"][key]);
    CHECK(p["run"]["experiment"] == "cli-tiny");
    CHECK(p["run"]["params_sha256"].get<std::string>().size() == 64);
    p.erase("run");
    CHECK(p == j["points"][i]);
  }
  // Nothing else appears next to the output directory.
  std::set<std::string> ws;
  for (const auto& e : fs::directory_iterator(dir.ws))
    ws.insert(e.path().filename().string());
  CHECK(ws == std::set<std::string>{"results"});
}

TEST_CASE("cli: --output into an existing directory writes the same files", "[cli]")
{
  TempDir dir;
  const std::string out = dir.in_ws("results");
  fs::create_directory(out);
  const Run r = tiny_run(dir, {"--format", "csv", "-q", "--output", out});
  CHECK_THAT(r.out, Catch::StartsWith("index,"));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(out))
    names.insert(e.path().filename().string());
  CHECK(names == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  const ojson j = parse_json(read_file(out + "/result.json"));
  CHECK(j["points"].size() == 2);
}

TEST_CASE("cli: --output below a regular file is bad usage (exit 2, before simulating)", "[cli]")
{
  TempDir dir;
  write_file(dir.in_ws("file.txt"), "x\n");
  const Run r =
      run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--output", dir.in_ws("file.txt/sub")} + kTinySets);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::StartsWith("--output '" + dir.in_ws("file.txt/sub") + "': error: "));
}

TEST_CASE("cli: a sweep killed or interrupted resumes into the uninterrupted result", "[cli][resume]")
{
  TempDir dir;
  const std::vector<std::string> base =
      std::vector<std::string>{"run", kTiny, "-q", "--jobs", "1", "--format", "json"} + kSweep;
  const Run whole = run_cli(dir, base + std::vector<std::string>{"--output", dir.ws + "/whole"});
  INFO("stderr: " << whole.err);
  REQUIRE(whole.status == 0);
  REQUIRE(point_files(dir.ws + "/whole") == 16);
  const ojson expected = without_run_facts(parse_json(whole.out));

  SECTION("kill -9 after the first finished point")
  {
    const std::string out = dir.ws + "/killed";
    const Run killed = run_cli(
        dir, base + std::vector<std::string>{"--output", out}, [&] { return point_files(out) >= 1; }, SIGKILL);
    REQUIRE(killed.status == 128 + SIGKILL);
    const std::size_t kept = point_files(out);
    CHECK(kept >= 1);
    CHECK(kept < 16);
    const Run resumed = run_cli(
        dir, std::vector<std::string>{"run", kTiny, "--jobs", "1", "--format", "json", "--output", out} + kSweep);
    INFO("stderr: " << resumed.err);
    REQUIRE(resumed.status == 0);
    CHECK(resumed.err.find(fmt::format("reusing {} finished point(s) of 16", kept)) != std::string::npos);
    CHECK(without_run_facts(parse_json(resumed.out)).dump() == expected.dump());
  }
  SECTION("Ctrl-C (SIGINT) stops cleanly, keeping finished points")
  {
    const std::string out = dir.ws + "/interrupted";
    const Run stopped = run_cli(
        dir, base + std::vector<std::string>{"--output", out}, [&] { return point_files(out) >= 1; }, SIGINT);
    INFO("stderr: " << stopped.err);
    REQUIRE(stopped.status == 130);
    CHECK(stopped.out.empty());
    CHECK(stopped.err.find("interrupted by SIGINT;") != std::string::npos);
    CHECK(point_files(out) >= 1);
    const Run resumed = run_cli(dir, base + std::vector<std::string>{"--output", out});
    REQUIRE(resumed.status == 0);
    CHECK(without_run_facts(parse_json(resumed.out)).dump() == expected.dump());
  }
  SECTION("a finished directory is reused whole; another configuration reuses nothing")
  {
    const Run again = run_cli(
        dir, std::vector<std::string>{"run", kTiny, "--format", "json", "--output", dir.ws + "/whole"} + kSweep);
    REQUIRE(again.status == 0);
    CHECK(again.err.find("reusing 16 finished point(s) of 16") != std::string::npos);
    CHECK(without_run_facts(parse_json(again.out)).dump() == expected.dump());
    const Run other = run_cli(dir, std::vector<std::string>{"run", kTiny, "--format", "json", "--output",
                                                            dir.ws + "/whole", "--set", "seed=99"} +
                                       kSweep);
    REQUIRE(other.status == 0);
    CHECK(other.err.find("reusing") == std::string::npos);
  }
}

TEST_CASE("cli: --output reuses every point of a changed sweep and refuses another experiment's directory",
          "[cli][resume]")
{
  TempDir dir;
  const std::string out = dir.ws + "/out";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", out}).status == 0);
  // A value added to the sweep: the two points already done are reused, at their new indices.
  const Run grown =
      run_cli(dir, {"run", kTiny, "--output", out, "--set", "sweep.grid.workload.message_size=[4KiB,16KiB]"});
  REQUIRE(grown.status == 0);
  CHECK(grown.err.find("reusing 2 finished point(s) of 4 from " + out) != std::string::npos);
  CHECK(point_files(out) == 4);
  // Back to the first sweep: everything reused, the extra point files removed.
  const Run back = run_cli(dir, {"run", kTiny, "--output", out, "--format", "json"});
  CHECK(back.err.find("reusing 2 finished point(s) of 2") != std::string::npos);
  CHECK(point_files(out) == 2);
  // Another experiment: refused, nothing changed; --force replaces.
  const std::string other = dir.ws + "/other.yaml";
  {
    std::string text = read_file(kTiny);
    text.replace(text.find("name: cli-tiny"), 14, "name: other-tiny");
    std::ofstream f(other);
    f << text;
  }
  const auto before = snapshot(out);
  CHECK(bad_input_message(run_cli(dir, {"run", other, "-q", "--output", out})) ==
        "--output '" + out +
            "': error: holds the results of experiment 'cli-tiny', not 'other-tiny' (allowed: an "
            "empty or new directory, one of experiment 'other-tiny', or --force to replace them)");
  CHECK(snapshot(out) == before);
  CHECK(run_cli(dir, {"run", other, "-q", "--output", out, "--force"}).status == 0);
  CHECK(parse_json(read_file(out + "/result.json"))["experiment"] == "other-tiny");
}

TEST_CASE("cli: --output creates its missing parent directories", "[cli][failed]")
{
  TempDir dir;
  const std::string out = dir.in_ws("no/such/dir");
  const Run r = tiny_run(dir, {"-q", "--format", "json", "--output", out});
  CHECK(names_in(out) == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  CHECK(read_file(out + "/result.json") == r.out);
  // A parent that is a regular file is still bad usage, before simulating.
  write_file(dir.in_ws("file.txt"), "x\n");
  const std::string below = dir.in_ws("file.txt/a/b");
  const std::string m =
      bad_input_message(run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--output", below} + kTinySets));
  CHECK(m == "--output '" + below + "': error: '" + dir.in_ws("file.txt") + "' is not a directory");
}
