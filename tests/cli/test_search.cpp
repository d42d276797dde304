// vsocksim search through the command line: the front in each format, the
// --output directory as a normal result (show, reproduce), resuming after
// kill -9, the same result for any --jobs, and the bad search sections of
// tests/data/bad/search (exit 2 with their expected line, nothing written).
#include "cli_support.hpp"

#include <algorithm>
#include <csignal>
#include <sstream>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

const std::string kSearchYaml = R"(name: cli-search
platform: hyperv-2019
transport: hv_sock
seed: 7
iterations: 2
workload:
  message_size: 16KiB
  total_bytes: 200kB
search:
  space:
    hv_sock.sndbuf: {from: 16KiB, to: 1MiB, scale: log2}
    hv_sock.rcvbuf: [default, 64KiB, 256KiB]
    hv_sock.send_loop: [false, true]
  objectives:
    - max: throughput_MBps
    - min: (host_cpu_percent+guest_cpu_percent)/throughput_MBps
    - min: memory_bytes_per_connection
  constraints:
    - memory_bytes_per_connection <= 400KiB
  budget: 16
  method: nsga2
)";

// The JSON of a search without what differs between two runs of it: the
// manifest (wall clock, command line) and which points were read back.
ojson without_facts(ojson j)
{
  j.erase("manifest");
  j["search"].erase("simulated");
  j["search"].erase("reused");
  for (ojson& e : j["search"]["evaluated"])
    e.erase("reused");
  return j;
}

} // namespace

TEST_CASE("cli: search prints the front (table, csv, json) and keeps every point as a normal result", "[cli][search]")
{
  TempDir dir;
  const std::string file = dir.in_ws("s.yaml");
  write_file(file, kSearchYaml);
  const std::string out = dir.in_ws("out");
  const Run table = run_cli(dir, {"search", file, "--jobs", "2", "--output", out});
  INFO("stderr: " << table.err);
  REQUIRE(table.status == 0);
  CHECK(starts_with(table.out, "Pareto front of "));
  CHECK(table.out.find("NSGA-II (pagmo2), seed 7") != std::string::npos);
  CHECK(table.out.find("Sensitivity") != std::string::npos);
  // Fitted to a terminal (issue 51, item 4): the knobs' common prefix said
  // once, a long objective named in a legend, how the constraint cuts the
  // space per knob, only the knobs that vary on the front as columns.
  CHECK(table.out.find("knobs: hv_sock.* (the prefix left out below)") != std::string::npos);
  CHECK(table.out.find("objective 2: min (host_cpu_percent+guest_cpu_percent)/throughput_MBps") != std::string::npos);
  CHECK(table.out.find("constraints memory_bytes_per_connection <= 400KiB: 16 of the 16 point(s) evaluated meet "
                       "them") != std::string::npos);
  CHECK(table.out.find("of the 42 combination(s) (the whole space) resolved before simulating") != std::string::npos);
  CHECK(table.out.find("\nsndbuf   ") != std::string::npos);
  CHECK(table.out.find("\nsend_loop   all 2   ") != std::string::npos);
  CHECK(table.out.find("hv_sock.sndbuf") == std::string::npos);
  std::istringstream lines(table.out);
  for (std::string line; std::getline(lines, line);)
    CHECK(line.size() <= 140);
  // Figures from 100 up are whole numbers (memory per connection: 200704, not 2.007e+05).
  CHECK(table.out.find("e+0") == std::string::npos);
  CHECK(table.err.find("search: ") != std::string::npos); // progress
  CHECK(point_files(out) == 16);
  // Three objectives: a figure per pair of them.
  for (const char* f : {"result.json", "manifest.json", "search.json", "search-objectives-1-2.svg",
                        "search-objectives-1-3.png", "search-objectives-2-3.svg"})
    CHECK(names_in(out).count(f) == 1);
  const Run json = run_cli(dir, {"search", file, "--jobs", "2", "--output", out, "-q", "--format", "json"});
  REQUIRE(json.status == 0);
  CHECK(json.err.empty());
  const ojson j = parse_json(json.out);
  CHECK(j["search"]["evaluations"] == 16);
  CHECK(j["search"]["reused"] == 16); // every point read back from --output
  CHECK(j["search"]["method"] == "nsga2");
  CHECK(j["search"]["seed"] == 7);
  REQUIRE(j["front"].size() >= 1);
  for (const ojson& p : j["front"]) {
    CHECK(p.contains("params"));
    CHECK(p.contains("effective"));
    CHECK(p["metrics"]["memory_bytes_per_connection"]["max"].get<double>() <= 400 * 1024);
  }
  CHECK(j["search"]["sensitivity"].size() == 3 * 3);
  const Run csv = run_cli(dir, {"search", file, "--output", out, "-q", "--format", "csv"});
  REQUIRE(csv.status == 0);
  CHECK(lines_of(csv.out).size() == j["front"].size() + 1);
  // The directory is a normal result: show reads it, reproduce reruns it.
  const Run show = run_cli(dir, {"show", out});
  CHECK(show.status == 0);
  const Run again = run_cli(dir, {"reproduce", out, "-q", "--jobs", "2"});
  INFO("reproduce: " << again.out << again.err);
  CHECK(again.status == 0);
  CHECK(starts_with(again.out, "identical: 16 points"));
}

TEST_CASE("cli: search gives the same result for any --jobs and resumes after kill -9", "[cli][search]")
{
  TempDir dir;
  const std::string file = dir.in_ws("s.yaml");
  write_file(file, kSearchYaml);
  const Run one = run_cli(dir, {"search", file, "-q", "--format", "json", "--jobs", "1"});
  REQUIRE(one.status == 0);
  const Run two = run_cli(dir, {"search", file, "-q", "--format", "json", "--jobs", "2"});
  REQUIRE(two.status == 0);
  CHECK(without_facts(parse_json(one.out)).dump() == without_facts(parse_json(two.out)).dump());
  const std::string out = dir.in_ws("killed");
  const Run killed = run_cli(
      dir, {"search", file, "-q", "--jobs", "1", "--output", out}, [&] { return point_files(out) >= 3; }, SIGKILL);
  REQUIRE(killed.status == 128 + SIGKILL);
  const std::size_t kept = point_files(out);
  CHECK(kept >= 3);
  CHECK(kept < 16);
  const Run resumed = run_cli(dir, {"search", file, "-q", "--format", "json", "--jobs", "2", "--output", out});
  INFO("stderr: " << resumed.err);
  REQUIRE(resumed.status == 0);
  const ojson r = parse_json(resumed.out);
  CHECK(r["search"]["reused"].get<std::size_t>() >= kept);
  CHECK(without_facts(r).dump() == without_facts(parse_json(one.out)).dump());
}

TEST_CASE("cli: search.rank ranks by the ensemble's members: their median, or each objective's worse decile",
          "[cli][search][ensemble]")
{
  // kvm-2024 has an ensemble of 16 members; each point also runs them.
  const std::string yaml = R"(name: cli-search-rank
platform: kvm-2024
transport: virtio_vsock
seed: 3
iterations: 1
workload:
  total_bytes: 1MB
search:
  space:
    workload.message_size: [4KiB, 64KiB]
  objectives:
    - max: throughput_MBps
    - min: guest_cpu_percent
)";
  TempDir dir;
  for (const std::string rank : {"central", "median", "pessimistic"}) {
    INFO("search.rank: " << rank);
    const std::string file = dir.in_ws(rank + ".yaml");
    write_file(file, yaml + "  rank: " + rank + "\n");
    const Run r = run_cli(dir, {"search", file, "-q", "--ensemble", "--format", "json"});
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
    const ojson j = parse_json(r.out);
    CHECK(j["search"]["rank"] == rank);
    const ojson& evaluated = j["search"]["evaluated"];
    REQUIRE(evaluated.size() == 2);
    REQUIRE(j["front"].size() >= 1);
    for (const ojson& p : j["front"]) {
      const ojson& objectives = evaluated.at(p["index"].get<std::size_t>())["objectives"];
      const ojson& thr = p["metrics"]["throughput_MBps"];
      const ojson& cpu = p["metrics"]["guest_cpu_percent"];
      REQUIRE(thr["ensemble"]["members"] == 16);
      // The members disagree, so each rank gives a figure of its own.
      CHECK(thr["ensemble"]["p10"].get<double>() < thr["ensemble"]["p50"].get<double>());
      CHECK(cpu["ensemble"]["p50"].get<double>() < cpu["ensemble"]["p90"].get<double>());
      const double t = objectives[0]["mean"].get<double>(), c = objectives[1]["mean"].get<double>();
      if (rank == "central") {
        CHECK(t == thr["mean"].get<double>());
        CHECK(c == cpu["mean"].get<double>());
      } else if (rank == "median") {
        CHECK(t == thr["ensemble"]["p50"].get<double>());
        CHECK(c == cpu["ensemble"]["p50"].get<double>());
      } else { // the worse decile: a max's p10, a min's p90
        CHECK(t == thr["ensemble"]["p10"].get<double>());
        CHECK(c == cpu["ensemble"]["p90"].get<double>());
      }
    }
  }
  // Without the members run there is nothing to rank by: refused up front.
  const std::string file = dir.in_ws("pessimistic.yaml");
  const Run plain = run_cli(dir, {"search", file, "-q", "--output", dir.in_ws("o")});
  CHECK(bad_input_message(plain) ==
        file + ":" + std::to_string(std::count(yaml.begin(), yaml.end(), '\n') + 1) +
            ":9: error: search.rank: ranking by the members ('pessimistic') needs them run (allowed: central, or "
            "sim.ensemble: true (`vsocksim search --ensemble`) with a profile that has an ensemble)");
  CHECK(names_in(dir.ws).count("o") == 0);
}

TEST_CASE("cli: run refuses a search file and search a file without one", "[cli][search]")
{
  TempDir dir;
  const std::string file = dir.in_ws("s.yaml");
  write_file(file, kSearchYaml);
  const Run run = run_cli(dir, {"run", file, "-q"});
  CHECK(bad_input_message(run) == file + ":" + where(kSearchYaml, "search:") +
                                      ": error: search: this experiment is a search: `vsocksim search " + file +
                                      "` runs it (allowed: run on an experiment without search:)");
  const Run plain = run_cli(dir, std::vector<std::string>{"search", kTiny} + kTinySets);
  CHECK(starts_with(bad_input_message(plain), kTiny + ": error: search: the experiment has no search section"));
  const Run zero = run_cli(dir, {"search", file, "--budget", "0", "--output", dir.in_ws("o")});
  CHECK(bad_input_message(zero) ==
        "--budget 0: error: a budget of 0 simulates no point (allowed: 1 .. 100000 simulated points)");
  CHECK(names_in(dir.ws).count("o") == 0);
}

TEST_CASE("cli: every bad search section of tests/data/bad/search exits 2 with its expected line, nothing written",
          "[cli][search][catalogue]")
{
  TempDir dir;
  const std::string bad = kSource + "/tests/data/bad/search";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(bad))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 3);
  for (const std::string& f : files) {
    INFO(f);
    const std::string text = read_file(f);
    const std::string head = text.substr(0, text.find('\n'));
    REQUIRE(starts_with(head, "# expect: "));
    const std::string expected = f + ":" + head.substr(10);
    const Run searched = run_cli(dir, {"search", f, "--output", dir.in_ws("out")});
    CHECK(bad_input_message(searched) == expected);
    CHECK(names_in(dir.ws).count("out") == 0);
    const Run checked = run_cli(dir, {"check", f});
    CHECK(bad_input_message(checked) == expected);
  }
}
