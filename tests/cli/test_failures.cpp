// A failing point never costs the others (issue 30): run and validate carry
// on, print and keep what ran, mark and list the failed points, exit 1; a
// rerun into --output simulates only the failed ones. Failures are injected
// with VSOCKSIM_TEST_FAIL_POINTS (test-only; app/run/runner.hpp). A simulated
// system that hangs as its kernel would is reported as such.
#include "cli_support.hpp"

#include <algorithm>
#include <cstddef>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

const std::string kInjected = "iteration 0: injected failure (VSOCKSIM_TEST_FAIL_POINTS)";

// tiny.yaml swept over three message sizes instead of the send loop: points
// 0 (4KiB), 1 (16KiB) and 2 (64KiB). Written under dir.root, not dir.ws.
std::string three_point_experiment(const TempDir& dir)
{
  std::string yaml = read_file(kTiny);
  const std::string axis = "hv_sock.send_loop: [false, true]";
  const std::size_t at = yaml.find(axis);
  if (at == std::string::npos)
    throw std::logic_error("test bug: tiny.yaml has no send_loop axis");
  yaml.replace(at, axis.size(), "workload.message_size: [4KiB, 16KiB, 64KiB]");
  const std::string file = dir.root + "/three.yaml";
  write_file(file, yaml);
  return file;
}

} // namespace

TEST_CASE("cli: a failing point costs no other: printed results, kept files, listed failure, exit 1", "[cli][failed]")
{
  TempDir dir;
  const std::string file = three_point_experiment(dir);
  const std::string out = dir.in_ws("a/b/results"); // a and a/b do not exist
  const std::vector<std::string> base = std::vector<std::string>{"run", file, "-q"} + kTinySets;
  const std::string failed_line = "vsocksim: internal error: point 1 (workload.message_size=16KiB): " + kInjected;

  ojson failing;
  {
    ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "1");
    const Run r = run_cli(dir, base + std::vector<std::string>{"--format", "json", "--output", out});
    INFO("stderr: " << r.err);
    CHECK(r.status == 1);
    // stderr: the failed point (index, swept values, message), then what
    // became of the others.
    const std::vector<std::string> err = lines_of(r.err);
    REQUIRE(err.size() == 2);
    CHECK(err[0] == failed_line);
    CHECK(err[1] == "vsocksim: 1 of 3 point(s) failed; the results of the other 2 are printed and kept in " + out +
                        ", where a rerun simulates only the failed point(s)");
    // stdout: the two points that ran, the failed one listed without figures.
    failing = parse_json(r.out);
    REQUIRE(failing["points"].size() == 2);
    CHECK(failing["points"][0]["index"] == 0);
    CHECK(failing["points"][1]["index"] == 2);
    for (const auto& p : failing["points"]) {
      CHECK(p["iterations"].size() == 2);
      CHECK(p["metrics"]["throughput_MBps"]["mean"].get<double>() > 0);
    }
    REQUIRE(failing["failed_points"].size() == 1);
    const ojson& f = failing["failed_points"][0];
    CHECK(f["index"] == 1);
    CHECK(f["label"]["workload.message_size"] == "16KiB");
    CHECK(f["params"]["workload.message_size"] == 16384);
    CHECK(f["failed"] == kInjected);
    CHECK_FALSE(f.contains("metrics"));
    CHECK_FALSE(f.contains("iterations"));
    // --output: created with its parents, the finished points kept, result
    // and manifest with what there is; nothing for the failed point.
    REQUIRE(fs::is_directory(out));
    CHECK(names_in(out) == std::set<std::string>{"manifest.json", "point-0000.json", "point-0002.json", "result.json"});
    CHECK(read_file(out + "/result.json") == r.out);

    // The same for any --jobs.
    const Run one = run_cli(dir, base + std::vector<std::string>{"--format", "json", "--jobs", "1"});
    CHECK(one.status == 1);
    CHECK(without_run_facts(parse_json(one.out)).dump() == without_run_facts(failing).dump());

    // The table marks the failed point's cells and names it after the tables.
    const Run table = run_cli(dir, base);
    CHECK(table.status == 1);
    CHECK(lines_of(table.err) == std::vector<std::string>{failed_line, "vsocksim: 1 of 3 point(s) failed; the "
                                                                       "results of the other 2 are printed"});
    std::size_t failed_rows = 0, figure_rows = 0;
    for (const std::string& line : lines_of(table.out)) {
      INFO(line);
      const std::string cell = line.substr(line.find_last_of(' ') + 1);
      if (starts_with(line, "16KiB ")) {
        ++failed_rows;
        CHECK(cell == "failed");
      }
      if (starts_with(line, "4KiB ") || starts_with(line, "64KiB ")) {
        ++figure_rows;
        CHECK(std::count(cell.begin(), cell.end(), '/') == 3); // min/max/avg/median
      }
    }
    CHECK(failed_rows == 2); // in each metric's table (report.metrics names two)
    CHECK(figure_rows == 4);
    CHECK_THAT(table.out,
               Catch::Contains("\nfailed: 1 of 3 point(s), no figures: point 1 (workload.message_size=16KiB)\n"));

    // CSV: the failed point's one row says `failed`, with no unit or figures.
    const Run csv = run_cli(dir, base + std::vector<std::string>{"--format", "csv"});
    CHECK(csv.status == 1);
    std::vector<std::string> point1;
    std::size_t others = 0;
    for (const std::string& line : lines_of(csv.out)) {
      if (starts_with(line, "1,"))
        point1.push_back(line);
      others += starts_with(line, "0,4KiB,") || starts_with(line, "2,64KiB,");
    }
    CHECK(point1 == std::vector<std::string>{"1,16KiB,failed,,,,,"});
    CHECK(others > 10);
  }

  // The rerun (no failure now) simulates only the missing point and ends
  // with the complete result, the one a run without failure gives.
  const std::string point0 = read_file(out + "/point-0000.json");
  const Run rerun =
      run_cli(dir, std::vector<std::string>{"run", file, "--format", "json", "--output", out} + kTinySets);
  INFO("stderr: " << rerun.err);
  REQUIRE(rerun.status == 0);
  CHECK_THAT(rerun.err, Catch::Contains("reusing 2 finished point(s) of 3 from " + out));
  CHECK(starts_with(lines_of(rerun.err).back(), "[2/2 simulations, 1/1 points] ")); // point 1's two iterations
  const ojson complete = parse_json(rerun.out);
  CHECK(complete["points"].size() == 3);
  CHECK_FALSE(complete.contains("failed_points"));
  CHECK(names_in(out) ==
        std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "point-0002.json", "result.json"});
  CHECK(read_file(out + "/point-0000.json") == point0);
  const Run fresh = run_cli(dir, base + std::vector<std::string>{"--format", "json"});
  REQUIRE(fresh.status == 0);
  CHECK(without_run_facts(complete).dump() == without_run_facts(parse_json(fresh.out)).dump());
  // The points that ran in the failing run are those of the complete result.
  CHECK(complete["points"][0] == failing["points"][0]);
  CHECK(complete["points"][2] == failing["points"][1]);
}

TEST_CASE("cli: show re-prints a result with failed points, marked", "[cli][failed][show]")
{
  TempDir dir;
  const std::string file = three_point_experiment(dir);
  {
    ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "0,2");
    const Run r = run_cli(dir, std::vector<std::string>{"run", file, "-q", "--output", "out"} + kTinySets);
    REQUIRE(r.status == 1);
    CHECK(lines_of(r.err).size() == 3); // two failed points, the summary
    const Run shown = run_cli(dir, {"show", "out"});
    INFO("stderr: " << shown.err);
    REQUIRE(shown.status == 0);
    // The table as the run printed it (same figures, same marks).
    CHECK(shown.out == r.out);
    CHECK_THAT(shown.out, Catch::Contains("no figures: point 0 (workload.message_size=4KiB), point 2 "
                                          "(workload.message_size=64KiB)\n"));
    const Run csv = run_cli(dir, {"show", "out", "--format", "csv"});
    REQUIRE(csv.status == 0);
    CHECK_THAT(csv.out, Catch::Contains("\n0,4KiB,failed,,,,,\n") && Catch::Contains("\n2,64KiB,failed,,,,,\n"));
    const Run json = run_cli(dir, {"show", "out", "--format", "json", "--metrics", "throughput_MBps"});
    REQUIRE(json.status == 0);
    const ojson j = parse_json(json.out);
    CHECK(j["points"].size() == 1);
    CHECK(j["points"][0]["iterations"][0].size() == 1);
    CHECK(j["failed_points"].size() == 2);
  }
}

TEST_CASE("cli: every point failing still writes the result and lists each failure", "[cli][failed]")
{
  TempDir dir;
  ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "0,1");
  const Run r =
      run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--format", "json", "--output", "out"} + kTinySets);
  CHECK(r.status == 1);
  const ojson j = parse_json(r.out);
  CHECK(j["points"].empty());
  CHECK(j["failed_points"].size() == 2);
  CHECK(names_in(dir.in_ws("out")) == std::set<std::string>{"manifest.json", "result.json"});
  const std::vector<std::string> err = lines_of(r.err);
  REQUIRE(err.size() == 3);
  CHECK(err[0] == "vsocksim: internal error: point 0 (hv_sock.send_loop=false): " + kInjected);
  CHECK(err[1] == "vsocksim: internal error: point 1 (hv_sock.send_loop=true): " + kInjected);
  CHECK(err[2] == "vsocksim: 2 of 2 point(s) failed; no point ran to the end, nothing kept in out, where a rerun "
                  "simulates only the failed point(s)");
}

TEST_CASE("cli: validate with a failing point reports the other rows and exits 1", "[cli][validate][failed]")
{
  TempDir dir;
  const Run good = run_cli(dir, {"validate", kValidate, "-q"});
  REQUIRE(good.status == 0);
  // Point 1 of the pool: tiny-loop's second point (hv_sock.send_loop=true),
  // which two published rows need.
  ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "1");
  const Run r = run_cli(dir, {"validate", kValidate, "-q", "--jobs", "2"});
  INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
  CHECK(r.status == 1);
  CHECK(lines_of(r.err) ==
        std::vector<std::string>{"vsocksim: internal error: " + kValidate +
                                     "/tiny-loop.yaml: point 1 (hv_sock.send_loop=true): " + kInjected,
                                 "vsocksim: 1 of 3 point(s) failed; their 2 row(s) were not compared, the others are "
                                 "printed"});
  // The rows of the points that ran, as in the run without failure (cell by
  // cell: the columns' widths may differ).
  std::set<std::vector<std::string>> good_rows;
  for (const std::string& line : lines_of(good.out))
    good_rows.insert(cells_of(line));
  std::size_t rows = 0;
  for (const std::string& line : lines_of(r.out))
    if (starts_with(line, "tiny-loop   ") || starts_with(line, "tiny-units   ")) {
      INFO(line);
      ++rows;
      CHECK(line.find("true") == std::string::npos); // no row of the failed point
      CHECK(good_rows.count(cells_of(line)) == 1);
    }
  CHECK(rows == 3);
  CHECK_THAT(r.out, Catch::Contains("\nnot compared, point 1 failed: hv_sock.send_loop=true: throughput_MBps\n"));
  CHECK_THAT(r.out, Catch::Contains("\noverall: 3 row(s) in 2 studies, mean absolute error "));
  CHECK_THAT(r.out, Catch::Contains("\noverall: 2 row(s) not compared: their points failed\n"));
  const Run md = run_cli(dir, {"validate", kValidate, "-q", "--markdown"});
  CHECK(md.status == 1);
  CHECK_THAT(md.out, Catch::Contains("\n- not compared, point 1 failed: hv_sock.send_loop=true: `throughput_MBps`\n"));
}

TEST_CASE("cli: a point whose simulated system hangs as its kernel would is reported so, not as an internal error",
          "[cli][failed][hang]")
{
  // virtio-vsock with one rx buffer (queue_size 2, no indirect descriptors):
  // Linux's rx_work never refills it (virtio_vsock_rx_fill only below half the
  // most ever held), so host-to-guest traffic stops after one packet. The
  // point with indirect descriptors (two buffers) runs.
  TempDir dir;
  const std::string file = dir.root + "/hang.yaml";
  write_file(file,
             "platform: kvm-2019\ntransport: virtio_vsock\ndirection: host_to_guest\niterations: 1\n"
             "workload: {total_bytes: 100kB, message_size: 4KiB}\nvirtio_vsock: {preset: linux-4.19, queue_size: 2}\n"
             "sweep:\n  grid: {virtio_vsock.indirect_desc: [true, false]}\n");
  const Run r = run_cli(dir, {"run", file, "-q", "--format", "json"});
  INFO("stderr: " << r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.err.find("point 1 (virtio_vsock.indirect_desc=false): iteration 0: the simulated system hangs, as the "
                   "kernel it models would: connection 0 stopped after 4096 of 100000 bytes") != std::string::npos);
  const ojson j = parse_json(r.out);
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["index"] == 0);
  REQUIRE(j["failed_points"].size() == 1);
  CHECK(j["failed_points"][0]["hang"] == true);
  CHECK(j["failed_points"][0]["failed"].get<std::string>().find("rx_buf_nr < rx_buf_max_nr / 2") != std::string::npos);
  const Run table = run_cli(dir, {"run", file, "-q"});
  CHECK(table.status == 1);
  CHECK(table.out.find("hangs") != std::string::npos);
}
