#include "app/report/explain.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/experiment/experiment.hpp"
#include "app/report/advise.hpp"
#include "app/report/result_file.hpp"
#include "app/report/text.hpp"
#include "sim/breakdown.hpp"
#include "transports/simulate.hpp"
#include "transports/topology.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

namespace {

using json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The one rule of every verdict (issue 51, item 2; docs/model.md, "explain"):
// a point is CPU-bound when a thread is busy at least this share of the
// elapsed time (it saturates: its CPU has no time left for it); else it is
// limited by waiting, whatever the analytic bound says.
constexpr double kSaturatedPercent = 85;

struct View {
  const json& metrics;
  double get(const std::string& name, double dflt = kNaN) const
  {
    auto it = metrics.find(name);
    if (it == metrics.end() || !it->is_object() || !it->contains("mean") || !(*it)["mean"].is_number())
      return dflt;
    return (*it)["mean"].get<double>();
  }
  double count(const std::string& name) const { return get(name, 0); }
};

// The resolved parameters of a point, back from their JSON form.
Params params_from(const json& j)
{
  Params p;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const json& v = it.value();
    if (v.is_boolean())
      p.set(it.key(), v.get<bool>());
    else if (v.is_number_integer())
      p.set(it.key(), v.get<std::int64_t>());
    else if (v.is_number())
      p.set(it.key(), v.get<double>());
    else if (v.is_string())
      p.set(it.key(), v.get<std::string>());
  }
  return p;
}

struct Busy {
  std::string name;
  double busy = 0;
  std::array<double, kCats> cat{};
  std::string breakdown() const
  {
    std::vector<std::pair<double, int>> order;
    for (int c = 0; c < kCats; ++c)
      order.emplace_back(-cat[static_cast<std::size_t>(c)], c);
    std::sort(order.begin(), order.end());
    std::string s;
    for (auto [neg, c] : order)
      if (-neg >= 0.05)
        s += fmt::format("{}{} {:.1f}%", s.empty() ? "" : ", ", kBusyCategoryNames[c], -neg);
    return s.empty() ? "idle" : s;
  }
  const char* top_category() const
  {
    int best = 0;
    for (int c = 1; c < kCats; ++c)
      if (cat[static_cast<std::size_t>(c)] > cat[static_cast<std::size_t>(best)])
        best = c;
    return kBusyCategoryNames[best];
  }
};

// Every cpu.<x> or thread.<x> entity of the metrics, in metric (name) order.
std::vector<Busy> entities(const View& v, const std::string& prefix)
{
  std::vector<Busy> out;
  const std::string suffix = ".busy_percent";
  for (auto it = v.metrics.begin(); it != v.metrics.end(); ++it) {
    const std::string& k = it.key();
    if (k.rfind(prefix, 0) != 0 || k.size() <= prefix.size() + suffix.size() ||
        k.compare(k.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    Busy b;
    b.name = k.substr(prefix.size(), k.size() - prefix.size() - suffix.size());
    b.busy = v.count(k);
    for (int c = 0; c < kCats; ++c)
      b.cat[static_cast<std::size_t>(c)] =
          v.count(fmt::format("{}{}.{}_percent", prefix, b.name, kBusyCategoryNames[c]));
    out.push_back(b);
  }
  return out;
}

// Where a thread sits on the data path (writer first, reader last), from
// its transport's declaration of thread roles.
int path_rank(const std::string& t)
{
  const ThreadRole* r = thread_role(t);
  return r ? r->rank : 1000;
}

bool is_writer(const std::string& t)
{
  const ThreadRole* r = thread_role(t);
  return r && r->writer;
}

std::string fmt_rate(double mbps)
{
  return std::isfinite(mbps) ? fmt::format("{:.1f} MB/s", mbps) : "unbounded";
}

// The heading: the point, its transport, direction, connections and
// platform, and the simulated throughput.
std::string heading_text(const json& point, std::size_t position, const Params& p, const View& v)
{
  std::string label;
  if (point.contains("label") && point["label"].is_object())
    for (auto it = point["label"].begin(); it != point["label"].end(); ++it)
      label += fmt::format("{}{}={}", label.empty() ? "" : ", ", it.key(),
                           it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  auto text = [&](const char* key) { return p.has(key) ? value_to_string(p.get(key)) : std::string("?"); };
  const double packets = v.count("packets_per_MB");
  return fmt::format("point {}{}: {} {}, {} connection(s), platform {}\n", position,
                     label.empty() ? "" : " (" + label + ")", text("transport"), text("direction"),
                     text("workload.connections"), text("platform")) +
         fmt::format("  simulated: {} ({} packets per MB)\n", fmt_rate(v.get("throughput_MBps")),
                     packets > 0 ? fmt::format("{:.1f}", packets) : "?");
}

// The busiest of a list of CPUs or threads (nullptr for none).
const Busy* busiest(const std::vector<Busy>& xs)
{
  const auto it = std::max_element(xs.begin(), xs.end(), [](const Busy& a, const Busy& b) { return a.busy < b.busy; });
  return it == xs.end() ? nullptr : &*it;
}

// Which resource saturates: the busiest CPU and thread (top_thread: that
// thread, or nullptr when the result has no busy fractions).
std::string saturation_text(const std::vector<Busy>& cpus, const std::vector<Busy>& threads, const Busy*& top_thread)
{
  top_thread = nullptr;
  if (cpus.empty() || threads.empty())
    return "  (no per-CPU or per-thread busy fractions in this result: it predates them)\n";
  const Busy& c = *busiest(cpus);
  top_thread = busiest(threads);
  return fmt::format("  busiest CPU: {} at {:.1f}% ({}); busiest thread: {} at {:.1f}% ({})\n", c.name, c.busy,
                     c.breakdown(), top_thread->name, top_thread->busy, top_thread->breakdown());
}

// The platform graph of the point and its analytic bound (error: why not).
struct Graph {
  std::optional<PlatformPlan> plan;
  std::optional<Bound> bound;
  std::string error;

  explicit Graph(const Params& p)
  {
    try {
      plan = platform_plan(p);
      bound = throughput_bound(*plan, limits_for(*plan));
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  // The data-path stage a thread runs (the thread itself without a plan).
  std::string stage_of(const std::string& thread) const
  {
    if (plan)
      for (const ThreadLoad& l : plan->loads)
        if (l.thread == thread)
          return l.stage;
    return thread;
  }
};

// Each thread's busy share, in data-path order.
std::string stages_text(const std::vector<Busy>& threads, const Graph& g)
{
  if (threads.empty())
    return "";
  std::vector<Busy> path = threads;
  std::stable_sort(path.begin(), path.end(),
                   [](const Busy& a, const Busy& b) { return path_rank(a.name) < path_rank(b.name); });
  double total = 0;
  for (const Busy& b : path)
    total += b.busy;
  std::string out = "  stages (busy share of the elapsed time; share of all the busy time):\n";
  for (const Busy& b : path) {
    if (b.busy < 0.05)
      continue;
    out +=
        fmt::format("    {:<62} {:>6.1f}%  {:>5.1f}%  mostly {}\n", fmt::format("{} [{}]", g.stage_of(b.name), b.name),
                    b.busy, total > 0 ? b.busy / total * 100 : 0, b.top_category());
  }
  return out;
}

// The wait and signalling counters per MB the point has.
std::string waiting_text(const View& v)
{
  struct Wait {
    const char* metric;
    const char* words;
  };
  static const Wait waits[] = {
      {"ring_full_stalls_per_MB", "writer stalls on a full ring"},
      {"credit_stalls_per_MB", "writer credit stalls (no credit, waits for CREDIT_UPDATE)"},
      {"rx_buffer_stalls_per_MB", "vhost found no guest rx buffer"},
      {"reader_sleeps_per_MB", "reader sleeps (no data)"},
      {"socket_lock_waits_per_MB", "lock_sock found the socket held (slept)"},
      {"eagain_writes_per_MB", "non-blocking writes with no credit (EAGAIN)"},
      {"polls_per_MB", "select() calls of the benchmark"},
      {"worker_wakeups_per_MB", "vhost worker wake-ups from sleep"},
      {"signals_to_host_per_MB", "guest signals to the host"},
      {"kicks_per_MB", "guest kicks (VM exits)"},
      {"interrupts_to_guest_per_MB", "interrupts to the guest"},
      {"guest_wake_ipis_per_MB", "guest wake-ups across vCPUs (IPI, a VM exit each)"},
      {"host_wake_ipis_per_MB", "host wake-ups across CPUs (IPI)"},
      {"credit_updates_per_MB", "CREDIT_UPDATE packets"},
      {"host_dpc_runs_per_MB", "host DPC runs"},
  };
  const double packets = v.count("packets_per_MB");
  std::string wait_lines;
  for (const Wait& w : waits) {
    const double n = v.count(w.metric);
    if (n <= 0)
      continue;
    wait_lines += fmt::format("    {:<58} {:>9.2f} per MB{}\n", w.words, n,
                              packets > 0 ? fmt::format("  (one per {:.1f} packets)", packets / n) : "");
  }
  return wait_lines.empty() ? "" : "  waiting and signalling:\n" + wait_lines;
}

// Where the copies of another core's data found their lines (virtio-vsock
// with virtio_l2_bytes: models/cache_reuse.hpp).
std::string copies_text(const View& v)
{
  const double l3 = v.count("l3_copy_bytes_per_MB");
  if (!(l3 > 0))
    return "";
  return fmt::format("  copies out of the L3: {:.0f} bytes per MB of payload (lines their writer's L2 had evicted; "
                     "the rest of another core's data came out of that core's L2)\n",
                     l3);
}

// The occupancy of each ring or queue the point has.
std::string occupancy_text(const View& v)
{
  std::string out;
  for (const char* q : {"vmbus_ring", "virtio_tx", "virtio_rx"}) {
    const std::string pre = std::string("queue.") + q;
    if (std::isnan(v.get(pre + ".mean_percent")))
      continue;
    std::string hist;
    for (int b = 0; b < Occupancy::kBins; ++b) {
      double share = v.count(fmt::format("{}.time_{}_{}_percent", pre, b * 10, b * 10 + 10));
      if (share >= 0.5)
        hist += fmt::format(" {}-{}%:{:.0f}%", b * 10, b * 10 + 10, share);
    }
    out += fmt::format("  {} occupancy: mean {:.1f}% of capacity ({:.0f} {}), empty {:.1f}% of the time, time by "
                       "level:{}\n",
                       q, v.count(pre + ".mean_percent"), v.count(pre + ".mean"),
                       std::string(q) == "vmbus_ring" ? "bytes" : "chains", v.count(pre + ".empty_time_percent"),
                       hist.empty() ? " -" : hist);
  }
  return out;
}

// Beside the verdict: what of the point lies outside the data its profile
// was fitted on (the point's extrapolated_from_calibration).
std::string outside_calibration_text(const json& point)
{
  const auto it = point.find("extrapolated_from_calibration");
  if (it == point.end() || !it->is_array() || it->empty())
    return "";
  std::vector<std::string> items;
  for (const json& e : *it)
    if (e.is_string())
      items.push_back(e.get<std::string>());
  return items.empty() ? ""
                       : fmt::format("  note: outside what the profile was fitted on, so an extrapolation: {}\n",
                                     fmt::join(items, "; "));
}

// kSaturatedPercent's rule: the saturated thread (the busiest, if busy
// enough), else the saturated CPU its threads share; both null: waiting.
struct Saturated {
  const Busy* thread = nullptr;
  const Busy* cpu = nullptr;
};
Saturated saturated(const std::vector<Busy>& threads, const std::vector<Busy>& cpus)
{
  if (const Busy* t = busiest(threads); t && t->busy >= kSaturatedPercent)
    return {t, nullptr};
  if (const Busy* c = busiest(cpus); c && c->busy >= kSaturatedPercent)
    return {nullptr, c};
  return {};
}

// The verdict when the busiest thread is what limits the point.
std::string cpu_verdict(const View& v, const Graph& g, const Busy& top_thread)
{
  const double packets = v.count("packets_per_MB");
  std::string why;
  const ThreadRole* role = thread_role(top_thread.name);
  if (role && !role->bottleneck.empty()) {
    double cycles = 0;
    std::string what;
    if (g.plan)
      for (const ThreadLoad& l : g.plan->loads)
        if (l.thread == top_thread.name) {
          cycles = l.cycles_per_MB;
          what = l.what;
        }
    why = cycles > 0 ? fmt::format("{}; at least {:.0f} cycles per MB, {:.0f} per data packet ({})", role->bottleneck,
                                   cycles, packets > 0 ? cycles / packets : 0, what)
                     : role->bottleneck;
  } else
    why = fmt::format("the {} is the bottleneck", g.stage_of(top_thread.name));
  std::string bound;
  if (g.bound)
    bound =
        g.bound->binding.top_thread == top_thread.name
            ? fmt::format(" The bound agrees: {} is the most loaded CPU, most of it this thread.", g.bound->binding.cpu)
            : fmt::format(" (The analytic bound's most loaded CPU is {}, set by {}: the simulation's busiest "
                          "thread is not the one the costs alone rank first.)",
                          g.bound->binding.cpu, g.bound->binding.top_thread);
  return fmt::format("  verdict: CPU limits this point: {} [{}] is busy {:.1f}% of the time (saturated: at least "
                     "{:.0f}%), mostly {} ({}).{}\n",
                     g.stage_of(top_thread.name), top_thread.name, top_thread.busy, kSaturatedPercent,
                     top_thread.top_category(), why, bound);
}

// The verdict when waiting, not CPU, limits the point: the writers' idle
// time per stall and the dominant wait.
std::string waiting_verdict(const View& v, const Params& p, const std::vector<Busy>& threads, const Busy* top_thread,
                            double ratio)
{
  // ratio: simulated over the analytic bound, NaN when there is none.
  const double thr = v.get("throughput_MBps");
  const double packets = v.count("packets_per_MB");
  double writer_busy = 0;
  int writers = 0;
  for (const Busy& b : threads)
    if (is_writer(b.name)) {
      writer_busy += b.busy;
      ++writers;
    }
  const double writer_idle = writers ? 1.0 - writer_busy / writers / 100.0 : kNaN;
  auto per_event_us = [&](double per_mb) { return writers * writer_idle / (per_mb * thr) * 1e6; };
  const double stalls = v.count("ring_full_stalls_per_MB"), credit = v.count("credit_stalls_per_MB");
  const double rxbuf = v.count("rx_buffer_stalls_per_MB"), sleeps = v.count("reader_sleeps_per_MB");
  std::string out =
      fmt::format("  verdict: waiting, not CPU, is the limit ({}no thread is saturated{}). ",
                  std::isnan(ratio) ? "" : fmt::format("simulated {:.0f}% of the CPU bound; ", ratio * 100),
                  top_thread ? fmt::format(": the busiest, {}, is busy {:.0f}%, under {:.0f}%", top_thread->name,
                                           top_thread->busy, kSaturatedPercent)
                             : "");
  if (stalls > 0) {
    const std::string direction = p.has("direction") ? value_to_string(p.get("direction")) : std::string("?");
    const std::string ring_key = direction == "host_to_guest" ? "ring_bytes_host_to_guest" : "ring_bytes_guest_to_host";
    const double ring = v.count(ring_key);
    out += fmt::format("Fill-drain ping-pong: the writer fills the {}-byte ring ({:.0f} data bytes), stalls on it "
                       "full {:.1f} times per MB -- once every {:.1f} packets -- and each stall waits about {:.1f} us "
                       "for a round trip (the host drains the ring, signals back, the interrupt on vCPU 0 wakes the "
                       "writer) while its CPU idles ({:.0f}% idle). The ring is too small to cover the round trip.\n",
                       ring, ring - 4096, stalls, packets / stalls, per_event_us(stalls), writer_idle * 100);
  } else if (credit > 0) {
    out += fmt::format("Credit stalls: the writer runs out of credit {:.2f} times per MB (once every {:.1f} packets) "
                       "and waits about {:.1f} us each for a CREDIT_UPDATE ({:.2f} per MB) to come back.\n",
                       credit, packets / credit, per_event_us(credit), v.count("credit_updates_per_MB"));
  } else if (rxbuf > 0) {
    out += fmt::format("Rx buffer starvation: vhost finds no guest rx buffer {:.2f} times per MB and waits for the "
                       "guest's refill and kick.\n",
                       rxbuf);
  } else if (sleeps > 0) {
    out += fmt::format("Signalling latency: the reader sleeps {:.2f} times per MB (once every {:.1f} packets) "
                       "waiting for data; each wake-up waits for a signal ({:.2f} interrupts, {:.2f} kicks per MB).\n",
                       sleeps, packets / sleeps, v.count("interrupts_to_guest_per_MB"), v.count("kicks_per_MB"));
  } else {
    out += "No wait counter of the result explains the gap.\n";
  }
  return out;
}

} // namespace

// The mechanisms that landed in the simulated round trips (the point's
// round_trip_stages.causes): per cause, its time per round trip near the
// median and at or beyond p99, the share of those round trips it landed
// in, what it adds to the tail, and the stage it landed in most there.
static std::string causes_text(const json& st, double tail_adds)
{
  const auto cs = st.find("causes");
  if (cs == st.end() || !cs->is_array() || cs->empty())
    return "";
  auto num = [](const json& j, const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
  std::string out = "  the mechanisms that landed in them (the time each took while a round trip was in flight, "
                    "per round trip, and in what share of the round trips; the path waits for it only where it "
                    "runs on the path):\n";
  std::vector<std::vector<std::string>> rows = {
      {"    mechanism", "near median", "p99 and beyond", "p99 - median", "there mostly in"}};
  std::string top;
  double top_adds = 0, top_share = 0, top_us = 0;
  std::string top_where, never;
  for (const json& c : *cs) {
    const double m = num(c, "median_us"), t = num(c, "p99_us");
    std::string where = "-";
    double most = 0;
    if (c.contains("stages") && c["stages"].is_array())
      for (const json& s : c["stages"])
        if (num(s, "p99_us") > most) {
          most = num(s, "p99_us");
          where = s.value("stage", std::string("?"));
        }
    const std::string name = c.value("cause", std::string("?"));
    if (num(c, "median_share") == 0 && num(c, "p99_share") == 0) {
      never += (never.empty() ? "" : ", ") + name;
      continue;
    }
    if (t - m > top_adds) {
      top_adds = t - m;
      top = name;
      top_share = num(c, "p99_share");
      top_us = t;
      top_where = where;
    }
    rows.push_back({"    " + name, fmt::format("{:.2f} us ({:.0f}%)", m, num(c, "median_share") * 100),
                    fmt::format("{:.2f} us ({:.0f}%)", t, num(c, "p99_share") * 100),
                    fmt::format("{:+.2f} us", std::abs(t - m) < 0.005 ? 0.0 : t - m), where});
  }
  if (rows.size() > 1)
    out += render_columns(rows);
  if (!never.empty())
    out += fmt::format("    never landed in them: {} (off in the platform profile, or never on the path)\n", never);
  if (tail_adds > 0 && !top.empty())
    out += fmt::format(
        "  the tail's mechanism: {} landed in {:.0f}% of the round trips at or beyond p99 ({:.2f} us per round trip "
        "there, mostly in {}), against {:.2f} us near the median; the tail adds {:.2f} us\n",
        top, top_share * 100, top_us, top_where, top_us - top_adds, tail_adds);
  else if (tail_adds > 0)
    out += "  no modelled mechanism landed more in the tail's round trips than near the median: the tail is other "
           "work on the path and the latencies' jitter\n";
  return out;
}

// Whether the round-trip tail rests on a fit (issue 53): the profile's fit
// rows that are percentiles of the round trip, or the words that say none
// were.
static std::string tail_fit_text(const Params& p, const json* profile)
{
  const std::string name = p.has("platform") ? p.text("platform") : std::string("?");
  if (!profile || !profile->is_object())
    return "";
  std::map<std::string, int> percentiles; // metric -> fit rows
  int rows = 0;
  if (const auto f = profile->find("fit"); f != profile->end() && f->is_object() && f->contains("rows"))
    for (const json& r : (*f)["rows"]) {
      ++rows;
      const std::string m = r.value("metric", std::string());
      if (r.value("role", std::string()) == "fit" && m.starts_with("rtt_p") && m != "rtt_p50_us")
        ++percentiles[m];
    }
  if (percentiles.empty())
    return fmt::format("  the tail is not fitted: platform {}'s fit ({} rows) had no round-trip percentile rows, so "
                       "the tail's size is its mechanisms' at their priors and not checked against a measured p1 or "
                       "p99\n",
                       name, rows);
  std::string what;
  for (const auto& [m, n] : percentiles)
    what += fmt::format("{}{} {}", what.empty() ? "" : ", ", n, m);
  return fmt::format("  the tail was fitted: platform {}'s fit had round-trip percentile rows ({})\n", name, what);
}

// The simulated round trips stage by stage (the point's round_trip_stages,
// docs/results.md): each stage's mean near the median and at or beyond p99,
// and what the tail adds, largest first named.
std::string tail_text(const json& point)
{
  const auto st = point.find("round_trip_stages");
  if (st == point.end() || !st->is_object() || !st->contains("stages") || !(*st)["stages"].is_array())
    return "  the tail: not attributed to stages (only round trips alone in flight on their connection are; this "
           "point has none, or its result predates per-stage times)\n";
  auto num = [](const json& j, const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : kNaN; };
  const double n_med = num(*st, "median_round_trips"), n_tail = num(*st, "p99_round_trips");
  std::string out = fmt::format("  simulated, stage by stage (each stage's mean over the {:.0f} round trips near the "
                                "median and the {:.0f} at or beyond p99, from the per-stage timestamps):\n",
                                n_med, n_tail);
  std::vector<std::vector<std::string>> rows = {{"    stage", "near median", "p99 and beyond", "the tail adds"}};
  double med = 0, tail = 0, top = -std::numeric_limits<double>::infinity();
  std::string top_stage;
  for (const json& s : (*st)["stages"]) {
    const double m = num(s, "median_us"), t = num(s, "p99_us");
    const std::string name = s.value("stage", std::string("?"));
    med += std::isnan(m) ? 0 : m;
    tail += std::isnan(t) ? 0 : t;
    const double adds = t - m;
    if (!std::isnan(adds) && adds > top) {
      top = adds;
      top_stage = name;
    }
    rows.push_back({"    " + name, std::isnan(m) ? "-" : fmt::format("{:.2f} us", m),
                    std::isnan(t) ? "-" : fmt::format("{:.2f} us", t),
                    std::isnan(adds) ? "-" : fmt::format("{:+.2f} us", std::abs(adds) < 0.005 ? 0.0 : adds)});
  }
  rows.push_back({"    round trip", fmt::format("{:.2f} us", med), fmt::format("{:.2f} us", tail),
                  fmt::format("{:+.2f} us", tail - med)});
  out += render_columns(rows);
  if (!top_stage.empty() && tail - med > 0)
    out += fmt::format("  the tail: {} adds the most ({:.2f} us, {:.0f}% of the {:.2f} us the tail adds)\n", top_stage,
                       top, top / (tail - med) * 100, tail - med);
  out += causes_text(*st, tail - med);
  return out;
}

// A round-trip point: the median and the tail, the critical path of one
// round trip from the point's costs with every jitter off, stage by stage,
// and the simulated round trips' stages near the median and in the tail.
std::string round_trip_text(const View& v, const Params& p, const json& point)
{
  const double p50 = v.get("rtt_p50_us"), p99 = v.get("rtt_p99_us");
  std::string out =
      fmt::format("  round trip: median {:.2f} us, p99 {:.2f} us (the tail adds {:.2f} us, {:.0f}%), "
                  "mean {:.2f} us, {:.0f} round trips/s\n",
                  p50, p99, p99 - p50, (p99 / p50 - 1) * 100, v.get("rtt_mean_us"), v.get("transactions_per_second"));
  const Transport* t = find_transport(p.text("transport"));
  // No analytic critical path for this transport (issue 51, item 6: say
  // what is missing, not just that something is): the stages are the
  // simulation's own.
  if (!t || !t->round_trip_path)
    return out +
           fmt::format("  (no critical path worked out from the costs for {} yet, to set the simulated median "
                       "against; the stages below are the simulated round trips' own)\n",
                       p.text("transport")) +
           tail_text(point);
  const std::vector<RoundTripStage> path = t->round_trip_path(p);
  double total = 0;
  for (const RoundTripStage& s : path)
    total += s.cycles;
  const double us_per_cycle = 1 / (p.number("costs.clock_ghz") * 1e3);
  out += fmt::format("  its critical path with every jitter off (the point's costs): {:.2f} us = {:.0f}% of the "
                     "simulated median\n",
                     total * us_per_cycle, total * us_per_cycle / p50 * 100);
  std::vector<std::vector<std::string>> rows;
  for (const RoundTripStage& s : path)
    rows.push_back({"    " + s.stage, fmt::format("{:.2f} us", s.cycles * us_per_cycle),
                    fmt::format("{:.0f}%", s.cycles / total * 100), s.kernel});
  out += render_columns(rows);
  if (const double rest = p50 - total * us_per_cycle; rest > 0.1 * p50)
    out += fmt::format("  the other {:.2f} us of the median: waits this path leaves out (a message larger than its "
                       "ring: {:.2f} ring-full stalls per MB, {:.2f} reader sleeps per MB)\n",
                       rest, v.count("ring_full_stalls_per_MB"), v.count("reader_sleeps_per_MB"));
  return out + tail_text(point);
}

// Member m's metrics (sim.ensemble), in the form a point's have: each
// metric's member value as its "mean".
json member_metrics(const json& metrics, std::size_t m)
{
  json out = json::object();
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    const json& e = it->is_object() && it->contains("ensemble") ? (*it)["ensemble"] : json();
    if (e.is_object() && e.contains("values") && e["values"].is_array() && m < e["values"].size() &&
        e["values"][m].is_number())
      out[it.key()] = json{{"mean", e["values"][m]}};
  }
  return out;
}

// One member's verdict, as explain_point gives it for the point: the stage
// whose thread is busiest when the simulation reaches the CPU bound (with
// the member's costs), else waiting; a round trip has none.
std::string member_verdict(const json& metrics, const Params& p)
{
  const View v{metrics};
  const std::vector<Busy> threads = entities(v, "thread.");
  if (threads.empty())
    return "";
  const std::vector<Busy> cpus = entities(v, "cpu."); // `limit` points into both lists
  const Saturated limit = saturated(threads, cpus);   // explain_point's rule
  if (limit.thread)
    return fmt::format("CPU: {} [{}]", Graph(p).stage_of(limit.thread->name), limit.thread->name);
  if (limit.cpu)
    return fmt::format("CPU: {}, shared by its threads", limit.cpu->name);
  return "waiting, not CPU";
}

// The point's ensemble (sim.ensemble): its headline figures' p10..p90 over
// the members, and what limits each member, with the share of the members
// each verdict has ("" for a point without one).
std::string ensemble_explain_text(const json& point, const Params& p)
{
  const json& e = point.contains("ensemble") ? point["ensemble"] : json();
  if (!e.is_object() || !e.contains("members") || !e["members"].is_number_unsigned())
    return "";
  const std::size_t n = e["members"].get<std::size_t>();
  const json& metrics = point["metrics"];
  std::string out = fmt::format("  ensemble: {} members (cost vectors that fit the profile's rows within their "
                                "noise), each simulated once:\n",
                                n);
  for (const char* name : {"throughput_MBps", "rtt_p50_us", "rtt_p99_us", "guest_cpu_percent", "host_cpu_percent"}) {
    const auto it = metrics.find(name);
    if (it == metrics.end() || !it->is_object() || !it->contains("ensemble"))
      continue;
    const json& s = (*it)["ensemble"];
    out += fmt::format("    {:<20} p50 {:.4g} [p10 {:.4g}, p90 {:.4g}] {} ({} members)\n", name, s.value("p50", kNaN),
                       s.value("p10", kNaN), s.value("p90", kNaN), metric_unit(name), s.value("members", 0));
  }
  std::map<std::string, std::size_t> verdicts;
  std::size_t judged = 0;
  for (std::size_t m = 0; m < n; ++m) {
    Params mp = p;
    if (e.contains("costs") && e["costs"].is_array() && m < e["costs"].size() && e["costs"][m].is_object())
      for (auto c = e["costs"][m].begin(); c != e["costs"][m].end(); ++c)
        if (c->is_number())
          mp.set("costs." + c.key(), c->get<double>());
    const std::string v = member_verdict(member_metrics(metrics, m), mp);
    if (v.empty())
      continue;
    ++verdicts[v];
    ++judged;
  }
  if (judged == 0)
    return out;
  std::vector<std::pair<std::size_t, std::string>> order; // most members first, then by name
  for (const auto& [v, k] : verdicts)
    order.emplace_back(k, v);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  out += "    what limits the members:";
  for (std::size_t i = 0; i < order.size(); ++i)
    out += fmt::format("{} {} in {} of {} ({:.0f}%)", i ? ";" : "", order[i].second, order[i].first, judged,
                       100.0 * static_cast<double>(order[i].first) / static_cast<double>(judged));
  out += order.size() == 1 ? " (every member agrees)\n" : "\n";
  return out;
}

// Beside the verdict: the point's profile breaks ties or has costs outside
// their plausible ranges (the manifest's caveats, transports/profiles.hpp
// profile_caveats), so the stage that binds may be one its fit made bind.
static std::string profile_caveat_text(const json* profile)
{
  if (profile == nullptr || !profile->is_object())
    return "";
  std::vector<std::string> items;
  if (const auto c = profile->find("caveats"); c != profile->end() && c->is_array())
    for (const json& item : *c)
      if (item.is_string())
        items.push_back(item.get<std::string>());
  if (items.empty())
    return "";
  return fmt::format("  note: the platform {}: what binds here may be what its fit made bind\n",
                     fmt::join(items, "; "));
}

std::string explain_point(const json& point, std::size_t position, const json* profile)
{
  if (!point.is_object() || !point.contains("params") || !point["params"].is_object() || !point.contains("metrics") ||
      !point["metrics"].is_object())
    throw InputError(
        fmt::format("point {} has no params or metrics (allowed: a point of a vsocksim result)", position));
  const View v{point["metrics"]};
  const Params p = params_from(point["params"]);
  const std::vector<Busy> cpus = entities(v, "cpu."), threads = entities(v, "thread.");
  const Busy* top_thread = nullptr;
  std::string out = heading_text(point, position, p, v) + saturation_text(cpus, threads, top_thread);
  if (!std::isnan(v.get("rtt_p50_us")))
    return out + round_trip_text(v, p, point) + tail_fit_text(p, profile) + profile_caveat_text(profile) +
           ensemble_explain_text(point, p);
  const Graph g(p);
  out += stages_text(threads, g) + waiting_text(v) + copies_text(v) + occupancy_text(v);
  double ratio = kNaN;
  if (!g.bound)
    out += "  bound: not computed (" + g.error + ")\n";
  else {
    const CpuLoad& bind = g.bound->binding;
    ratio = v.get("throughput_MBps") / g.bound->MBps;
    out += fmt::format("  analytic bound: {} ({} per connection), set by {} ({:.0f} cycles per MB at {} GHz; "
                       "mostly {} [{}]: {}); simulated = {:.0f}% of it\n",
                       fmt_rate(g.bound->MBps), fmt_rate(g.bound->per_connection_MBps), bind.cpu, bind.cycles_per_MB,
                       g.plan->clock_ghz, bind.top_stage, bind.top_thread, bind.top_what, ratio * 100);
  }
  // One rule (kSaturatedPercent), the bound or not: a saturated thread, else
  // a saturated CPU (threads sharing it, e.g. iperf3's streams), else waiting.
  const Saturated limit = saturated(threads, cpus);
  if (limit.thread)
    out += cpu_verdict(v, g, *limit.thread);
  else if (limit.cpu)
    out += fmt::format("  verdict: CPU limits this point: {} is busy {:.1f}% of the time (saturated: at least "
                       "{:.0f}%; {}), shared by its threads, none saturated alone (the busiest, {}, {:.1f}%).\n",
                       limit.cpu->name, limit.cpu->busy, kSaturatedPercent, limit.cpu->breakdown(),
                       top_thread ? top_thread->name : "?", top_thread ? top_thread->busy : 0.0);
  else
    out += waiting_verdict(v, p, threads, top_thread, ratio);
  return out + outside_calibration_text(point) + profile_caveat_text(profile) + ensemble_explain_text(point, p);
}

namespace {

const char* const kResultAllowed = "allowed: the JSON written by `vsocksim run --format json` or the result.json of "
                                   "`run --output DIR`";

// The result at `path` with at least one point, and the file it was read from.
std::pair<json, std::string> read_points(const std::string& path)
{
  const std::string allowed = kResultAllowed;
  ResultJson read;
  try {
    read = read_result_json(path);
  } catch (const ResultFileError& e) {
    throw InputError(
        fmt::format("{}: error: {} ({})", e.file,
                    e.kind == ResultFileError::Kind::Unreadable ? "cannot open the file" : "not valid JSON", allowed));
  }
  const std::string& file = read.file;
  const json doc = read.doc; // explain reads a point's metrics in name order
  if (!doc.is_object() || !doc.contains("points") || !doc["points"].is_array())
    throw InputError(fmt::format("{}: error: not a vsocksim result: no \"points\" array ({})", file, allowed));
  if (doc["points"].empty())
    throw InputError(fmt::format("{}: error: the result has no points ({})", file, allowed));
  return {doc, file};
}

// The point's platform profile in the result's manifest, or nullptr.
const json* profile_of(const json& doc, const json& point)
{
  if (!doc.contains("manifest") || !doc["manifest"].is_object() || !doc["manifest"].contains("platforms") ||
      !point.contains("params") || !point["params"].is_object() || !point["params"].contains("platform") ||
      !point["params"]["platform"].is_string())
    return nullptr;
  const json& platforms = doc["manifest"]["platforms"];
  const auto it = platforms.find(point["params"]["platform"].get<std::string>());
  return it == platforms.end() ? nullptr : &*it;
}

} // namespace

std::string advise_result(const std::string& path)
{
  const auto [doc, file] = read_points(path);
  return advise_text(doc, file);
}

std::string explain_result(const std::string& path, std::optional<long long> point)
{
  const auto [doc, file] = read_points(path);
  const json& points = doc["points"];
  std::string out;
  if (doc.contains("experiment") && doc["experiment"].is_string())
    out += fmt::format("experiment {}: {} point(s)\n\n", doc["experiment"].get<std::string>(), points.size());
  if (point) {
    if (*point < 0 || static_cast<std::size_t>(*point) >= points.size())
      throw InputError(
          fmt::format("{}: error: --point {} is out of range (allowed: 0 to {})", file, *point, points.size() - 1));
    const json& pt = points[static_cast<std::size_t>(*point)];
    return out + explain_point(pt, static_cast<std::size_t>(*point), profile_of(doc, pt));
  }
  for (std::size_t i = 0; i < points.size(); ++i)
    out += (i ? "\n" : "") + explain_point(points[i], i, profile_of(doc, points[i]));
  return out;
}

} // namespace vsim::app
