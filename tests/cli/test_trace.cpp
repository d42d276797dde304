// run --trace: the timeline (sim/trace.hpp, app/run/timeline.hpp,
// docs/trace.md), and plot --timeline.
#include "cli_support.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <set>
#include <signal.h>
#include <string>
#include <utility>
#include <vector>

using namespace cli_test;

namespace {

const std::string kTinyVirtio = kData + "/tiny-virtio.yaml";

long long ns_of(const ojson& ts)
{
  return std::llround(ts.get<double>() * 1000);
}

// What is wrong with a trace, against the Trace Event Format and what
// docs/trace.md promises (empty: nothing). Every event well formed for its
// ph; every track and process named by metadata; events in time order per
// track; slices on a track disjoint or properly nested; every flow (a
// bind_id on a flow_out slice) with exactly one flow_in slice, not earlier;
// counters numeric; everything inside the window the metadata states.
std::vector<std::string> trace_problems(const ojson& t)
{
  std::vector<std::string> bad;
  auto add = [&](const std::string& what, const ojson& e) { bad.push_back(what + ": " + e.dump()); };
  if (!t.is_object() || !t.contains("traceEvents") || !t["traceEvents"].is_array())
    return {"no traceEvents array"};
  if (t.value("displayTimeUnit", "") != "ns")
    bad.push_back("displayTimeUnit is not ns");
  const ojson meta = t.value("metadata", ojson::object());
  if (!meta.contains("window_start_us") || !meta.contains("window_end_us"))
    return {"metadata without the window"};
  const long long w0 = ns_of(meta["window_start_us"]), w1 = ns_of(meta["window_end_us"]);
  std::set<long long> named_pids;
  std::map<long long, long long> pid_of_tid;
  std::set<std::pair<long long, long long>> named_tracks, used_tracks;
  std::map<std::pair<long long, long long>, long long> last_ts;
  std::map<std::pair<long long, long long>, std::vector<std::pair<long long, long long>>> slices;
  std::map<long long, long long> flow_start, flow_end;
  std::map<long long, int> starts, ends;
  static const std::set<std::string> cats = {"user", "sys", "irq", "hypervisor"};
  for (const ojson& e : t["traceEvents"]) {
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string() || !e.contains("name") || !e["name"].is_string() ||
        e["name"].get<std::string>().empty() || !e.contains("pid") || !e["pid"].is_number_integer() ||
        !e.contains("tid") || !e["tid"].is_number_integer()) {
      add("missing ph, name, pid or tid", e);
      continue;
    }
    const std::string ph = e["ph"];
    const auto track = std::make_pair(e["pid"].get<long long>(), e["tid"].get<long long>());
    // Perfetto reads tid 0 as the pid, and keys threads by tid: a tid
    // must belong to one process.
    if (track.second == 0)
      add("tid 0 (Perfetto would take the pid for it)", e);
    if (auto [it, fresh] = pid_of_tid.emplace(track.second, track.first); !fresh && it->second != track.first)
      add("a tid used by two processes", e);
    if (ph == "M") {
      const std::string n = e["name"];
      const ojson a = e.value("args", ojson::object());
      if ((n == "process_name" || n == "thread_name") && !(a.contains("name") && a["name"].is_string()))
        add("metadata without a name", e);
      else if (n == "process_name")
        named_pids.insert(track.first);
      else if (n == "thread_name")
        named_tracks.insert(track);
      else if (n != "process_sort_index" && n != "thread_sort_index")
        add("unknown metadata event", e);
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number()) {
      add("no numeric ts", e);
      continue;
    }
    const long long ts = ns_of(e["ts"]);
    used_tracks.insert(track);
    if (last_ts.count(track) && ts < last_ts[track])
      add("out of time order on its track", e);
    last_ts[track] = ts;
    if (ts < w0 || ts >= w1)
      add("outside the window", e);
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0)
        add("slice without a duration", e);
      else if (ts + ns_of(e["dur"]) > w1)
        add("slice ending past the window", e);
      else
        slices[track].emplace_back(ts, ts + ns_of(e["dur"]));
      if (e.contains("bind_id")) {
        // A wake-up arrow's end: a zero-length wake_up slice.
        if (!e["bind_id"].is_number_integer() || e.value("cat", "") != "wakeup" || e["name"] != "wake_up" ||
            e.value("dur", -1.0) != 0 || e.value("flow_out", false) == e.value("flow_in", false)) {
          add("malformed flow slice", e);
          continue;
        }
        const long long id = e["bind_id"];
        if (e.value("flow_out", false)) {
          ++starts[id];
          flow_start[id] = ts;
        } else {
          ++ends[id];
          flow_end[id] = ts;
        }
      } else if (track.first == 4) { // the round trips (sim/round_trips.hpp)
        if (e.value("cat", "") != "round_trip" && e.value("cat", "") != "stage")
          add("round-trip slice category not round_trip or stage", e);
      } else if (!cats.count(e.value("cat", ""))) {
        add("slice category not user, sys, irq or hypervisor", e);
      }
    } else if (ph == "i") {
      if (e.value("s", "") != "t" || !e.contains("args") || !e["args"].contains("thread"))
        add("instant without thread scope or thread", e);
    } else if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty())
        add("counter without values", e);
      else
        for (const auto& [k, v] : e["args"].items())
          if (!v.is_number())
            add("counter value not a number", e);
    } else {
      add("unknown ph", e);
    }
  }
  for (const auto& [id, n] : starts)
    if (n != 1 || ends[id] != 1 || flow_end[id] < flow_start[id])
      bad.push_back(fmt::format("flow {}: {} start(s), {} finish(es), start {} ns, finish {} ns", id, n, ends[id],
                                flow_start[id], flow_end[id]));
  for (const auto& [id, n] : ends)
    if (!starts.count(id))
      bad.push_back(fmt::format("flow {}: a finish without a start", id));
  for (const auto& tr : used_tracks) {
    if (!named_pids.count(tr.first))
      bad.push_back(fmt::format("process {} has no process_name", tr.first));
    if (!named_tracks.count(tr))
      bad.push_back(fmt::format("track {}/{} has no thread_name", tr.first, tr.second));
  }
  for (auto& [tr, s] : slices) {
    std::sort(s.begin(), s.end(),
              [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<long long> open; // ends of the enclosing slices
    for (const auto& [s0, s1] : s) {
      while (!open.empty() && open.back() <= s0)
        open.pop_back();
      if (!open.empty() && s1 > open.back())
        bad.push_back(fmt::format("track {}/{}: slice [{}, {}) ns overlaps an enclosing one ending at {}", tr.first,
                                  tr.second, s0, s1, open.back()));
      open.push_back(s1);
    }
  }
  return bad;
}

// The names of the events of phase ph.
std::set<std::string> names_of(const ojson& t, const std::string& ph)
{
  std::set<std::string> out;
  for (const ojson& e : t["traceEvents"])
    if (e.value("ph", "") == ph)
      out.insert(e["name"].get<std::string>());
  return out;
}

ojson traced(const TempDir& dir, const std::vector<std::string>& args, const std::string& name)
{
  const Run r = run_cli(dir, args + std::vector<std::string>{"-q", "--trace", dir.in_ws(name)});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  return parse_json(read_file(dir.in_ws(name)));
}

} // namespace

TEST_CASE("trace: the validator finds what is wrong in a trace", "[cli][trace]")
{
  // A valid little trace, then one fault at a time: the checks below can fail.
  const ojson good = ojson::parse(R"({"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "guest"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "vcpu0"}},
    {"ph": "X", "name": "w", "cat": "sys", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0, "args": {}},
    {"ph": "X", "name": "i", "cat": "irq", "pid": 1, "tid": 1, "ts": 1.5, "dur": 0.5, "args": {}},
    {"ph": "X", "name": "wake_up", "cat": "wakeup", "pid": 1, "tid": 1, "ts": 2.0, "dur": 0,
     "bind_id": 1, "flow_out": true},
    {"ph": "X", "name": "wake_up", "cat": "wakeup", "pid": 1, "tid": 1, "ts": 2.5, "dur": 0,
     "bind_id": 1, "flow_in": true},
    {"ph": "i", "name": "k", "pid": 1, "tid": 1, "ts": 2.6, "s": "t", "args": {"thread": "w"}}],
    "displayTimeUnit": "ns", "metadata": {"window_start_us": 0, "window_end_us": 10}})");
  CHECK(trace_problems(good).empty());
  auto broken = [&](const std::function<void(ojson&)>& f) {
    ojson t = good;
    f(t["traceEvents"]);
    return trace_problems(t).size();
  };
  CHECK(broken([](ojson& ev) { ev[3]["dur"] = 2.0; }) > 0);       // overlaps its parent's end
  CHECK(broken([](ojson& ev) { ev.erase(5); }) > 0);              // a flow without its finish
  CHECK(broken([](ojson& ev) { ev[5]["ts"] = 1.9; }) > 0);        // finish before start (and out of order)
  CHECK(broken([](ojson& ev) { ev[5]["flow_out"] = true; }) > 0); // both ends flow_out
  CHECK(broken([](ojson& ev) { ev.erase(1); }) > 0);              // an unnamed track
  CHECK(broken([](ojson& ev) { ev[6]["ts"] = 20.0; }) > 0);       // outside the window
  CHECK(broken([](ojson& ev) { ev[2]["cat"] = "busy"; }) > 0);    // unknown category
  CHECK(broken([](ojson& ev) { ev[0]["tid"] = 0; }) > 0);         // tid 0
  CHECK(broken([](ojson& ev) { ev[6]["pid"] = 2; }) > 0);         // tid 1 in two processes
  CHECK(broken([](ojson& ev) {
          ev.push_back({{"ph", "C"}, {"name", "c"}, {"pid", 1}, {"tid", 1}, {"ts", 3.0}, {"args", {{"value", "x"}}}});
        }) > 0);
}

TEST_CASE("trace: a traced run of each transport and direction is a well-formed timeline", "[cli][trace]")
{
  struct Case {
    std::vector<std::string> args;
    std::set<std::string> kernel_fns; // instants it must show
    std::string counter;
  };
  const std::vector<Case> cases = {
      {{"run", kTiny, "--set", "direction=guest_to_host", "--set", "iterations=1"},
       {"hv_ringbuffer_write", "vmbus_setevent", "hv_pkt_iter_close"},
       "vmbus_ring0 guest_to_host"},
      {{"run", kTiny, "--set", "direction=host_to_guest", "--set", "iterations=1"},
       {"hv_ringbuffer_write", "host_signal_guest", "hvs_channel_cb", "hv_pkt_iter_close"},
       "vmbus_ring0 host_to_guest"},
      {{"run", kTinyVirtio, "--point", "0"},
       {"virtio_transport_send_pkt_info", "virtqueue_kick: tx", "vhost_vsock_handle_tx_kick",
        "virtio_transport_send_credit_update"},
       "credit0 guest writer"},
      // Host to guest: since the plain loop pays its own small user cost
      // (issue 31 item 8) the run's rx interrupts (two) come in its first
      // 24 us, before the default window; the tx interrupts of the reader's
      // credit updates fall in it.
      {{"run", kTinyVirtio, "--point", "1"},
       {"virtio_transport_send_pkt_info", "vhost_transport_do_send_pkt", "vring_interrupt: tx",
        "virtio_transport_send_credit_update"},
       "credit0 host writer"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    INFO(command_text(c.args));
    const ojson t = traced(dir, c.args, "t.json");
    const std::vector<std::string> problems = trace_problems(t);
    INFO("first problems: " << (problems.empty() ? "" : problems[0])
                            << (problems.size() > 1 ? "; " + problems[1] : ""));
    CHECK(problems.empty());
    // Not empty: slices on guest and host CPUs, the kernel functions, flows, counters.
    std::set<long long> pids;
    for (const ojson& e : t["traceEvents"])
      if (e["ph"] == "X")
        pids.insert(e["pid"].get<long long>());
    CHECK(pids == std::set<long long>{1, 2});
    const std::set<std::string> instants = names_of(t, "i");
    for (const std::string& fn : c.kernel_fns)
      CHECK(instants.count(fn) == 1);
    std::size_t outs = 0, ins = 0;
    for (const ojson& e : t["traceEvents"]) {
      outs += e.value("flow_out", false);
      ins += e.value("flow_in", false);
    }
    CHECK(outs > 0);
    CHECK(ins == outs);
    CHECK(names_of(t, "C").count(c.counter) == 1);
    CHECK(t["metadata"]["capped"] == false);
    CHECK(t["metadata"]["window_end_us"].get<double>() - t["metadata"]["window_start_us"].get<double>() ==
          Approx(200).margin(0.01));
  }
}

TEST_CASE("trace: tracing changes no result, and the same traced run gives the same bytes", "[cli][trace]")
{
  for (const std::string& file : {kTiny, kTinyVirtio}) {
    TempDir dir;
    const std::vector<std::string> args = {"run", file, "--format", "json", "-q"};
    const Run plain = run_cli(dir, args + std::vector<std::string>{"--jobs", "2"});
    const Run a =
        run_cli(dir, args + std::vector<std::string>{"--jobs", "2", "--trace", dir.in_ws("a.json"), "--point", "1"});
    const Run b =
        run_cli(dir, args + std::vector<std::string>{"--jobs", "1", "--trace", dir.in_ws("b.json"), "--point", "1"});
    REQUIRE(plain.status == 0);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    ojson jp = parse_json(plain.out), ja = parse_json(a.out);
    for (ojson* j : {&jp, &ja}) {
      (*j)["manifest"].erase("wall");
      (*j)["manifest"].erase("command_line");
    }
    // The traced run simulates only the traced point: the plain run's point 1, and the manifest says so.
    jp["points"] = ojson::array({jp["points"][1]});
    ojson units = ojson::object(); // of the metrics that point has
    for (const auto& [name, unit] : jp["units"].items())
      if (jp["points"][0]["metrics"].contains(name))
        units[name] = unit;
    jp["units"] = units;
    jp["manifest"]["traced_point"] = 1;
    jp["manifest"]["points_total"] = 2;
    CHECK(jp.dump(2) == ja.dump(2));
    const std::string ta = read_file(dir.in_ws("a.json")), tb = read_file(dir.in_ws("b.json"));
    CHECK(ta.size() > 1000);
    CHECK(ta == tb);
    // Nothing else written beside the traces (no temporaries).
    std::set<std::string> names;
    for (const auto& [name, content] : snapshot(dir.ws))
      names.insert(name);
    CHECK(names == std::set<std::string>{"a.json", "b.json"});
  }
}

TEST_CASE("trace: an explicit window is the one traced, with units", "[cli][trace]")
{
  TempDir dir;
  const ojson t = traced(dir, {"run", kTiny, "--set", "iterations=1", "--trace-window", "0.1ms:50us"}, "t.json");
  CHECK(trace_problems(t).empty());
  CHECK(t["metadata"]["window_start_us"] == 100.0);
  CHECK(t["metadata"]["window_end_us"] == 150.0);
  CHECK(names_of(t, "X").count("linux_writer0") == 1);
}

TEST_CASE("trace: bad trace options exit 2 with a clear message and write nothing", "[cli][trace]")
{
  struct Case {
    std::vector<std::string> extra;
    std::string message; // a part of the one message line
  };
  const std::vector<Case> cases = {
      {{"--trace", "t.json", "--trace-window", "10s:100us"}, "at or after the end of the run"},
      {{"--trace", "t.json", "--point", "2"}, "--point 2: error: no such point"},
      {{"--trace", "t.json", "--iteration", "2"}, "--iteration 2: error: point 0 has 2 iteration(s)"},
      {{"--trace", "t.json", "--iteration", "-1"}, "--iteration -1"},
      {{"--trace", "nosuch/t.json"}, "does not exist"},
      {{"--trace", "."}, "is a directory"},
      {{"--trace", "t.json", "--trace-window", "100us"}, "expected START:LENGTH"},
      {{"--trace", "t.json", "--trace-window", "1ms:0"}, "LENGTH must be above 0"},
      {{"--trace", "t.json", "--trace-window", "5xs:1us"}, "unknown unit 'xs'"},
      {{"--trace", "t.json", "--trace-window", ":-3us"}, "expected a non-negative number"},
      {{"--trace", "t.json", "--trace-max-events", "0"}, "--trace-max-events 0"},
      {{"--trace-window", "0:100us"}, "--trace"},
      {{"--point", "1"}, "--trace"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q"} + kTinySets + c.extra);
    INFO(command_text(c.extra));
    const std::string message = bad_input_message(r);
    CHECK_THAT(message, Catch::Contains(c.message));
    CHECK(snapshot(dir.ws).empty());
  }
}

TEST_CASE("trace: the event cap stops the recording, and says so", "[cli][trace]")
{
  TempDir dir;
  const std::vector<std::string> args = {"run", kTiny, "--set", "iterations=1", "-q", "--trace", dir.in_ws("t.json")};
  const Run full = run_cli(dir, args);
  REQUIRE(full.status == 0);
  const ojson whole = parse_json(read_file(dir.in_ws("t.json")));
  REQUIRE(whole["metadata"]["events"].get<long long>() > 100);
  CHECK(whole["metadata"]["capped"] == false);
  CHECK(full.err.find("event cap") == std::string::npos);

  const Run capped = run_cli(dir, args + std::vector<std::string>{"--trace-max-events", "100"});
  REQUIRE(capped.status == 0);
  CHECK_THAT(capped.err, Catch::Contains("warning: --trace: the event cap (100, --trace-max-events) was reached"));
  const ojson t = parse_json(read_file(dir.in_ws("t.json")));
  CHECK(trace_problems(t).empty());
  CHECK(t["metadata"]["capped"] == true);
  CHECK_THAT(t["metadata"]["note"].get<std::string>(), Catch::Contains("cap"));
  CHECK(t["metadata"]["window_end_us"].get<double>() < whole["metadata"]["window_end_us"].get<double>());
  long long events = 0;
  for (const ojson& e : t["traceEvents"])
    events += e["ph"] != "M";
  // The cap, plus the slices running at the cut (one per CPU at most).
  CHECK(events <= 100 + 8);
  CHECK(events >= 90);
}

TEST_CASE(
    "trace: plot --timeline draws a trace, and the pictures of docs/trace.md are its drawings of the shipped traces",
    "[cli][trace][plot]")
{
  TempDir dir;
  const ojson t = traced(dir, {"run", kTinyVirtio, "--point", "1"}, "t.json");
  const Run p = run_cli(dir, {"plot", "--timeline", "t.json", "--output", "fig.png"});
  INFO("plot stderr: " << p.err);
  REQUIRE(p.status == 0);
  CHECK(p.out == "fig.png\n");
  CHECK(read_file(dir.in_ws("fig.png")).substr(1, 3) == "PNG");
  CHECK(!fs::exists(dir.in_ws("fig.svg")));
  // A row per busy CPU, a block per thread, the counters below.
  const std::string gp = read_file(dir.in_ws("fig.gp"));
  for (const char* part :
       {"\"guest vcpu0\"", "\"host hcpu0\"", "title \"vhost\"", "title \"guest_reader0\"",
        "title \"category: hypervisor\"", "credit0 host writer bytes", "virtio_rx in flight chains", "with steps"})
    CHECK_THAT(gp, Catch::Contains(part));
  const Run both = run_cli(dir, {"plot", "--timeline", "t.json"});
  REQUIRE(both.status == 0);
  CHECK(both.out == "t.svg\nt.png\n");

  // Bad input: exit 2, one line, nothing drawn.
  write_file(dir.in_ws("bad.json"), "{\"traceEvents\": 3}");
  CHECK_THAT(bad_input_message(run_cli(dir, {"plot", "--timeline", "bad.json"})),
             Catch::Contains("bad.json: error: not a trace of `vsocksim run --trace`"));
  CHECK_THAT(bad_input_message(run_cli(dir, {"plot", "--timeline", "nosuch.json"})),
             Catch::Contains("nosuch.json: error: cannot read the trace"));
  CHECK_THAT(bad_input_message(run_cli(dir, {"plot", "--timeline", "t.json", "--output", "nodir/f.png"})),
             Catch::Contains("does not exist"));
  CHECK(!fs::exists(dir.in_ws("bad.svg")));

  // docs/figures/trace-*: drawn by plot --timeline from the traces in
  // docs/trace (the commands in docs/trace.md): the same data and script.
  fs::create_directories(dir.in_ws("docs/trace"));
  fs::create_directories(dir.in_ws("docs/figures"));
  for (const std::string& name : {"hvsock-4KiB-host_to_guest", "vsock-128B-guest_to_host"}) {
    INFO(name);
    fs::copy_file(kSource + "/docs/trace/" + name + ".json", dir.in_ws("docs/trace/" + name + ".json"));
    const ojson shipped = parse_json(read_file(dir.in_ws("docs/trace/" + name + ".json")));
    CHECK(trace_problems(shipped).empty());
    const Run d =
        run_cli(dir, {"plot", "--timeline", "docs/trace/" + name + ".json", "--output", "docs/figures/trace-" + name});
    REQUIRE(d.status == 0);
    for (const char* ext : {".dat", ".gp"})
      CHECK(read_file(dir.in_ws("docs/figures/trace-" + name + ext)) ==
            read_file(kSource + "/docs/figures/trace-" + name + ext));
  }
}

TEST_CASE("trace: a stop request during the traced run ends it at once and writes no trace", "[cli][trace][stop]")
{
  TempDir dir;
  // An explicit window is traced before the sweep: a long full-length
  // iteration, interrupted while it runs.
  const auto started = std::chrono::steady_clock::now();
  const Run r = run_cli(
      dir,
      {"run", kTiny, "-q", "--allow-large", "--set", "workload.total_bytes=20GB", "--set", "sim.run_length=full",
       "--set", "iterations=1", "--trace", "t.json", "--trace-window", "10us:10us"},
      [&] { return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(300); }, SIGINT,
      // Blocked until the program has its handler: on a loaded machine 300 ms
      // can pass before it does, and the default action leaves no message.
      /*background_job=*/true);
  CHECK(r.status == 130);
  CHECK(r.gone_ms < 2000);
  CHECK_THAT(r.err, Catch::Contains("interrupted by SIGINT"));
  CHECK(snapshot(dir.ws).empty());
}

TEST_CASE("trace: only the traced point is simulated, every iteration of it, and the run says so", "[cli][trace]")
{
  TempDir dir;
  const Run plain = run_cli(dir, {"run", kTiny, "-q", "--format", "json"});
  const Run traced_run = run_cli(dir, {"run", kTiny, "--format", "json", "--trace", "t.json", "--point", "1"});
  INFO("stderr: " << traced_run.err);
  REQUIRE(plain.status == 0);
  REQUIRE(traced_run.status == 0);
  CHECK_THAT(traced_run.err, Catch::StartsWith("--trace: simulating point 1 only (of 2)\n"));
  CHECK_THAT(traced_run.err, Catch::Contains("[2/2 simulations, 1/1 points]"));
  const ojson p = parse_json(plain.out), t = parse_json(traced_run.out);
  REQUIRE(t["points"].size() == 1);
  CHECK(t["points"][0].dump() == p["points"][1].dump()); // both iterations, as the whole run has them
  CHECK(t["manifest"]["traced_point"] == 1);
  CHECK(t["manifest"]["points_total"] == 2);
  CHECK(parse_json(read_file(dir.in_ws("t.json")))["metadata"]["point"] == 1);
  // -q: no note.
  CHECK(run_cli(dir, {"run", kTiny, "-q", "--trace", "t.json", "--point", "1"}).err.empty());

  // --output: the traced point's file, and a result of that point; the other points' files of an earlier run
  // are kept, and a later run without --trace reuses them all.
  const std::string out = dir.ws + "/out";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", out}).status == 0);
  const std::string point0 = read_file(out + "/point-0000.json");
  const Run into = run_cli(dir, {"run", kTiny, "--output", out, "--trace", "t.json", "--point", "1"});
  REQUIRE(into.status == 0);
  CHECK(names_in(out) == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  CHECK(read_file(out + "/point-0000.json") == point0);
  CHECK(parse_json(read_file(out + "/result.json"))["points"].size() == 1);
  const Run later = run_cli(dir, {"run", kTiny, "--output", out});
  CHECK_THAT(later.err, Catch::Contains("reusing 2 finished point(s) of 2 from " + out));
  // Into a new directory: that point alone.
  const std::string fresh = dir.ws + "/fresh";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", fresh, "--trace", "t.json", "--point", "1"}).status == 0);
  CHECK(names_in(fresh) == std::set<std::string>{"manifest.json", "point-0001.json", "result.json"});
  // Without --point the whole sweep runs, as without --trace, and point 0 is traced.
  const Run whole = run_cli(dir, {"run", kTiny, "--format", "json", "--trace", "t0.json"});
  REQUIRE(whole.status == 0);
  CHECK(whole.err.find("--trace: simulating point") == std::string::npos);
  const ojson w = parse_json(whole.out);
  CHECK(w["points"].size() == 2);
  CHECK(w["points"].dump() == p["points"].dump());
  CHECK_FALSE(w["manifest"].contains("traced_point"));
  CHECK(parse_json(read_file(dir.in_ws("t0.json")))["metadata"]["point"] == 0);
}

TEST_CASE("trace: a ping-pong's round trips are spans on their initiator's track, its stages nested in each",
          "[cli][trace][round_trip]")
{
  for (const std::string direction : {"guest_to_host", "host_to_guest"}) {
    INFO(direction);
    TempDir dir;
    write_file(dir.in_ws("pp.yaml"), "name: pp\nplatform: hyperv-2019\ntransport: hv_sock\nseed: 3\niterations: 1\n"
                                     "direction: " +
                                         direction +
                                         "\nworkload:\n  pattern: ping_pong\n  message_size: 64B\n  transactions: "
                                         "500\nsim:\n  run_length: full\n");
    const ojson t = traced(dir, {"run", "pp.yaml"}, "t.json");
    const std::vector<std::string> problems = trace_problems(t);
    INFO("first problem: " << (problems.empty() ? "" : problems[0]));
    CHECK(problems.empty());
    const std::string initiator = direction == "guest_to_host" ? "linux_app0" : "host_app0";
    long long tid = -1;
    for (const ojson& e : t["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 4)
        CHECK(e["args"]["name"] == "round trips");
      if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 4) {
        CHECK(e["args"]["name"] == initiator + " round trips");
        tid = e["tid"].get<long long>();
      }
    }
    REQUIRE(tid >= 0);
    // Each round trip whole in the window: its stages fill it, in the
    // path's order (the initiator's message first).
    std::vector<const ojson*> trips, stages;
    for (const ojson& e : t["traceEvents"])
      if (e["ph"] == "X" && e["pid"] == 4)
        (e["cat"] == "round_trip" ? trips : stages).push_back(&e);
    REQUIRE(trips.size() >= 4); // about 36 us each in 200 us
    std::size_t whole = 0;
    for (const ojson* rt : trips) {
      const long long t0 = ns_of((*rt)["ts"]), t1 = t0 + ns_of((*rt)["dur"]);
      CHECK((*rt)["args"]["stages"] == true);
      std::vector<std::string> names;
      long long sum = 0, at = t0;
      for (const ojson* s : stages)
        if (ns_of((*s)["ts"]) >= t0 && ns_of((*s)["ts"]) < t1) {
          names.push_back((*s)["name"]);
          CHECK(ns_of((*s)["ts"]) == at); // contiguous
          at = ns_of((*s)["ts"]) + ns_of((*s)["dur"]);
          sum += ns_of((*s)["dur"]);
        }
      if (t1 >= ns_of(t["metadata"]["window_end_us"]) || t0 == ns_of(t["metadata"]["window_start_us"]))
        continue; // cut by the window
      ++whole;
      CHECK(std::llabs(t1 - t0 - std::llround((*rt)["args"]["rtt_us"].get<double>() * 1000)) <= 1);
      CHECK(std::llabs(sum - (t1 - t0)) <= 10); // each stage rounded to its nanosecond
      REQUIRE(names.size() == 10);
      CHECK(names.front() == (direction == "guest_to_host" ? "guest send()" : "host send()"));
      CHECK(names.back() == (direction == "guest_to_host" ? "guest recv()" : "host DPC and recv()"));
    }
    CHECK(whole >= 3);
    // plot --timeline draws them: a row for the track, the spans and stages.
    const Run p = run_cli(dir, {"plot", "--timeline", "t.json", "--output", "tl.svg"});
    INFO("plot stderr: " << p.err);
    REQUIRE(p.status == 0);
    const std::string dat = read_file(dir.in_ws("tl.dat"));
    CHECK_THAT(dat, Catch::Contains("# round trips (request send() to response recv()): x centre, row, half width"));
    CHECK_THAT(dat, Catch::Contains("# round-trip stage reader wake-up: x centre"));
    CHECK_THAT(read_file(dir.in_ws("tl.gp")), Catch::Contains("set ytics (\"" + initiator + "\\nround trips\" 3, "));
  }
}
