#include "transports/simulate.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "sim/breakdown.hpp"
#include "sim/rng.hpp"
#include "transports/transport.hpp"

namespace vsim {

namespace {

// The point's transport (experiment loading has checked it exists).
const Transport& transport_of(const Params& params)
{
  const std::string& transport = params.text("transport");
  if (const Transport* t = find_transport(transport))
    return *t;
  throw std::logic_error("transport '" + transport + "' is not implemented");
}

} // namespace

std::map<std::string, double> params_metrics(const Params& params)
{
  double bytes = 0;
  for (const Effective& part : transport_of(params).memory(params))
    bytes += part.value;
  return {{"memory_bytes_per_connection", bytes}};
}

std::map<std::string, double> simulate_iteration(const Params& params, std::uint32_t iteration)
{
  std::map<std::string, double> m = transport_of(params).simulate(params, iteration, nullptr);
  m.merge(params_metrics(params));
  return m;
}

std::map<std::string, double> simulate_traced(const Params& params, std::uint32_t iteration, Trace& trace)
{
  std::map<std::string, double> m = transport_of(params).simulate(params, iteration, &trace);
  m.merge(params_metrics(params));
  return m;
}

double connection_start_interval(const Params& params)
{
  return std::round(params.number("workload.start_interval") * 1e3 * params.number("costs.clock_ghz"));
}

std::uint64_t round_trip_bytes(const Params& params)
{
  if (!params.has("workload.pattern"))
    return 0;
  const std::string& pattern = params.text("workload.pattern");
  if (pattern == "ping_pong")
    return 2 * static_cast<std::uint64_t>(params.integer("workload.message_size"));
  if (pattern == "request_response")
    return static_cast<std::uint64_t>(params.integer("workload.request_size") +
                                      params.integer("workload.response_size"));
  return 0;
}

std::uint64_t workload_bytes(const Params& params)
{
  if (const std::uint64_t rt = round_trip_bytes(params))
    return rt * static_cast<std::uint64_t>(params.integer("workload.transactions"));
  return static_cast<std::uint64_t>(params.integer("workload.total_bytes"));
}

void append_round_trip_metrics(std::map<std::string, double>& m, const RoundTrips& rt)
{
  const Histogram& h = rt.histogram();
  m["rtt_mean_us"] = h.mean();
  for (const auto& [name, q] : {std::pair<const char*, double>{"rtt_p1_us", 0.01},
                                {"rtt_p50_us", 0.5},
                                {"rtt_p90_us", 0.9},
                                {"rtt_p99_us", 0.99},
                                {"rtt_p999_us", 0.999}})
    m[name] = h.quantile(q);
  const double n = static_cast<double>(rt.count());
  const double secs = m.at("elapsed_seconds");
  m["transactions_per_second"] = n / secs;
  m["guest_cpu_us_per_transaction"] = m.at("guest_cpu_percent") / 100 * secs * 1e6 / n;
  m["host_cpu_us_per_transaction"] = m.at("host_cpu_percent") / 100 * secs * 1e6 / n;
}

void append_round_trip_histogram(std::map<std::string, double>& m, const RoundTrips& rt)
{
  for (const auto& [bucket, n] : rt.histogram().counts())
    m[kRttHistogramPrefix + std::to_string(bucket)] = static_cast<double>(n);
}

void append_round_trip_stages(std::map<std::string, double>& m, const RoundTrips& rt)
{
  for (const RttStageBand& b : kRttStageBands) {
    const RoundTrips::Band band = rt.band(b.q_lo, b.q_hi);
    if (!band.round_trips)
      continue;
    const std::string prefix = std::string(kRttStagePrefix) + b.name + ".";
    m[prefix + "round_trips"] = static_cast<double>(band.round_trips);
    for (std::size_t i = 0; i < band.mean_us.size(); ++i)
      m[fmt::format("{}{:02}.{}", prefix, i, rt.stages()[i])] = band.mean_us[i];
    // The causes that landed in them (RoundTrips::note): time per round
    // trip, and the share of round trips they landed in.
    const std::size_t nc = rt.causes().size();
    for (std::size_t i = 0; i < nc; ++i) {
      m[fmt::format("{}cause.{}", prefix, rt.causes()[i])] = band.cause_us[i];
      m[fmt::format("{}cause_share.{}", prefix, rt.causes()[i])] = band.cause_share[i];
    }
    // By stage, where any landed: "<band>.cause_in.<NN>.<cause>".
    for (std::size_t i = 0; i < band.cause_stage_us.size(); ++i)
      if (band.cause_stage_us[i] > 0)
        m[fmt::format("{}cause_in.{:02}.{}", prefix, i / nc, rt.causes()[i % nc])] = band.cause_stage_us[i];
  }
}

void set_up_cpu_noise(World& w, const SharedCosts& k, std::uint64_t seed, std::uint32_t iteration, RoundTrips* rt)
{
  if (rt) {
    // The order of NoiseCause.
    rt->add_cause("guest tick");
    rt->add_cause("host tick");
    rt->add_cause("host idle exit");
  }
  const double hz_cycles = k.clock_ghz * 1e9;
  // One grid: its period in whole cycles, its phase drawn in [0, period).
  auto grid = [&](const Cpu& c, double hz, double cycles, const char* side) {
    const double period = std::round(hz_cycles / hz);
    Rng rng(seed, iteration, fmt::format("tick:{}:{}", c.name(), side));
    return Cpu::Tick{period, std::floor(rng.uniform() * period), std::round(cycles), Cat::Irq};
  };
  std::vector<Cpu::IdleState> states;
  if (k.host_idle_c1_exit > 0 || k.host_idle_c1e_exit > 0 || k.host_idle_c6_exit > 0) {
    // intel_idle: C1's target residency is its exit latency.
    states.push_back({k.host_idle_c1_exit, k.host_idle_c1_exit});
    if (k.host_idle_c1e_exit > 0)
      states.push_back({k.host_idle_c1e_exit, k.host_idle_c1e_residency});
    if (k.host_idle_c6_exit > 0)
      states.push_back({k.host_idle_c6_exit, k.host_idle_c6_residency});
  }
  for (const auto& c : w.cpus()) {
    const bool guest = c->side() == Side::Guest;
    std::vector<int> causes;
    if (guest && k.guest_tick_hz > 0) {
      c->add_tick(grid(*c, k.guest_tick_hz, k.guest_tick, "guest"));
      causes.push_back(kCauseGuestTick);
    }
    if (k.host_tick_hz > 0) {
      c->add_tick(grid(*c, k.host_tick_hz, k.host_tick, "host"));
      causes.push_back(kCauseHostTick);
    }
    if (rt && !causes.empty())
      c->on_tick([rt, causes](int g, double cycles) { rt->note(causes.at(static_cast<std::size_t>(g)), cycles); });
    if (!states.empty())
      c->set_idle_states(states, k.clock_ghz * 1e3);
  }
}

double idle_exit(Cpu& cpu, Time now, RoundTrips* rt)
{
  const double exit = cpu.wake_from_idle(now);
  if (rt && exit > 0)
    rt->note(kCauseIdleExit, exit);
  return exit;
}

PlatformPlan platform_plan(const Params& params)
{
  return transport_of(params).plan(params);
}

bool connection_g2h(const std::string& direction, int i, int n)
{
  if (direction == "bidirectional")
    return i < (n + 1) / 2;
  return direction == "guest_to_host";
}

std::vector<MetricDecl> direction_metric_decls()
{
  return {
      {MetricPlace::Figure,
       {"throughput_guest_to_host_Gbps", "Gbit/s", Scaling::BytesOver,
        "direction bidirectional: throughput of the connections the guest writes (the first half) in 10^9 "
        "bits/s"}},
      {MetricPlace::Figure,
       {"throughput_host_to_guest_Gbps", "Gbit/s", Scaling::BytesOver,
        "direction bidirectional: throughput of the connections the host writes in 10^9 bits/s"}},
  };
}

void append_direction_metrics(std::map<std::string, double>& m, double secs, std::uint64_t g2h_bytes,
                              std::uint64_t h2g_bytes)
{
  m["throughput_guest_to_host_Gbps"] = static_cast<double>(g2h_bytes) * 8 / secs / 1e9;
  m["throughput_host_to_guest_Gbps"] = static_cast<double>(h2g_bytes) * 8 / secs / 1e9;
}

const std::vector<MetricDecl>& shared_metrics()
{
  static const std::vector<MetricDecl> decls = {
      // Counted for every transport by append_run_metrics() (sim/summary.cpp).
      {MetricPlace::Run,
       {"throughput_MBps", "MB/s", Scaling::BytesOver,
        "payload bytes delivered to readers / elapsed time, all connections (MB = 10^6 B)"}},
      {MetricPlace::Run,
       {"elapsed_seconds", "s", Scaling::Total,
        "simulated time from the first send() until the last byte is received"}},
      {MetricPlace::Run,
       {"writer_sys_seconds", "s", Scaling::Total,
        "kernel (and hypercall) CPU time of the writer threads, as `time` reports it"}},
      {MetricPlace::Run, {"writer_user_seconds", "s", Scaling::Total, "user CPU time of the writer threads"}},
      {MetricPlace::Run,
       {"reader_sys_seconds", "s", Scaling::Total, "kernel (and hypercall) CPU time of the reader threads"}},
      {MetricPlace::Run, {"reader_user_seconds", "s", Scaling::Total, "user CPU time of the reader threads"}},
      {MetricPlace::Run,
       {"guest_cpu_percent", "%", Scaling::PerTime, "busy time of all guest vCPUs / elapsed x 100, as `top` sums it"}},
      {MetricPlace::Run, {"host_cpu_percent", "%", Scaling::PerTime, "busy time of all host CPUs / elapsed x 100"}},
      // Round-trip workloads (workload.pattern ping_pong, request_response):
      // append_round_trip_metrics().
      {MetricPlace::Run,
       {"rtt_mean_us", "us", Scaling::AsIs,
        "mean round trip: the initiator's send() of a request until its recv() completing the response returns "
        "(round-trip patterns)"}},
      {MetricPlace::Run, {"rtt_p1_us", "us", Scaling::AsIs, "1st percentile of the round trip (nearest rank)"}},
      {MetricPlace::Run, {"rtt_p50_us", "us", Scaling::AsIs, "median round trip (nearest rank)"}},
      {MetricPlace::Run, {"rtt_p90_us", "us", Scaling::AsIs, "90th percentile of the round trip (nearest rank)"}},
      {MetricPlace::Run, {"rtt_p99_us", "us", Scaling::AsIs, "99th percentile of the round trip (nearest rank)"}},
      {MetricPlace::Run, {"rtt_p999_us", "us", Scaling::AsIs, "99.9th percentile of the round trip (nearest rank)"}},
      {MetricPlace::Run,
       {"transactions_per_second", "1/s", Scaling::BytesOver,
        "round trips completed per second of simulated time, all connections"}},
      {MetricPlace::Run,
       {"guest_cpu_us_per_transaction", "us", Scaling::PerByte,
        "busy time of all guest vCPUs per round trip (interrupts and exits included)"}},
      {MetricPlace::Run,
       {"host_cpu_us_per_transaction", "us", Scaling::PerByte, "busy time of all host CPUs per round trip"}},
      // Decided by the parameters alone (params_metrics).
      {MetricPlace::Size,
       {"memory_bytes_per_connection", "B", Scaling::AsIs,
        "what one connection holds in guest and host memory at most: its rings and buffers allocated at set-up "
        "(hv_sock: the VMBus ring pages each way and the send buffer; virtio_vsock: its share of the rx, tx and "
        "event virtqueue rings and of the posted rx buffers) and what its socket buffer limits let it queue "
        "(virtio_vsock: buf_alloc at each end); the parts are the point's effective.memory_* values "
        "(docs/results.md)"}},
      {MetricPlace::Engine,
       {"sim_events", "", Scaling::AsIs,
        "events the run processed: steps of simulated threads (a cost of the simulator, not of the system)"}},
      {MetricPlace::Engine,
       {"sim_simcalls", "", Scaling::AsIs,
        "SimGrid main-loop iterations (kernel-timer firings): the events that had to wait for others"}},
      // Families (sim/breakdown.hpp): <...> is a CPU, thread or queue name, {a|b} one of the words.
      {MetricPlace::Family,
       {"cpu.<cpu>.{user|sys|irq|hypervisor|busy}_percent", "%", Scaling::PerTime,
        "time the CPU (vcpuN, hcpuN) spent in that category (busy: all four) / elapsed x 100"}},
      {MetricPlace::Family,
       {"thread.<thread>.{user|sys|irq|hypervisor|busy}_percent", "%", Scaling::PerTime,
        "the same per thread; the interrupt context (vmbus_isr, virtio_irq) includes the interrupt work of its "
        "vCPU, kworker_<cpu> is the kworkers of that vCPU's worker pool (virtio_vsock: send, rx and tx work)"}},
      {MetricPlace::Family,
       {"queue.<queue>.mean", "B or chains", Scaling::PerTime,
        "time-weighted mean level: vmbus_ring bytes in use (writer's view), virtio_tx / virtio_rx chains in flight"}},
      {MetricPlace::Family,
       {"queue.<queue>.mean_percent", "%", Scaling::PerTime,
        "time-weighted mean level / capacity x 100 (ring data bytes; chains of "
        "two buffers the virtqueue holds)"}},
      {MetricPlace::Family,
       {"queue.<queue>.max_percent", "%", Scaling::AsIs, "highest level held for a while / capacity x 100"}},
      {MetricPlace::Family,
       {"queue.<queue>.empty_time_percent", "%", Scaling::PerTime, "share of the elapsed time the queue was empty"}},
      {MetricPlace::Family,
       {"queue.<queue>.time_{0_10|10_20|20_30|30_40|40_50|50_60|60_70|70_80|80_90|90_100}_percent", "%",
        Scaling::PerTime, "share of the elapsed time the level was in (lo, hi] percent of capacity (a histogram)"}},
  };
  return decls;
}

MetricDoc per_MB(const std::string& count, std::string doc)
{
  return {count + "_per_MB", "1/MB", Scaling::PerByte, std::move(doc)};
}

const MetricDoc& shared_count(const std::string& count)
{
  // The counts every transport makes (each transport's counter table places
  // them in the documentation order).
  static const std::vector<MetricDoc> counts = {
      per_MB("syscalls", "send()/recv() calls (hv_sock: Linux side; virtio_vsock: both sides) per MB"),
      per_MB("allocations",
             "kernel allocations per MB (hv_sock: 4 KiB send buffers; virtio_vsock: packets, buffers, both sides)"),
      per_MB("copies",
             "payload copies per MB (hv_sock: guest kernel copies; virtio_vsock: every copy of payload, both sides)"),
      per_MB("interrupts_to_guest", "host signals delivered as guest interrupts per MB"),
      per_MB("reader_sleeps", "times the Linux reader found no data and slept, per MB"),
      per_MB("packets", "packets carrying payload per MB (VMBus packets; virtio_vsock: RW packets the sender built)"),
  };
  for (const MetricDoc& d : counts)
    if (d.name == count + "_per_MB")
      return d;
  throw std::logic_error("no shared count '" + count + "'");
}

const std::vector<MetricDoc>& metric_docs()
{
  static const std::vector<MetricDoc> docs = [] {
    std::vector<MetricDecl> all = shared_metrics();
    for (const Transport& t : transports())
      for (MetricDecl& d : t.metrics())
        all.push_back(std::move(d));
    std::vector<MetricDoc> out;
    for (MetricPlace place : {MetricPlace::Run, MetricPlace::Figure, MetricPlace::Count, MetricPlace::Size,
                              MetricPlace::Engine, MetricPlace::Family})
      for (const MetricDecl& d : all) {
        if (d.place != place)
          continue;
        auto same = std::find_if(out.begin(), out.end(), [&](const MetricDoc& o) { return o.name == d.doc.name; });
        if (same == out.end())
          out.push_back(d.doc);
        else if (same->unit != d.doc.unit || same->scaling != d.doc.scaling || same->doc != d.doc.doc)
          throw std::logic_error("metric '" + d.doc.name + "' declared twice, differently");
      }
    return out;
  }();
  return docs;
}

namespace {

// Whether name matches a metric family pattern: "<x>" stands for one or more
// of [A-Za-z0-9_], "{a|b|c}" for one of the words; anything else literally.
bool matches(std::string_view pat, std::string_view name)
{
  if (pat.empty())
    return name.empty();
  if (pat[0] == '<') {
    std::size_t close = pat.find('>');
    if (close == std::string_view::npos)
      return false;
    std::string_view rest = pat.substr(close + 1);
    for (std::size_t n = 1; n <= name.size(); ++n) {
      char c = name[n - 1];
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
        break;
      if (matches(rest, name.substr(n)))
        return true;
    }
    return false;
  }
  if (pat[0] == '{') {
    std::size_t close = pat.find('}');
    if (close == std::string_view::npos)
      return false;
    std::string_view words = pat.substr(1, close - 1), rest = pat.substr(close + 1);
    for (std::size_t start = 0;;) {
      std::size_t bar = words.find('|', start);
      std::string_view w = words.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
      if (name.substr(0, w.size()) == w && matches(rest, name.substr(w.size())))
        return true;
      if (bar == std::string_view::npos)
        return false;
      start = bar + 1;
    }
  }
  return !name.empty() && name[0] == pat[0] && matches(pat.substr(1), name.substr(1));
}

} // namespace

bool is_metric_family(const MetricDoc& d)
{
  return d.name.find_first_of("<{") != std::string::npos;
}

bool metric_matches(const std::string& pattern, const std::string& name)
{
  return matches(pattern, name);
}

FigureKind metric_kind(const std::string& name)
{
  const MetricDoc* d = find_metric(name);
  if (!d)
    return FigureKind{Scaling::AsIs, "", false};
  // Ring and queue occupancy explains the figures; it does not hold a run
  // until it has settled (its time shares swing with every fill and drain).
  FigureKind k{d->scaling, d->unit, !name.starts_with("queue.")};
  // What each figure is a part of (docs/run-length.md, "What each figure is
  // held to"): a category of a CPU's or a thread's time is a part of its
  // busy time; a busy time and every other CPU percentage (a side's, the
  // application's) of one CPU; CPU seconds of the elapsed seconds (one CPU
  // for the run); counts per MB, and anything else, of their unit's sum.
  if (d->scaling == Scaling::PerTime && d->unit == "%") {
    k.whole = Whole::OneCpu;
    if (name.starts_with("cpu.") || name.starts_with("thread."))
      for (const char* cat : kBusyCategoryNames) {
        const std::string suffix = std::string(".") + cat + "_percent";
        if (std::string_view(cat) != "busy" && name.ends_with(suffix)) {
          k.whole = Whole::Figure;
          k.whole_figure = name.substr(0, name.size() - suffix.size()) + ".busy_percent";
        }
      }
  } else if (d->scaling == Scaling::Total && d->unit == "s") {
    k.whole = name == "elapsed_seconds" ? Whole::Itself : Whole::Figure;
    if (k.whole == Whole::Figure)
      k.whole_figure = "elapsed_seconds";
  }
  return k;
}

bool run_length_auto(const Params& params)
{
  return params.text("sim.run_length") == "auto";
}

RunLengthConfig run_length_config(const Params& params, std::uint64_t total_bytes, int connections)
{
  RunLengthConfig c;
  c.precision = params.number("sim.precision");
  c.total_bytes = total_bytes;
  c.connections = connections;
  if (const std::uint64_t rt = round_trip_bytes(params)) { // an observation per round trip
    c.chunk = rt;
    c.round_trips = true;
  }
  return c;
}

std::unique_ptr<RunLength> run_length_monitor(const Params& params, std::uint64_t total_bytes, int connections,
                                              std::function<std::map<std::string, double>(Time, std::uint64_t)> figures,
                                              World& world, Shorten shorten, Committed committed)
{
  if (!run_length_auto(params))
    return nullptr;
  return std::make_unique<RunLength>(
      run_length_config(params, total_bytes, connections), std::move(figures), metric_kind,
      [&world] { world.end_now(); }, std::move(shorten), std::move(committed));
}

std::map<std::string, double> finish_figures(const RunLength* monitor, std::map<std::string, double> full,
                                             Time end_time, std::uint64_t total_bytes)
{
  std::map<std::string, double> out = monitor ? monitor->finish(full, end_time) : std::move(full);
  const Figures info = monitor ? monitor->info() : RunLength::full_info(total_bytes);
  out.insert(info.begin(), info.end());
  return out;
}

std::string known_metrics_list()
{
  std::string s;
  for (const auto& d : metric_docs()) {
    if (!s.empty())
      s += ", ";
    s += d.name;
  }
  return s;
}

const MetricDoc* find_metric(const std::string& name)
{
  for (const auto& d : metric_docs())
    if (d.name == name)
      return &d;
  for (const auto& d : metric_docs())
    if (is_metric_family(d) && matches(d.name, name))
      return &d;
  return nullptr;
}

} // namespace vsim
