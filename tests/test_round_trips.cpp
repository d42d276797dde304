// Round-trip workloads (workload.pattern ping_pong, request_response) on
// hv_sock: the round trip worked out by hand from the costs, pinned
// figures, run-length control on round trips. Each simulation runs in a
// child process (run_points forks).
#include <catch2/catch.hpp>

#include <cmath>
#include <iomanip>

#include <fmt/format.h>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/run/runner.hpp"
#include "app/validation/measurements.hpp"
#include "models/vmbus_ring.hpp"
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
  return load_experiment_text(std::string(kBase) + extra, "t.yaml", sets, registry());
}

std::vector<PointResult> run(const Experiment& ex)
{
  RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  return run_points(ex, simulate_iteration, opt);
}

double metric(const PointResult& r, const char* name, std::size_t it = 0)
{
  return r.iterations.at(it).at(name);
}

// The round trip of `bytes` each way with the guest initiating, in cycles,
// stage by stage along its path (one packet each way).
double guest_initiated_round_trip(const hv_sock::Costs& k, std::uint32_t bytes)
{
  const double pkt = models::hvs_packet_len(bytes);
  // send(): vsock_stream_sendmsg, hvs_stream_has_space (per_check: clears
  // pending_send_sz), hvs_stream_enqueue (its own space check, the copy
  // into the send buffer, hv_ringbuffer_write copying the packet), the ring
  // was empty: vmbus_setevent as the HvSignalEvent hypercall.
  const double send = k.guest_user_per_call + k.guest_send_syscall + k.guest_space_check +
                      k.guest_pending_send_sz_write + k.guest_enqueue_call + k.guest_space_check + k.guest_copy(bytes) +
                      k.guest_ring_write + k.guest_copy(pkt) + k.guest_signal_host;
  // The host's DPC runs, drains the packet into the application.
  const double host_rx =
      k.host_signal_latency + k.host_dpc + k.host_recv_call + k.host_rx_packet + k.host_rx_copy(bytes);
  // The host's send() writes the response, the ring was empty: it signals the guest.
  const double host_tx =
      k.host_send_call + k.host_tx_packet + k.host_tx_copy(bytes) + k.host_signal_guest + k.host_interrupt_latency;
  // vCPU 0: the interrupt's exit, vmbus_isr, the tasklet with hvs_channel_cb
  // waking the reader, which runs after the wake-up latency and a context
  // switch, then hvs_stream_dequeue: the packet, the copy, hv_pkt_iter_close.
  const double guest_rx = k.guest_irq_exit + k.guest_isr + k.guest_tasklet + k.guest_wakeup_latency +
                          k.guest_context_switch + k.guest_dequeue_packet + k.guest_copy(bytes) + k.guest_iter_close;
  return send + host_rx + host_tx + guest_rx;
}

} // namespace

TEST_CASE("a ping-pong round trip with jitter off is the sum of its path's costs", "[hv_sock][round_trip]")
{
  const Experiment ex = load("direction: guest_to_host\n" + kPingPong);
  hv_sock::Costs k = hv_sock::Costs::from(ex.points.at(0).params);
  // The model's per-iteration scaling (here by 1) rounds each cost to whole cycles.
  apply_iteration_jitter(k, hv_sock::Costs::fields(), "host_", "guest_", 11, 0);
  const double us = guest_initiated_round_trip(k, 64) / (k.clock_ghz * 1e3);
  const auto r = run(ex);
  REQUIRE(r.at(0).failed.empty());
  INFO("hand-worked round trip " << us << " us; simulated - hand (cycles): " << std::setprecision(12)
                                 << (metric(r[0], "rtt_mean_us") - us) * k.clock_ghz * 1e3);
  CHECK(metric(r[0], "rtt_p50_us") == Approx(us).epsilon(0.004)); // the histogram's bucket
  CHECK(metric(r[0], "rtt_mean_us") == Approx(us).epsilon(1e-9));
  CHECK(metric(r[0], "rtt_p1_us") == Approx(us).epsilon(1e-9));
  CHECK(metric(r[0], "rtt_p999_us") == Approx(us).epsilon(1e-9));
  CHECK(metric(r[0], "transactions_per_second") == Approx(50 / metric(r[0], "elapsed_seconds")).epsilon(1e-12));
  CHECK(metric(r[0], "guest_cpu_us_per_transaction") > 0);
  CHECK(metric(r[0], "host_cpu_us_per_transaction") > 0);
  for (const auto& [name, v] : r[0].iterations[0])
    CHECK(find_metric(name) != nullptr);
}

TEST_CASE("round trips complete in both directions and for requests and responses of their own sizes",
          "[hv_sock][round_trip]")
{
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    INFO(dir);
    const auto pp = run(load(fmt::format("direction: {}\n", dir) + kPingPong, {"workload.message_size=64KiB"}));
    REQUIRE(pp.at(0).failed.empty());
    CHECK(metric(pp[0], "rtt_p50_us") > 0);
    // Several in flight, and a think time between response and request.
    const auto rr =
        run(load(fmt::format("direction: {}\nworkload:\n  pattern: request_response\n", dir),
                 {"workload.transactions=50", "workload.request_size=100B", "workload.response_size=16KiB",
                  "workload.outstanding=4", "workload.think_time=5", "workload.think_time_distribution=exponential"}));
    INFO(rr.at(0).failed);
    REQUIRE(rr.at(0).failed.empty());
    CHECK(metric(rr[0], "rtt_mean_us") > 0);
    CHECK(metric(rr[0], "rtt_p99_us") >= metric(rr[0], "rtt_p1_us"));
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
workload:
  pattern: ping_pong
  message_size: 256B
  transactions: 200
sim:
  run_length: full
)";
  const Experiment ex = load_experiment_text(yaml, "t.yaml", {}, registry());
  const auto r = run(ex), again = run(ex);
  CHECK(r[0].iterations == again[0].iterations);
  CHECK(metric(r[0], "rtt_mean_us") == 36.193210000000008);
  CHECK(metric(r[0], "rtt_p1_us") == 31.1875);
  CHECK(metric(r[0], "rtt_p99_us", 1) == 40.625);
  CHECK(metric(r[0], "transactions_per_second", 1) == 27541.916455782801);
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
  const auto r = run(ex);
  REQUIRE(r.at(0).failed.empty());
  const Metrics& info = r[0].run_length.at(0);
  INFO("reason " << info.at("reason"));
  CHECK(info.at("extrapolated") == 1);
  CHECK(info.at("simulated_bytes") < 1000000 * 128 / 4);
  CHECK(info.at("rtt_mean_half_width") <= 0.02);
  CHECK(info.at("rtt_p99_half_width") <= 0.02);
  CHECK(metric(r[0], "transactions_per_second") > 0);
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
  const auto r = run(ex);
  const std::vector<Measurement> ms =
      load_measurements_text("workload.message_size,metric,unit,min,max,mean,median,source\n"
                             "64,rtt_p99_us,us,,,40,,test\n",
                             "m.csv", registry());
  const Comparison c = compare(ex, r, ms, "m.csv");
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].predicted == metric(r[0], "rtt_p99_us"));
  CHECK(c.rows[0].error_percent == Approx((metric(r[0], "rtt_p99_us") / 40 - 1) * 100));
}
