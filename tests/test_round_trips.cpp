// Round-trip workloads (workload.pattern ping_pong, request_response) on
// hv_sock: the round trip worked out by hand from the costs, pinned
// figures, run-length control on round trips. Each simulation runs in a
// child process (run_points forks).
#include <catch2/catch.hpp>

#include <cmath>
#include <iomanip>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/explain.hpp"
#include "app/report/result_json.hpp"
#include "app/run/runner.hpp"
#include "app/validation/measurements.hpp"
#include "models/vmbus_ring.hpp"
#include "round_trip_support.hpp"
#include "sim/histogram.hpp"
#include "sim/round_trips.hpp"
#include "transports/costs.hpp"
#include "transports/hv_sock/costs.hpp"
#include "transports/simulate.hpp"
#include "transports/transport.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

// The shipped profile's costs, with every jitter off (latencies exact, no
// per-iteration scaling).
const char* kBase = R"(
transport: hv_sock
platform: hyperv-2019
seed: 11
iterations: 1
hv_sock:
  pending_send_size: per_check
sim:
  run_length: full
costs:
  latency_jitter: 0
  iteration_jitter: 0
  guest_iteration_jitter: 0
)";

const std::string kPingPong = "workload:\n  pattern: ping_pong\n  message_size: 64B\n  transactions: 50\n";

Experiment load(const std::string& extra, const std::vector<std::string>& sets = {})
{
  return test::load_with(kBase, extra, sets);
}

// The round trip of `bytes` each way (one packet each way), in cycles,
// stage by stage along its path as the simulation stamps them: the guest
// initiating, or (guest_initiates false) the host, the same stages from the
// other end.
std::vector<std::pair<std::string, double>> hand_stages(const hv_sock::Costs& k, std::uint32_t bytes,
                                                        bool guest_initiates)
{
  const double pkt = models::hvs_packet_len(bytes);
  // send(): vsock_stream_sendmsg, hvs_stream_has_space (per_check: clears
  // pending_send_sz), hvs_stream_enqueue (its own space check, the copy
  // into the send buffer, hv_ringbuffer_write copying the packet); a
  // responding guest starts it in the step of its recv()'s hv_pkt_iter_close.
  // The ring was empty: vmbus_setevent as the HvSignalEvent hypercall.
  const double send = (guest_initiates ? 0 : k.guest_iter_close) + k.guest_user_per_call + k.guest_send_syscall +
                      k.guest_space_check + k.guest_pending_send_sz_write + k.guest_enqueue_call + k.guest_space_check +
                      k.guest_copy(bytes) + k.guest_ring_write + k.guest_copy(pkt);
  const std::vector<std::pair<std::string, double>> to_host = {
      {"guest send()", send},
      {"guest signals the host", k.guest_signal_host},
      // The host's DPC runs after the signal's latency, drains the packet
      // into the application.
      {"signal to the host's DPC", k.host_signal_latency},
      {"host DPC and recv()", k.host_dpc + k.host_recv_call + k.host_rx_packet + k.host_rx_copy(bytes)},
  };
  // The host's send() writes the message, the ring was empty: it signals
  // the guest; vCPU 0 takes the interrupt (its exit, vmbus_isr, the tasklet
  // with hvs_channel_cb waking the reader), the reader runs after the
  // wake-up latency and a context switch, then hvs_stream_dequeue: the
  // packet, the copy, and hv_pkt_iter_close when the guest initiated (else
  // it goes with the guest's send()).
  const std::vector<std::pair<std::string, double>> to_guest = {
      {"host send()", k.host_send_call + k.host_tx_packet + k.host_tx_copy(bytes)},
      {"host signals the guest", k.host_signal_guest},
      {"signal to the guest's interrupt", k.host_interrupt_latency},
      {"guest interrupt on vCPU 0", k.guest_irq_exit + k.guest_isr + k.guest_tasklet},
      {"reader wake-up", k.guest_wakeup_latency + k.guest_context_switch},
      {"guest recv()", k.guest_dequeue_packet + k.guest_copy(bytes) + (guest_initiates ? k.guest_iter_close : 0)},
  };
  std::vector<std::pair<std::string, double>> all = guest_initiates ? to_host : to_guest;
  const auto& back = guest_initiates ? to_guest : to_host;
  all.insert(all.end(), back.begin(), back.end());
  return all;
}

double guest_initiated_round_trip(const hv_sock::Costs& k, std::uint32_t bytes)
{
  double sum = 0;
  for (const auto& [stage, cycles] : hand_stages(k, bytes, true))
    sum += cycles;
  return sum;
}

// The bucket (sim/histogram.hpp) of the nearest-rank q-quantile of an
// iteration's histogram as the run driver reports it (bucket -> count).
std::int64_t quantile_bucket(const Metrics& histogram, double q)
{
  double n = 0;
  for (const auto& [b, c] : histogram)
    n += c;
  const double rank = std::max(1.0, std::ceil(q * n));
  double seen = 0;
  for (const auto& [b, c] : histogram)
    if ((seen += c) >= rank)
      return std::stoll(b);
  return std::numeric_limits<std::int64_t>::max();
}

// An iteration's stage means in band `band` (median, p99), in path order.
std::vector<std::pair<std::string, double>> band_stages(const Metrics& stages, const std::string& band)
{
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [key, v] : stages)
    if (key.starts_with(band + ".") && !key.ends_with(".round_trips") &&
        !key.substr(band.size() + 1).starts_with("cause")) // the causes, not stages (issue 53)
      out.emplace_back(key.substr(band.size() + 4), v);    // past "<band>.NN."
  return out;
}

} // namespace

TEST_CASE("a ping-pong round trip with jitter off is the sum of its path's costs", "[hv_sock][round_trip]")
{
  const Experiment ex = load("direction: guest_to_host\n" + kPingPong);
  hv_sock::Costs k = hv_sock::Costs::from(ex.points.at(0).params);
  // The model's per-iteration scaling (here by 1) rounds each cost to whole cycles.
  apply_iteration_jitter(k, hv_sock::Costs::fields(), "host_", "guest_", 11, 0);
  const double us = guest_initiated_round_trip(k, 64) / (k.clock_ghz * 1e3);
  const auto r = test::run_all(ex);
  REQUIRE(r.at(0).failed.empty());
  INFO("hand-worked round trip " << us << " us; simulated - hand (cycles): " << std::setprecision(12)
                                 << (test::figure(r[0], "rtt_mean_us") - us) * k.clock_ghz * 1e3);
  CHECK(test::figure(r[0], "rtt_p50_us") == Approx(us).epsilon(0.004)); // the histogram's bucket
  CHECK(test::figure(r[0], "rtt_mean_us") == Approx(us).epsilon(1e-9));
  CHECK(test::figure(r[0], "rtt_p1_us") == Approx(us).epsilon(1e-9));
  CHECK(test::figure(r[0], "rtt_p999_us") == Approx(us).epsilon(1e-9));
  CHECK(test::figure(r[0], "transactions_per_second") ==
        Approx(50 / test::figure(r[0], "elapsed_seconds")).epsilon(1e-12));
  CHECK(test::figure(r[0], "guest_cpu_us_per_transaction") > 0);
  CHECK(test::figure(r[0], "host_cpu_us_per_transaction") > 0);
  for (const auto& [name, v] : r[0].iterations[0])
    CHECK(find_metric(name) != nullptr);
}

TEST_CASE("round trips complete in both directions and for requests and responses of their own sizes",
          "[hv_sock][round_trip]")
{
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    INFO(dir);
    const auto pp =
        test::run_all(load(fmt::format("direction: {}\n", dir) + kPingPong, {"workload.message_size=64KiB"}));
    REQUIRE(pp.at(0).failed.empty());
    CHECK(test::figure(pp[0], "rtt_p50_us") > 0);
    // Several in flight, and a think time between response and request.
    const auto rr = test::run_all(
        load(fmt::format("direction: {}\nworkload:\n  pattern: request_response\n", dir),
             {"workload.transactions=50", "workload.request_size=100B", "workload.response_size=16KiB",
              "workload.outstanding=4", "workload.think_time=5", "workload.think_time_distribution=exponential"}));
    INFO(rr.at(0).failed);
    REQUIRE(rr.at(0).failed.empty());
    CHECK(test::figure(rr[0], "rtt_mean_us") > 0);
    CHECK(test::figure(rr[0], "rtt_p99_us") >= test::figure(rr[0], "rtt_p1_us"));
  }
}

TEST_CASE("a tiny ping-pong run is pinned to exact round trips", "[hv_sock][round_trip][determinism]")
{
  // Jitter on (the profile's latency_jitter and iteration jitters): any
  // change to the model's arithmetic, the engine's order or the random
  // streams moves these.
  const char* yaml = R"(
transport: hv_sock
platform: hyperv-2019
seed: 5
iterations: 2
direction: host_to_guest
hv_sock: {send_loop: false, pending_send_size: per_check}
workload:
  pattern: ping_pong
  message_size: 256B
  transactions: 200
sim:
  run_length: full
)";
  const Experiment ex = load_experiment_text(yaml, "t.yaml", {}, registry());
  const auto r = test::run_all(ex), again = test::run_all(ex);
  CHECK(r[0].iterations == again[0].iterations);
  CHECK(test::figure(r[0], "rtt_mean_us") == 36.193210000000008);
  CHECK(test::figure(r[0], "rtt_p1_us") == 31.1875);
  CHECK(test::figure(r[0], "rtt_p99_us", 1) == 40.625);
  CHECK(test::figure(r[0], "transactions_per_second", 1) == 27541.916455782801);
}

TEST_CASE("run-length control stops a round-trip point once its mean and p99 are known to the precision",
          "[hv_sock][round_trip][run_length]")
{
  const Experiment ex = load_experiment_text(R"(
transport: hv_sock
platform: hyperv-2019
seed: 3
iterations: 1
workload:
  pattern: ping_pong
  message_size: 64B
  transactions: 1000000
sim:
  precision: 0.02
)",
                                             "t.yaml", {}, registry());
  const auto r = test::run_all(ex);
  REQUIRE(r.at(0).failed.empty());
  const Metrics& info = r[0].run_length.at(0);
  INFO("reason " << info.at("reason"));
  CHECK(info.at("extrapolated") == 1);
  CHECK(info.at("simulated_bytes") < 1000000 * 128 / 4);
  CHECK(info.at("rtt_mean_half_width") <= 0.02);
  CHECK(info.at("rtt_p99_half_width") <= 0.02);
  CHECK(test::figure(r[0], "transactions_per_second") > 0);
}

TEST_CASE("explain's round-trip path is the hand-worked sum, stage by stage", "[hv_sock][round_trip][explain]")
{
  const Experiment ex = load("direction: host_to_guest\n" + kPingPong);
  const Params& p = ex.points.at(0).params;
  hv_sock::Costs k = hv_sock::Costs::from(p);
  double sum = 0;
  for (const RoundTripStage& s : find_transport("hv_sock")->round_trip_path(p))
    sum += s.cycles;
  // The same stages as the guest-initiated round trip, from the other end.
  CHECK(sum == Approx(guest_initiated_round_trip(k, 64)).epsilon(1e-12));
  CHECK(find_transport("virtio_vsock")->round_trip_path == nullptr);
}

TEST_CASE("a measurements CSV of round-trip percentiles validates like any metric", "[hv_sock][round_trip][validate]")
{
  const Experiment ex = load("direction: guest_to_host\n" + kPingPong);
  const auto r = test::run_all(ex);
  const std::vector<Measurement> ms =
      load_measurements_text("workload.message_size,metric,unit,min,max,mean,median,source\n"
                             "64,rtt_p99_us,us,,,40,,test\n",
                             "m.csv", registry());
  const Comparison c = compare(ex, r, ms, "m.csv");
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].predicted == test::figure(r[0], "rtt_p99_us"));
  CHECK(c.rows[0].error_percent == Approx((test::figure(r[0], "rtt_p99_us") / 40 - 1) * 100));
}

// ----------------------------------------------------- stages of a round trip

TEST_CASE("round trips: stamps move forward, skipped stages last zero, the stages sum to the round trip",
          "[round_trip][stages]")
{
  RoundTrips rt(1.0, 128, nullptr); // 1 cycle per ns: 1000 cycles = 1 us
  rt.set_stages({"a", "b", "c", "d"});
  CHECK(rt.stage_id("c") == 2);
  CHECK_THROWS_AS(rt.stage_id("e"), std::logic_error);
  rt.begin(0, 1000);
  rt.stamp(0, 1, 2000);
  rt.stamp(0, 1, 2500); // the current stage again: its first stamp counts
  rt.stamp(0, 0, 3000); // backwards: ignored
  rt.stamp(0, 3, 4000); // c skipped
  rt.stamp(1, 2, 4000); // another connection, nothing begun: ignored
  rt.completed(0, 1000, 7000);
  CHECK(rt.attributed() == 1);
  const RoundTrips::Band b = rt.band(0.45, 0.55);
  CHECK(b.round_trips == 1);
  CHECK(b.mean_us == std::vector<double>{1.0, 2.0, 0.0, 3.0});
  // A stamp before the current stage began is an engine out of order.
  rt.begin(0, 8000);
  rt.stamp(0, 2, 9000);
  CHECK_THROWS_AS(rt.stamp(0, 3, 8500), std::logic_error);
}

TEST_CASE("round trips: only a round trip alone in flight is attributed, and bands pick the quantiles' buckets",
          "[round_trip][stages]")
{
  RoundTrips rt(1.0, 128, nullptr);
  rt.set_stages({"out", "back"});
  // Two in flight: neither is attributed, both are counted.
  rt.begin(0, 0);
  rt.begin(0, 100);
  rt.stamp(0, 1, 200);
  rt.completed(0, 0, 1000);
  rt.completed(0, 100, 1100);
  CHECK(rt.count() == 2);
  CHECK(rt.attributed() == 0);
  CHECK(rt.band(0.45, 0.55).mean_us.empty());
  // 98 round trips of 10 us (4 + 6) and 2 of 20 us (4 + 16).
  Time t = 10000;
  for (int i = 0; i < 100; ++i) {
    const double back = i < 98 ? 6000 : 16000;
    rt.begin(0, t);
    rt.stamp(0, 1, t + 4000);
    rt.completed(0, t, t + 4000 + back);
    t += 50000;
  }
  CHECK(rt.attributed() == 100);
  const RoundTrips::Band med = rt.band(0.45, 0.55), tail = rt.band(0.99, 1.0);
  CHECK(med.round_trips == 98);
  CHECK(med.mean_us == std::vector<double>{4.0, 6.0});
  CHECK(tail.round_trips == 2);
  CHECK(tail.mean_us == std::vector<double>{4.0, 16.0});
  // A transport that never calls begin(): counted, not attributed.
  RoundTrips plain(1.0, 128, nullptr);
  plain.completed(0, 0, 5000);
  CHECK(plain.count() == 1);
  CHECK(plain.attributed() == 0);
}

TEST_CASE("hv_sock round trips with jitter off: each simulated stage is its hand-worked cost, and explain's path",
          "[hv_sock][round_trip][stages]")
{
  for (const bool g2h : {true, false}) {
    INFO((g2h ? "guest_to_host" : "host_to_guest"));
    const Experiment ex = load(std::string("direction: ") + (g2h ? "guest_to_host\n" : "host_to_guest\n") + kPingPong);
    const Params& p = ex.points.at(0).params;
    hv_sock::Costs k = hv_sock::Costs::from(p);
    apply_iteration_jitter(k, hv_sock::Costs::fields(), "host_", "guest_", 11, 0); // rounds to whole cycles
    const auto hand = hand_stages(k, 64, g2h);
    const auto r = test::run_all(ex);
    REQUIRE(r.at(0).failed.empty());
    const Metrics& st = r[0].rtt_stages.at(0);
    // Every round trip in one bucket; host to guest but the first, whose
    // request reaches the guest's recv() before it sleeps (no interrupt).
    CHECK(st.at("median.round_trips") == (g2h ? 50 : 49));
    CHECK(st.at("p99.round_trips") == (g2h ? 50 : 49));
    const auto path = find_transport("hv_sock")->round_trip_path(p);
    const auto exact = hand_stages(hv_sock::Costs::from(p), 64, g2h); // the path's costs are not rounded
    REQUIRE(path.size() == hand.size());
    for (const char* band : {"median", "p99"}) {
      const auto sim = band_stages(st, band);
      REQUIRE(sim.size() == hand.size());
      for (std::size_t i = 0; i < hand.size(); ++i) {
        INFO(band << " stage " << i << " " << hand[i].first);
        CHECK(sim[i].first == hand[i].first);
        CHECK(sim[i].second == Approx(hand[i].second / (k.clock_ghz * 1e3)).epsilon(1e-9));
        CHECK(path[i].stage == hand[i].first);
        CHECK(path[i].cycles == Approx(exact[i].second).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("hv_sock round trips with jitter: the stages of each band sum to round trips of that band",
          "[hv_sock][round_trip][stages]")
{
  const char* yaml = R"(
transport: hv_sock
platform: hyperv-2019
seed: 5
iterations: 2
workload:
  transactions: 2000
sim:
  run_length: full
)";
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    INFO(dir);
    const auto r = test::run_all(load_experiment_text(
        yaml, "t.yaml", {std::string("direction=") + dir, "workload.pattern=ping_pong", "workload.message_size=256B"},
        registry()));
    REQUIRE(r.at(0).failed.empty());
    for (std::size_t it = 0; it < 2; ++it) {
      const Metrics& h = r[0].rtt_histograms.at(it);
      const Metrics& st = r[0].rtt_stages.at(it);
      double median = 0, tail = 0;
      for (const auto& [stage, us] : band_stages(st, "median"))
        median += us;
      for (const auto& [stage, us] : band_stages(st, "p99"))
        tail += us;
      // The mean of round trips in the buckets from p45's to p55's, and
      // from p99's up: within those buckets (each within 0.4% of its values).
      CHECK(median >= Histogram::lower(quantile_bucket(h, 0.45)));
      CHECK(median <= Histogram::upper(quantile_bucket(h, 0.55)));
      CHECK(median == Approx(test::figure(r[0], "rtt_p50_us", it)).epsilon(0.01));
      CHECK(tail >= Histogram::lower(quantile_bucket(h, 0.99)));
      CHECK(tail <= Histogram::upper(quantile_bucket(h, 1.0)));
      CHECK(tail > median);
      CHECK(st.at("median.round_trips") >= 0.1 * 2000);
      CHECK(st.at("p99.round_trips") >= 0.01 * 2000);
    }
  }
  // Four requests in flight: no round trip is alone, none is attributed.
  const auto rr = test::run_all(load_experiment_text(yaml, "t.yaml",
                                                     {"workload.pattern=request_response", "workload.request_size=64B",
                                                      "workload.response_size=256B", "workload.outstanding=4"},
                                                     registry()));
  REQUIRE(rr.at(0).failed.empty());
  CHECK(rr[0].rtt_stages.at(0).empty());
}

TEST_CASE("explain on a round-trip point: each stage near the median and at p99, and what the tail adds",
          "[hv_sock][round_trip][stages][explain]")
{
  const char* yaml = R"(
transport: hv_sock
platform: hyperv-2019
seed: 5
iterations: 2
direction: guest_to_host
workload:
  pattern: ping_pong
  message_size: 64B
  transactions: 2000
sim:
  run_length: full
)";
  const Experiment ex = load_experiment_text(yaml, "t.yaml", {}, registry());
  const auto r = test::run_all(ex);
  REQUIRE(r.at(0).failed.empty());
  const nlohmann::json doc = nlohmann::json::parse(to_json(ex, r, make_manifest(ex, "test")).dump());
  const nlohmann::json& st = doc["points"][0]["round_trip_stages"];
  REQUIRE(st["stages"].size() == 10);
  CHECK(st["stages"][2]["stage"] == "signal to the host's DPC");
  CHECK(st["median_round_trips"].get<double>() ==
        r[0].rtt_stages[0].at("median.round_trips") + r[0].rtt_stages[1].at("median.round_trips"));
  // Pooled over the iterations: each iteration's mean weighted by its round trips.
  const std::string key = "p99.02.signal to the host's DPC";
  const Metrics &a = r[0].rtt_stages[0], &b = r[0].rtt_stages[1];
  CHECK(st["stages"][2]["p99_us"].get<double>() ==
        Approx((a.at(key) * a.at("p99.round_trips") + b.at(key) * b.at("p99.round_trips")) /
               (a.at("p99.round_trips") + b.at("p99.round_trips"))));
  const std::string text = explain_point(doc["points"][0], 0);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("simulated, stage by stage (each stage's mean over the"));
  CHECK_THAT(text, Catch::Contains("stage                             near median   p99 and beyond   the tail adds"));
  std::size_t rows = 0; // the stage's row: near median, p99 and beyond, what the tail adds
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    rows += std::regex_match(line, std::regex("    signal to the host's DPC +[0-9.]+ us +[0-9.]+ us +\\+[0-9.]+ us"));
  CHECK(rows == 1);
  CHECK_THAT(text, Catch::Contains("    round trip "));
  CHECK_THAT(text, Catch::Contains("adds the most ("));
  CHECK(text.find("not yet attributed") == std::string::npos);
  // Without the stage times (an older result, or several in flight): said so.
  nlohmann::json bare = doc["points"][0];
  bare.erase("round_trip_stages");
  CHECK_THAT(explain_point(bare, 0), Catch::Contains("the tail: not attributed to stages (only round trips alone in "
                                                     "flight on their connection are"));
}
