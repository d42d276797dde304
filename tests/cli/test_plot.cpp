// vsocksim plot: the figures of a result (SVG, PNG, the gnuplot script and
// its data), the scales, --metrics, units, determinism. (plot --timeline:
// test_trace.cpp; validate --plot: test_validate.cpp.)
#include "cli_support.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace cli_test;

namespace {

// A result as `run --format json` writes it, made by hand for the plot
// tests: experiment "hand", a point per row with its swept values and the
// means of its metrics (min and max 5% around the mean, two iterations).
struct Swept {
  std::string key;
  ojson value;      // in params
  std::string text; // in the label
};
struct HandPoint {
  std::vector<Swept> swept;
  std::map<std::string, double> means;
};

std::string hand_result(const TempDir& dir, const std::string& file, const std::string& description,
                        const std::string& report_metrics, const std::vector<HandPoint>& points)
{
  ojson r;
  r["experiment"] = "hand";
  r["points"] = ojson::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    ojson p;
    p["index"] = i;
    p["params"] = {{"description", description}, {"iterations", 2}};
    if (!report_metrics.empty())
      p["params"]["report.metrics"] = report_metrics;
    p["label"] = ojson::object();
    for (const Swept& s : points[i].swept) {
      p["params"][s.key] = s.value;
      p["label"][s.key] = s.text;
    }
    p["metrics"] = ojson::object();
    for (const auto& [m, mean] : points[i].means)
      p["metrics"][m] = {{"min", mean * 0.95}, {"max", mean * 1.05}, {"mean", mean}, {"median", mean}};
    r["points"].push_back(p);
  }
  write_file(dir.in_ws(file), r.dump(1));
  return file;
}

// hvsock-sndbuf-2019's shape: 128 B to 64 KiB, guest to host (64 KiB
// SO_SNDBUF) 114 to 1609 MB/s, host to guest 71 to 509 MB/s: 22.7x in all.
std::string wide_sweep(const TempDir& dir, const std::string& file = "wide.json")
{
  const std::vector<std::pair<std::int64_t, std::string>> sizes = {
      {128, "128"}, {1024, "1KiB"}, {4096, "4KiB"}, {65536, "64KiB"}};
  const std::array<std::array<double, 4>, 2> mbps = {{{114, 684, 1154, 1609}, {71, 298, 447, 509}}};
  const std::array<std::array<double, 4>, 2> guest = {{{100, 98, 60, 40}, {95, 90, 70, 50}}};
  const std::array<std::array<double, 4>, 2> host = {{{20, 30, 25, 15}, {60, 55, 40, 30}}};
  const std::array<std::array<double, 4>, 2> sleeps = {{{0, 3, 2, 1}, {5, 4, 3, 2}}};
  std::vector<HandPoint> points;
  for (std::size_t d = 0; d < 2; ++d)
    for (std::size_t k = 0; k < sizes.size(); ++k)
      points.push_back({{{"direction", d ? "host_to_guest" : "guest_to_host", d ? "host_to_guest" : "guest_to_host"},
                         {"workload.message_size", sizes[k].first, sizes[k].second}},
                        {{"throughput_MBps", mbps[d][k]},
                         {"guest_cpu_percent", guest[d][k]},
                         {"host_cpu_percent", host[d][k]},
                         {"writer_sys_seconds", 1.0 / static_cast<double>(k + 1)},
                         {"copies_per_MB", 1e6 / static_cast<double>(sizes[k].first)},
                         {"reader_sleeps_per_MB", sleeps[d][k]},
                         {"ring_full_stalls_per_MB", 0}}});
  return hand_result(dir, file, "a sweep over message sizes", "throughput_MBps", points);
}

// The lines of plot.gp drawing DIR/STEM.svg (the PNG's are the same).
std::string figure_script(const std::string& gp, const std::string& dir, const std::string& stem)
{
  const std::size_t start = gp.find("set output \"" + dir + "/" + stem + ".svg\"\n");
  if (start == std::string::npos)
    return "";
  return gp.substr(start, gp.find("unset output\n", start) - start);
}

} // namespace

TEST_CASE("cli: plot draws report.metrics, CPU per GB and predicted against measured as SVG and PNG", "[cli][plot]")
{
  TempDir dir;
  const Run r =
      run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--format", "json", "--output", dir.ws + "/out",
                                            "--set", "validation.measurements=tiny-measurements.csv"} +
                       kTinySets);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const Run p = run_cli(dir, {"plot", dir.ws + "/out/result.json", "--output", dir.ws + "/figs"});
  INFO("plot stderr: " << p.err);
  REQUIRE(p.status == 0);
  // tiny.yaml's report.metrics: throughput_MBps,writer_sys_seconds.
  for (const char* stem : {"throughput_MBps", "writer_sys_seconds", "cpu_per_GB", "predicted_vs_measured"}) {
    INFO(stem);
    const std::string svg = read_file(dir.ws + "/figs/" + stem + ".svg");
    CHECK(svg.find("<svg") != std::string::npos);
    const std::string png = read_file(dir.ws + "/figs/" + stem + ".png");
    REQUIRE(png.size() > 8);
    CHECK(png.substr(1, 3) == "PNG");
    CHECK(p.out.find(std::string(stem) + ".png") != std::string::npos);
  }
  CHECK(std::filesystem::exists(dir.ws + "/figs/plot.gp"));
  // The swept key on x, y from 0 (the values span less than 20x), the
  // spread over the iterations as error bars, the CPU bars labelled by the
  // swept values.
  const std::string gp = read_file(dir.ws + "/figs/plot.gp");
  CHECK(gp.find("set xlabel \"hv_sock.send_loop\"") != std::string::npos);
  CHECK(gp.find("set xtics (\"false\" 0, \"true\" 1)") != std::string::npos);
  CHECK(gp.find("set yrange [0:*]") != std::string::npos);
  // false and true are categories (issue 51, item 7): points with their
  // bars, no line between them.
  CHECK(gp.find("with yerrorbars") != std::string::npos);
  CHECK(gp.find("with yerrorlines") == std::string::npos);
  CHECK(read_file(dir.ws + "/figs/cpu_per_GB.dat").rfind("\"false\"\t", 0) == 0);
  // Two short labels side by side, at the default font, no fixed margin.
  const std::string cpu = figure_script(gp, dir.ws + "/figs", "cpu_per_GB");
  CHECK_THAT(cpu, Catch::Contains("\nset xtics\n"));
  CHECK_THAT(cpu, !Catch::Contains("font"));
  CHECK_THAT(cpu, !Catch::Contains("bmargin"));
  const Run log = run_cli(dir, {"plot", dir.ws + "/out/result.json", "--output", dir.ws + "/figs-log", "--log"});
  REQUIRE(log.status == 0);
  CHECK(read_file(dir.ws + "/figs-log/plot.gp").find("set logscale y") != std::string::npos);
  CHECK(bad_input_message(run_cli(dir, {"plot", dir.ws + "/out/result.json", "--x", "seed"})) ==
        dir.ws + "/out/result.json: error: --x seed: not a swept key of this result (allowed: hv_sock.send_loop)");
  const Run bad = run_cli(dir, {"plot", dir.ws + "/nosuch.json"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("nosuch.json: error: cannot read the result") != std::string::npos);
}

TEST_CASE("cli: plot chooses each y axis's scale from the data, and --log and --linear force it", "[cli][plot]")
{
  TempDir dir;
  const std::string wide = wide_sweep(dir);
  const Run p = run_cli(dir, {"plot", wide, "--output", "figs"});
  INFO("stderr: " << p.err);
  REQUIRE(p.status == 0);
  // report.metrics (throughput_MBps), then the CPU cost.
  CHECK(p.out == "figs/throughput_MBps.svg\nfigs/throughput_MBps.png\nfigs/cpu_per_GB.svg\nfigs/cpu_per_GB.png\n");
  CHECK(p.err == "vsocksim plot: x axis: workload.message_size, log (its values span 512x, more than 20x)\n"
                 "vsocksim plot: throughput_MBps: y axis log (the values span 22.7x, more than 20x; --linear forces "
                 "linear)\n"
                 "vsocksim plot: cpu_per_GB: y axis log (the values span 144x, more than 20x; --linear forces "
                 "linear)\n");
  const std::string gp = read_file(dir.in_ws("figs/plot.gp"));
  const std::string t = figure_script(gp, "figs", "throughput_MBps");
  // Log y from below 71 x 0.95 to above 1609 x 1.05, ticks at 1, 2, 5 x 10^k;
  // log x, a tick per size.
  CHECK_THAT(t, Catch::Contains("set logscale y\nset yrange [44.96666666666667:2534.175]\n"
                                "set ytics (50, 100, 200, 500, 1000, 2000)\n"));
  CHECK_THAT(t, Catch::Contains("set logscale x 2\nset xtics (\"128B\" 128, \"1KiB\" 1024, \"4KiB\" 4096, "
                                "\"64KiB\" 65536)\n"));
  // Title from the experiment, the metric's unit and meaning, the legend
  // outside the plot, a line per direction.
  CHECK_THAT(t, Catch::Contains("set label 1 \"hand: a sweep over message sizes\\nthroughput_MBps (MB/s): payload "
                                "bytes delivered to readers / elapsed time, all connections (MB = 10^6 B)\" at "
                                "screen 0.5, screen 0.965 center\n"));
  CHECK_THAT(t, Catch::Contains("set key outside right top vertical\n"));
  CHECK_THAT(t, Catch::Contains("set key title \"direction\"\n"));
  // Eight CPU bars labelled "guest_to_host, 64KiB" and so on do not fit side
  // by side: turned, at the default font (issue 51, item 7).
  const std::string cpu = figure_script(gp, "figs", "cpu_per_GB");
  CHECK_THAT(cpu, Catch::Contains("\nset xtics rotate by -30\n"));
  CHECK_THAT(cpu, !Catch::Contains("font"));
  CHECK_THAT(t, Catch::Contains("set ylabel \"throughput_MBps (MB/s); mean, bars: min to max over the "
                                "iterations\"\n"));
  CHECK_THAT(t, Catch::Contains("title \"guest_to_host\", \"figs/throughput_MBps.dat\" index 1"));
  CHECK(read_file(dir.in_ws("figs/throughput_MBps.dat")) ==
        "# guest_to_host: x, mean, min, max over the iterations\n"
        "128\t114\t108.3\t119.7\n1024\t684\t649.8\t718.2\n4096\t1154\t1096.3\t1211.7\n65536\t1609\t1528.55\t1689.45\n"
        "\n\n"
        "# host_to_guest: x, mean, min, max over the iterations\n"
        "128\t71\t67.45\t74.55\n1024\t298\t283.09999999999997\t312.90000000000003\n4096\t447\t424.65\t469.35\n"
        "65536\t509\t483.54999999999995\t534.45\n\n\n");
  // The CPU bars side by side on a log axis (stacked bars mislead there).
  const std::string c = figure_script(gp, "figs", "cpu_per_GB");
  CHECK_THAT(c, Catch::Contains("set logscale y\n"));
  CHECK_THAT(c, Catch::Contains("set style histogram clustered gap 1\n"));
  CHECK_THAT(c, Catch::Contains("set ylabel 'CPU time per GB moved (s/GB)'\n"));

  // --linear: from 0, stacked bars; -q: no notes.
  const Run lin = run_cli(dir, {"plot", wide, "--output", "lin", "--linear"});
  REQUIRE(lin.status == 0);
  CHECK_THAT(lin.err, Catch::Contains("vsocksim plot: throughput_MBps: y axis linear (--linear)\n"));
  const std::string lgp = read_file(dir.in_ws("lin/plot.gp"));
  CHECK(lgp.find("set logscale y") == std::string::npos);
  CHECK_THAT(figure_script(lgp, "lin", "throughput_MBps"), Catch::Contains("set yrange [0:*]\n"));
  CHECK_THAT(figure_script(lgp, "lin", "cpu_per_GB"), Catch::Contains("set style histogram rowstacked\n"));
  CHECK(run_cli(dir, {"plot", wide, "--output", "lin", "--linear", "-q"}).err.empty());

  // A narrow sweep (16-64 KiB, 640-760 MB/s): linear x and y, y from 0.
  std::vector<HandPoint> narrow;
  for (const auto& [size, text, mbps] : std::vector<std::tuple<int, std::string, double>>{
           {16384, "16KiB", 640}, {32768, "32KiB", 700}, {65536, "64KiB", 760}})
    narrow.push_back({{{"workload.message_size", size, text}}, {{"throughput_MBps", mbps}}});
  const std::string n = hand_result(dir, "narrow.json", "narrow", "throughput_MBps", narrow);
  const Run np = run_cli(dir, {"plot", n, "--output", "narrow"});
  REQUIRE(np.status == 0);
  CHECK(np.out == "narrow/throughput_MBps.svg\nnarrow/throughput_MBps.png\n"); // no CPU figures in the result
  CHECK(np.err == "vsocksim plot: x axis: workload.message_size, linear (its values span 4x, at most 20x)\n"
                  "vsocksim plot: throughput_MBps: y axis linear (the values span 1.19x, at most 20x; --log forces "
                  "log)\n");
  const std::string ngp = read_file(dir.in_ws("narrow/plot.gp"));
  CHECK(ngp.find("logscale") == std::string::npos);
  CHECK_THAT(ngp, Catch::Contains("set yrange [0:*]\n"));
  CHECK_THAT(ngp, Catch::Contains("set key title \"\"\n")); // one line: "all points"
  // --log: a log axis for it too (ticks at every digit: 1, 2, 5 give two).
  const Run nl = run_cli(dir, {"plot", n, "--output", "narrow-log", "--log"});
  REQUIRE(nl.status == 0);
  CHECK(nl.err == "vsocksim plot: x axis: workload.message_size, linear (its values span 4x, at most 20x)\n"
                  "vsocksim plot: throughput_MBps: y axis log (--log)\n");
  CHECK_THAT(read_file(dir.in_ws("narrow-log/plot.gp")),
             Catch::Contains("set logscale y\nset yrange [405.3333333333333:1197]\nset ytics (500, 600, 700, 800, "
                             "900, 1000)\n"));
  CHECK(bad_input_message(run_cli(dir, {"plot", n, "--log", "--linear"})) ==
        "vsocksim: error: --log excludes --linear");
}

TEST_CASE("cli: plot --metrics draws any metric in its unit, and refuses one the result has not got", "[cli][plot]")
{
  TempDir dir;
  const std::string wide = wide_sweep(dir);
  const Run p = run_cli(dir, {"plot", wide, "--output", "figs", "-q", "--metrics", "writer_sys_seconds,copies_per_MB"});
  INFO("stderr: " << p.err);
  REQUIRE(p.status == 0);
  CHECK(p.out ==
        "figs/writer_sys_seconds.svg\nfigs/writer_sys_seconds.png\nfigs/copies_per_MB.svg\nfigs/copies_per_MB.png\n");
  CHECK(p.err.empty());
  CHECK(!fs::exists(dir.in_ws("figs/throughput_MBps.svg")));
  const std::string gp = read_file(dir.in_ws("figs/plot.gp"));
  const std::string w = figure_script(gp, "figs", "writer_sys_seconds");
  CHECK_THAT(w, Catch::Contains("set ylabel \"writer_sys_seconds (s); mean, bars: min to max over the "
                                "iterations\"\n"));
  // The meaning as declared; its `time` in backquotes is not run by gnuplot.
  CHECK_THAT(w, Catch::Contains("\\nwriter_sys_seconds (s): kernel (and hypercall) CPU time of the writer threads, as "
                                "'time' reports it\""));
  CHECK_THAT(w, Catch::Contains("set yrange [0:*]\n")); // 1 to 0.25 s: 4x
  const std::string c = figure_script(gp, "figs", "copies_per_MB");
  CHECK_THAT(c, Catch::Contains("set ylabel \"copies_per_MB (1/MB); mean, bars: min to max over the iterations\"\n"));
  CHECK_THAT(c, Catch::Contains("set logscale y\n")); // 7812.5 to 15.3: 512x
  CHECK(read_file(dir.in_ws("figs/writer_sys_seconds.dat")).find("128\t1\t0.95\t1.05\n") != std::string::npos);
  // The CPU cost by its name, alone.
  const Run cpu = run_cli(dir, {"plot", wide, "--output", "cpu", "-q", "--metrics", "cpu_per_GB"});
  REQUIRE(cpu.status == 0);
  CHECK(cpu.out == "cpu/cpu_per_GB.svg\ncpu/cpu_per_GB.png\n");

  // Not a metric of the result: exit 2, the list of those it has.
  CHECK(bad_input_message(run_cli(dir, {"plot", wide, "--metrics", "throughput_MBps,throughput_Gbps"})) ==
        "wide.json: error: --metrics: 'throughput_Gbps' is not a metric of this result (allowed: cpu_per_GB, "
        "copies_per_MB, guest_cpu_percent, host_cpu_percent, reader_sleeps_per_MB, ring_full_stalls_per_MB, "
        "throughput_MBps, writer_sys_seconds)");
  const std::string no_cpu =
      hand_result(dir, "no-cpu.json", "", "", {{{{"direction", "guest_to_host", "guest_to_host"}}, {{"x_per_MB", 1}}}});
  CHECK(bad_input_message(run_cli(dir, {"plot", no_cpu, "--metrics", "cpu_per_GB"})) ==
        "no-cpu.json: error: --metrics cpu_per_GB: needs throughput_MBps, guest_cpu_percent and host_cpu_percent in "
        "every point");
  CHECK(bad_input_message(run_cli(dir, {"plot", no_cpu, "--metrics", "nosuch"})) ==
        "no-cpu.json: error: --metrics: 'nosuch' is not a metric of this result (allowed: x_per_MB)");
  // Without report.metrics: throughput_MBps, which this one has not got
  // either: nothing to draw.
  const Run nothing = run_cli(dir, {"plot", no_cpu});
  CHECK(nothing.status == 2);
  CHECK(nothing.err == "vsocksim plot: warning: report.metrics names throughput_MBps, which this result has not got: "
                       "no figure of it\n"
                       "no-cpu.json: error: nothing to draw: the result has none of its report.metrics (use "
                       "--metrics)\n");

  // --log leaves out the values not above 0, with a warning; none left: exit 2.
  const Run some = run_cli(dir, {"plot", wide, "--output", "log", "-q", "--log", "--metrics", "reader_sleeps_per_MB"});
  REQUIRE(some.status == 0);
  CHECK(some.err == "vsocksim plot: warning: reader_sleeps_per_MB: --log leaves out 1 value(s) not above 0, which a "
                    "log axis cannot show (point 0)\n");
  const std::string sleeps = read_file(dir.in_ws("log/reader_sleeps_per_MB.dat")); // without point 0's 128 B
  CHECK(sleeps.rfind("# guest_to_host: x, mean, min, max over the iterations\n1024\t3\t", 0) == 0);
  const Run auto_scale = run_cli(dir, {"plot", wide, "--output", "auto", "--metrics", "reader_sleeps_per_MB"});
  REQUIRE(auto_scale.status == 0);
  CHECK_THAT(auto_scale.err, Catch::Contains("vsocksim plot: reader_sleeps_per_MB: y axis linear (a value is 0, which "
                                             "a log axis cannot show)\n"));
  CHECK(bad_input_message(run_cli(dir, {"plot", wide, "-q", "--log", "--metrics", "ring_full_stalls_per_MB"})) ==
        "wide.json: error: --log: ring_full_stalls_per_MB has no value above 0 to draw on a log axis (use --linear)");
}

TEST_CASE("cli: plot draws a result in its own units: Gbit/s stays Gbit/s", "[cli][plot]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"run", kData + "/tiny-virtio.yaml", "-q", "--format", "json", "--output", "out", "--set",
                              "report.metrics=throughput_Gbps"});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const Run p = run_cli(dir, {"plot", "out/result.json", "--output", "figs", "-q"});
  INFO("plot stderr: " << p.err);
  REQUIRE(p.status == 0);
  CHECK(p.out == "figs/throughput_Gbps.svg\nfigs/throughput_Gbps.png\nfigs/cpu_per_GB.svg\nfigs/cpu_per_GB.png\n");
  const std::string t = figure_script(read_file(dir.in_ws("figs/plot.gp")), "figs", "throughput_Gbps");
  CHECK_THAT(t, Catch::Contains("set ylabel \"throughput_Gbps (Gbit/s); mean, bars: min to max over the "
                                "iterations\"\n"));
  CHECK_THAT(t, Catch::Contains("\\nthroughput_Gbps (Gbit/s): throughput in 10^9 bits/s (virtio_vsock)\""));
  // The figures drawn are the result's, in Gbit/s: a place per direction.
  const ojson result = parse_json(read_file(dir.in_ws("out/result.json")));
  const std::vector<std::string> rows = lines_of(read_file(dir.in_ws("figs/throughput_Gbps.dat")));
  REQUIRE(rows.size() >= 3);
  for (std::size_t i = 0; i < 2; ++i) {
    std::istringstream row(rows[i + 1]);
    double x = -1, mean = -1;
    row >> x >> mean;
    CHECK(x == static_cast<double>(i));
    CHECK(mean == result["points"][i]["metrics"]["throughput_Gbps"]["mean"].get<double>());
    CHECK(mean < 100); // not MB/s
  }
}

TEST_CASE("cli: plot gives the same script and figures for the same result, byte for byte", "[cli][plot]")
{
  TempDir dir;
  const std::string wide = wide_sweep(dir);
  const std::vector<std::string> files = {
      "plot.gp",        "throughput_MBps.dat", "throughput_MBps.svg", "throughput_MBps.png",
      "cpu_per_GB.dat", "cpu_per_GB.svg",      "cpu_per_GB.png"};
  REQUIRE(run_cli(dir, {"plot", wide, "--output", "figs", "-q"}).status == 0);
  std::map<std::string, std::string> first;
  for (const auto& f : files)
    first[f] = read_file(dir.in_ws("figs/" + f));
  fs::remove_all(dir.in_ws("figs"));
  REQUIRE(run_cli(dir, {"plot", wide, "--output", "figs", "-q"}).status == 0);
  for (const auto& f : files) {
    INFO(f);
    CHECK(read_file(dir.in_ws("figs/" + f)) == first[f]);
  }
}

TEST_CASE("cli: plot draws a key zipped with the x axis's along it, and runs nothing a title holds", "[cli][plot]")
{
  TempDir dir;
  // direction x (message_size zipped with total_bytes): two lines, not four.
  std::vector<HandPoint> points;
  for (const std::string d : {"guest_to_host", "host_to_guest"})
    for (const auto& [size, total] : std::vector<std::pair<int, int>>{{32, 480000}, {4096, 25165824}})
      points.push_back({{{"direction", d, d},
                         {"workload.message_size", size, size == 32 ? "32" : "4KiB"},
                         {"workload.total_bytes", total, std::to_string(total)}},
                        {{"throughput_MBps", size / 10.0}}});
  const std::string r = hand_result(dir, "zip.json", "`touch ran` $(touch ran2)", "throughput_MBps", points);
  const Run p = run_cli(dir, {"plot", r, "--output", "figs", "-q"});
  INFO("stderr: " << p.err);
  REQUIRE(p.status == 0);
  const std::string gp = read_file(dir.in_ws("figs/plot.gp"));
  CHECK_THAT(gp, Catch::Contains("set key title \"direction\"\n"));
  CHECK_THAT(gp, Catch::Contains("set xlabel \"workload.message_size (workload.total_bytes swept with it)\"\n"));
  CHECK_THAT(gp, Catch::Contains("index 1 using 1:2:3:4 with yerrorlines lt 2 dt 1 title \"host_to_guest\"\n"));
  CHECK(gp.find("index 2") == std::string::npos);
  CHECK_THAT(gp, Catch::Contains("set label 1 \"hand: 'touch ran' $(touch ran2)\\n"));
  CHECK(!fs::exists(dir.in_ws("ran")));
  CHECK(!fs::exists(dir.in_ws("ran2")));
}

TEST_CASE("cli: plot draws a round-trip result's distribution per point and its percentiles against the size",
          "[cli][plot][round_trip]")
{
  TempDir dir;
  // Two directions x 64 B and 4 KiB, each with a histogram of 4 round trips
  // (one of 10-11 us, two of 11-12 us, one of 12-13 us, scaled by the size).
  std::vector<HandPoint> points;
  for (const std::string d : {"guest_to_host", "host_to_guest"})
    for (const auto& [size, text] : std::vector<std::pair<int, std::string>>{{64, "64B"}, {4096, "4KiB"}}) {
      const double f = size == 64 ? 1 : 2;
      points.push_back(
          {{{"direction", d, d}, {"workload.message_size", size, text}},
           {{"rtt_p50_us", 11.5 * f}, {"rtt_p90_us", 12.5 * f}, {"rtt_p99_us", 12.6 * f}, {"rtt_p999_us", 12.7 * f}}});
    }
  const std::string file = hand_result(dir, "rtt.json", "round trips", "rtt_p50_us", points);
  ojson r = parse_json(read_file(dir.in_ws(file)));
  for (ojson& p : r["points"]) {
    const double f = p["params"]["workload.message_size"] == 64 ? 1 : 2;
    p["rtt_histogram"] = {{"unit", "us"},
                          {"buckets", {{10 * f, 11 * f, 1}, {11 * f, 12 * f, 2}, {12 * f, 13 * f, 1}}},
                          {"iterations", ojson::array()}};
  }
  write_file(dir.in_ws(file), r.dump(1));

  const Run p = run_cli(dir, {"plot", file, "--output", "figs"});
  INFO("stderr: " << p.err);
  REQUIRE(p.status == 0);
  CHECK(p.out == "figs/rtt_p50_us.svg\nfigs/rtt_p50_us.png\nfigs/rtt_cdf.svg\nfigs/rtt_cdf.png\n"
                 "figs/rtt_percentiles.svg\nfigs/rtt_percentiles.png\n");
  CHECK_THAT(p.err, Catch::Contains("vsocksim plot: rtt_cdf: x axis log (round trips from 10 to 26 us), one line per "
                                    "point\n"));
  CHECK_THAT(p.err, Catch::Contains("vsocksim plot: rtt_percentiles: x axis: workload.message_size, log (its values "
                                    "span 64x, more than 20x)\n"));
  // The CDF: a line per point, from the first bucket's lower bound at 0 to
  // each bucket's upper bound at the share of round trips up to it.
  const std::string cdf = read_file(dir.in_ws("figs/rtt_cdf.dat"));
  CHECK(cdf.rfind("# guest_to_host, 64B: round trip (us, the bucket's upper bound), share of round trips at or below "
                  "it\n10\t0\n11\t0.25\n12\t0.75\n13\t1\n\n\n# guest_to_host, 4KiB: ",
                  0) == 0);
  const std::string gp = read_file(dir.in_ws("figs/plot.gp"));
  const std::string c = figure_script(gp, "figs", "rtt_cdf");
  CHECK_THAT(c, Catch::Contains("set logscale x\n"));
  CHECK_THAT(c, Catch::Contains("set yrange [0:1]\n"));
  CHECK_THAT(c, Catch::Contains("index 3 using 1:2 with lines lt 4 dt 1 title \"host_to_guest, 4KiB\""));
  // The percentiles: a line per direction and percentile, x the message size.
  const std::string pct = read_file(dir.in_ws("figs/rtt_percentiles.dat"));
  CHECK(pct.rfind("# guest_to_host p50: x, mean over the iterations (us)\n64\t11.5\n4096\t23\n\n\n"
                  "# guest_to_host p90: x, mean over the iterations (us)\n64\t12.5\n4096\t25\n",
                  0) == 0);
  CHECK_THAT(pct, Catch::Contains("# host_to_guest p99.9: x, mean over the iterations (us)\n64\t12.7\n4096\t25.4\n"));
  const std::string q = figure_script(gp, "figs", "rtt_percentiles");
  CHECK_THAT(q, Catch::Contains("set logscale x 2\n"));
  CHECK_THAT(q, Catch::Contains("set xlabel \"workload.message_size\"\n"));
  CHECK_THAT(q, Catch::Contains("index 7 using 1:2 with linespoints lt 2 dt 4 pt 11 title \"host_to_guest p99.9\""));
  CHECK_THAT(q, Catch::Contains("against workload.message_size"));
  // Direction on x (issue 51, item 7): categories, which no line joins,
  // each series a column of its own within a category's place, and the
  // title naming the axis it is drawn against.
  const Run by_dir = run_cli(dir, {"plot", file, "--output", "figs-dir", "-q", "--x", "direction"});
  REQUIRE(by_dir.status == 0);
  const std::string qd = figure_script(read_file(dir.in_ws("figs-dir/plot.gp")), "figs-dir", "rtt_percentiles");
  CHECK_THAT(qd, Catch::Contains("against direction"));
  CHECK_THAT(qd, !Catch::Contains("message size"));
  CHECK_THAT(qd, Catch::Contains("set xtics (\"guest_to_host\" 0, \"host_to_guest\" 1)"));
  CHECK_THAT(qd, Catch::Contains("index 7 using 1:2 with points lt 2 dt 4 pt 11 title \"4KiB p99.9\""));
  CHECK_THAT(qd, !Catch::Contains("linespoints"));
  // 64B's series left of each place, 4KiB's right: 0 -+ 0.12 / 2.
  const std::string pd = read_file(dir.in_ws("figs-dir/rtt_percentiles.dat"));
  CHECK(pd.rfind("# 64B p50: x, mean over the iterations (us)\n-0.06\t11.5\n0.94\t11.5\n", 0) == 0);
  CHECK_THAT(pd, Catch::Contains("# 4KiB p50: x, mean over the iterations (us)\n0.06\t23\n1.06\t23\n"));
  // By name, alone; refused for a result without round trips.
  const Run only = run_cli(dir, {"plot", file, "--output", "cdf", "-q", "--metrics", "rtt_cdf"});
  REQUIRE(only.status == 0);
  CHECK(only.out == "cdf/rtt_cdf.svg\ncdf/rtt_cdf.png\n");
  const std::string wide = wide_sweep(dir);
  CHECK(bad_input_message(run_cli(dir, {"plot", wide, "--metrics", "rtt_percentiles"})) ==
        "wide.json: error: --metrics rtt_percentiles: needs a round-trip result (points with rtt_histogram)");
}
