// Experiment-level keys: labels, platform and transport choice, the workload,
// the machine's CPU counts, simulation mode and report selection.
#include "app/experiment/registry.hpp"

#include <sstream>

#include <fmt/format.h>

#include "app/experiment/platforms.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/experiment/text.hpp"
#include "transports/simulate.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

void declare_experiment_params(ParamRegistry& reg)
{
  std::vector<std::string> platforms;
  for (const auto& p : platform_profiles())
    platforms.push_back(p.name);

  reg.declare(
      Param("name").text().doc("experiment name in results; empty means the experiment file's name without extension"));
  reg.declare(Param("description").text().doc("free text copied into the results"));
  const std::string allowed = join(platforms) + ", or a profile file PATH.yaml, relative to the experiment file";
  reg.declare(Param("platform")
                  .text()
                  .def("hyperv-2019")
                  .allowed(allowed)
                  .check([allowed](const std::string& v) {
                    if (is_profile_path(v) || find_profile(v) != nullptr)
                      return std::string();
                    return fmt::format("unknown platform '{}' (allowed: {})", v, allowed);
                  })
                  .doc(fmt::format("platform profile: a shipped one ({}; `vsocksim describe platforms`) or a profile "
                                   "file PATH.yaml, relative to the experiment file (docs/profiles.md); gives every "
                                   "`costs.*` parameter its default. Not given: the transport's newest shipped "
                                   "profile ({} for hv_sock, {} for virtio_vsock)",
                                   join(platforms), default_platform("hv_sock"), default_platform("virtio_vsock"))));
  reg.declare(Param("transport")
                  .choice()
                  .def("hv_sock")
                  .words(transport_names())
                  .doc("socket transport between guest and host; must match the platform's"));
  reg.declare(Param("direction")
                  .choice()
                  .def("guest_to_host")
                  .words({"guest_to_host", "host_to_guest", "bidirectional"})
                  .doc("`guest_to_host`: guest threads write, host threads read; `host_to_guest`: the reverse; "
                       "`bidirectional`: the first half of the connections (rounded up) guest to host, the rest "
                       "host to guest, as Firecracker's CI alternates them (virtio_vsock, firecracker_vsock)"));
  reg.declare(Param("seed")
                  .integer()
                  .def("1")
                  .range(0, 9007199254740992.0 /* 2^53 */)
                  .doc("iteration i of a point draws its randomness from (seed, i) only"));
  reg.declare(Param("iterations")
                  .integer()
                  .unit("runs")
                  .def("10")
                  .range(1, 1000)
                  .doc("runs per point; statistics (min/max/mean/median) are over these"));
  reg.declare(Param("workload.message_size")
                  .size()
                  .unit("bytes")
                  .def("64KiB")
                  .range(1, 1ll << 30)
                  .doc("bytes per send() call"));
  reg.declare(Param("workload.total_bytes")
                  .size()
                  .unit("bytes")
                  .def("1GB")
                  .range(1, 1e12)
                  .doc("bytes sent per connection per iteration"));
  reg.declare(Param("workload.connections")
                  .integer()
                  .unit("connections")
                  .def("1")
                  .range(1, 64)
                  .doc("parallel connections, each with one writer and one reader thread"));
  reg.declare(Param("workload.start_interval")
                  .number()
                  .unit("us")
                  .def("10")
                  .range(0, 1e6)
                  .doc("connection i's threads start at i x this (a program opening its connections one after "
                       "another); identical connections starting at the same cycle would tie"));
  reg.declare(Param("workload.pattern")
                  .choice()
                  .def("stream")
                  .words({"stream", "ping_pong", "request_response"})
                  .doc("`stream`: the writer sends workload.total_bytes in workload.message_size send()s; "
                       "`ping_pong`: the initiator (the writing side of `direction`) sends workload.message_size "
                       "bytes, the peer reads them all and sends them back, the initiator reads them all (one round "
                       "trip); `request_response`: workload.request_size out, workload.response_size back, "
                       "workload.outstanding in flight; one thread per side and connection for both"));
  reg.declare(Param("workload.transactions")
                  .integer()
                  .unit("round trips")
                  .def("10000")
                  .range(1, 1e9)
                  .doc("round trips per connection per iteration (`ping_pong`, `request_response`)"));
  reg.declare(Param("workload.request_size")
                  .size()
                  .unit("bytes")
                  .def("64B")
                  .range(1, 1ll << 30)
                  .doc("bytes of one request (`request_response`)"));
  reg.declare(Param("workload.response_size")
                  .size()
                  .unit("bytes")
                  .def("64B")
                  .range(1, 1ll << 30)
                  .doc("bytes of one response (`request_response`)"));
  reg.declare(Param("workload.outstanding")
                  .integer()
                  .unit("requests")
                  .def("1")
                  .range(1, 64)
                  .doc("requests in flight per connection (`request_response`): the initiator sends this many, "
                       "then one more after each response"));
  reg.declare(Param("workload.think_time")
                  .number()
                  .unit("us")
                  .def("0")
                  .range(0, 1e6)
                  .doc("time between a response and the next request (`request_response`), spent off the CPU"));
  reg.declare(Param("workload.think_time_distribution")
                  .choice()
                  .def("fixed")
                  .words({"fixed", "exponential"})
                  .doc("`fixed`: every think time is workload.think_time; `exponential`: drawn with that mean from "
                       "the stream seeded by (seed, iteration, connection)"));
  reg.declare(Param("workload.app")
                  .choice()
                  .def("loop")
                  .words({"loop", "iperf3"})
                  .doc("the benchmark, with its own user time: `loop` sends and receives in blocking loops, "
                       "`costs.guest_user_per_call` (guest) or `costs.virtio_host_user_per_call` (host) per "
                       "send()/recv(); `iperf3` is iperf3's client sending (non-blocking: select(), then up to "
                       "10 blocks per select, Nwrite() writing a block's rest again after a partial write until "
                       "it is all taken or a write() finds no credit) and its server receiving (select(), then "
                       "blocking read()s until a whole block), `costs.virtio_guest_iperf3_user_per_call` (guest) or "
                       "`costs.virtio_host_iperf3_user_per_call` (host) per block sent and per block received")
                  .scope("virtio_vsock,firecracker_vsock"));
  reg.declare(Param("workload.socket_type")
                  .choice()
                  .def("stream")
                  .words({"stream", "seqpacket"})
                  .doc("the benchmark's socket: `stream` (SOCK_STREAM); `seqpacket` (SOCK_SEQPACKET, Linux 5.14: "
                       "53efbba12cc7, ced7b713711f, 9ac841f5e9f2, e4b1ef152f53; EOM/EOR split 5.15: 9af8f1061646): "
                       "each send() is one message whose last packet carries EOM, each recv() waits for and takes "
                       "one whole message, and the reader sends a CREDIT_UPDATE after every message; a message "
                       "larger than virtio_vsock.buf_alloc is refused (-EMSGSIZE)")
                  .kernel("net/vmw_vsock/virtio_transport_common.c: virtio_transport_seqpacket_enqueue, "
                          "virtio_transport_seqpacket_do_dequeue")
                  .scope("virtio_vsock"));
  reg.declare(Param("workload.zerocopy")
                  .boolean()
                  .def("false")
                  .doc("MSG_ZEROCOPY on every send() with SO_ZEROCOPY set (Linux 6.7: 0df7cd3c13e4, 64c99d2d6ada, "
                       "4b0bf10eb077, 581512a6dc93): when the whole rest of the send() fits the credit "
                       "(virtio_transport_can_zcopy; in the guest also its pages + 1 <= the tx queue's size) the "
                       "user pages are pinned and sent as fragments instead of copied, and a completion reaches "
                       "the error queue once the packet is freed; the benchmark reads it with "
                       "recvmsg(MSG_ERRQUEUE) before its next send(); otherwise the send() falls back to copying")
                  .kernel("net/vmw_vsock/virtio_transport_common.c: virtio_transport_can_zcopy, "
                          "virtio_transport_init_zcopy_skb")
                  .scope("virtio_vsock"));
  reg.declare(Param("guest.vcpus")
                  .integer()
                  .unit("vCPUs")
                  .def("2")
                  .range(1, 64)
                  .doc("guest vCPUs: interrupts go to vCPU 0; connection i's guest thread runs on vCPU (1+i) mod "
                       "vcpus, except with workload.app: iperf3, whose streams one thread serves: all on vCPU 1 "
                       "(docs/model.md, \"The benchmark\")"));
  reg.declare(Param("guest.preemption")
                  .choice()
                  .def("voluntary")
                  .words({"voluntary", "none"})
                  .doc("the guest kernel's preemption model: `voluntary` (CONFIG_PREEMPT_VOLUNTARY) gives a vCPU "
                       "to a woken task at the running task's next might_sleep(), once per packet a send() "
                       "allocates; `none` (CONFIG_PREEMPT_NONE) only when the running task sleeps or returns to "
                       "user space, so the send work a send() queues on its vCPU runs after the send()")
                  .kernel("kernel/Kconfig.preempt; kernel/sched/core.c: _cond_resched; "
                          "arch/x86/entry/common.c: exit_to_usermode_loop")
                  .scope("virtio_vsock,firecracker_vsock"));
  reg.declare(Param("host.cpus").integer().unit("CPUs").def("8").range(1, 256).doc("host logical CPUs"));
  reg.declare(Param("sim.run_length")
                  .choice()
                  .def("auto")
                  .words({"auto", "full"})
                  .doc("`auto`: simulate until the throughput's steady state is known to `sim.precision` (MSER-5 "
                       "warm-up, batch means), then extrapolate the rest of the transfer; `full`: every byte"));
  reg.declare(Param("sim.precision")
                  .number()
                  .def("0.005")
                  .range(0.0001, 0.5)
                  .doc("relative half-width of the 95% confidence interval of throughput at which `auto` stops"));
  reg.declare(Param("sim.ensemble")
                  .boolean()
                  .def("false")
                  .doc("also run every member of the platform profile's ensemble (`calibrate --ensemble`: cost "
                       "vectors that fit its rows within their noise), one simulation each, with iteration 0's "
                       "random streams: every metric gains the members' p10, p50, p90 and values, effects their "
                       "intervals (docs/calibration.md); costs the experiment sets stay as set"));
  reg.declare(Param("report.stat")
                  .choice()
                  .def("all")
                  .words({"all", "mean", "ci", "range"})
                  .doc("what a table cell shows over the iterations: `all` min/max/avg/median, `mean`, `ci` mean +- "
                       "the half-width of its 95% confidence interval (Student t), `range` mean [min, max]"));
  reg.declare(Param("report.baseline")
                  .integer()
                  .def("-1")
                  .range(-1, 1e6)
                  .doc("a point index: table cells also show each point's change of the mean against that point's "
                       "(`run --list` gives the indices); -1: none"));
  reg.declare(Param("report.metrics")
                  .text()
                  .def("throughput_MBps")
                  .doc("comma-separated metric names shown by the table format")
                  .check([](const std::string& text) -> std::string {
                    std::string item;
                    std::stringstream ss(text);
                    while (std::getline(ss, item, ','))
                      if (find_metric(item) == nullptr)
                        return fmt::format("unknown metric '{}' (allowed: {})", item, known_metrics_list());
                    return "";
                  }));
}

void declare_validation_params(ParamRegistry& reg)
{
  reg.declare(Param("validation.measurements")
                  .text()
                  .unit("path")
                  .doc("CSV of published figures to compare with (relative to the experiment file); empty: none"));
}

} // namespace vsim::app
