#include "transports/hv_sock/bound.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "models/vmbus_ring.hpp"
#include "transports/hv_sock/costs.hpp"
#include "transports/hv_sock/params.hpp"
#include "transports/hv_sock/ring_math.hpp"
#include "transports/hv_sock/stages.hpp"

namespace vsim::hv_sock {

PlatformPlan platform_plan(const Params& p)
{
  const Costs k = Costs::from(p);
  const std::uint64_t m = static_cast<std::uint64_t>(p.integer("workload.message_size"));
  const std::string direction = p.text("direction");
  const bool send_loop = p.boolean("hv_sock.send_loop");
  const bool per_check = p.text("hv_sock.pending_send_size") == "per_check";
  PlatformPlan plan;
  plan.vcpus = static_cast<int>(p.integer("guest.vcpus"));
  plan.host_cpus = static_cast<int>(p.integer("host.cpus"));
  plan.connections = static_cast<int>(p.integer("workload.connections"));
  plan.clock_ghz = k.clock_ghz;
  const double msgs = 1e6 / static_cast<double>(m); // messages per MB

  // Every host signal is an interrupt on vCPU 0 (GuestIrq); how many there are
  // depends on waiting alone, so its lower bound is zero.
  plan.loads.push_back({"vmbus_isr", "vcpu0", "interrupt context (vmbus_isr, tasklet, hvs_channel_cb)", -1, 0,
                        "interrupts only when a side sleeps: none needed at full speed"});
  for (int i = 0; i < plan.connections; ++i) {
    const bool g2h = connection_g2h(direction, i, plan.connections);
    const std::uint32_t data =
        (g2h ? ring_size(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send)
             : ring_size(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive)) -
        models::kPageSize;
    const std::string gcpu = fmt::format("vcpu{}", guest_cpu_of(i, plan.vcpus));
    const std::string hcpu = fmt::format("hcpu{}", host_cpu_of(i, plan.host_cpus));
    const std::string chan = fmt::format("vmbus{}.{}", i, g2h ? "g2h" : "h2g");
    if (g2h) {
      // LinuxWriter: send() then, per packet of up to 4088 bytes,
      // hvs_stream_has_space (+ pending_send_sz clear before June 2019) and
      // hvs_stream_enqueue: a space check, the copy into the send buffer,
      // hv_ringbuffer_write and its copy into the ring.
      const Split sp = split(m, kSendBufPayload, [&](double n) {
        return k.guest_space_check + k.guest_copy(n) + k.guest_ring_write +
               k.guest_copy(models::hvs_packet_len(static_cast<std::uint32_t>(n)));
      });
      const double ring_pkts =
          std::max(1.0, std::floor((data - kWritableHeadroom) / static_cast<double>(kPendingSendSize)));
      const double enqueues = send_loop ? std::ceil(sp.packets / ring_pkts) : sp.packets; // per message
      const double per_enqueue =
          k.guest_space_check + (per_check ? k.guest_pending_send_sz_write : 0) + k.guest_enqueue_call;
      const double writer = msgs * (k.guest_user_per_call + k.guest_send_syscall + sp.sum + enqueues * per_enqueue);
      plan.loads.push_back({fmt::format("linux_writer{}", i), gcpu, "guest writer (send syscall, copies into the ring)",
                            i, writer,
                            fmt::format("{:.0f} send() and {:.0f} packets per MB: 2 copies, ring write, space "
                                        "checks",
                                        msgs, msgs * sp.packets)});
      // HostReader: the DPC hands every packet to the reader; one DPC and one
      // receive call per ring's worth of packets at best.
      const Split rp = split(m, kSendBufPayload, [&](double n) { return k.host_rx_packet + k.host_rx_copy(n); });
      const double reader = msgs * rp.sum + msgs * rp.packets / ring_pkts * (k.host_dpc + k.host_recv_call);
      plan.loads.push_back(
          {fmt::format("host_reader{}", i), hcpu, "host reader (DPC draining the ring)", i, reader,
           fmt::format("{:.0f} packets per MB, a DPC per {:.0f} packets at best", msgs * rp.packets, ring_pkts)});
      plan.links.push_back({chan, i, fmt::format("linux_writer{}", i), fmt::format("host_reader{}", i)});
    } else {
      const std::uint32_t max_pkt =
          std::min(static_cast<std::uint32_t>(p.integer("hv_sock.host_packet_size")), writable_bytes(data));
      const Split wp = split(m, max_pkt, [&](double n) { return k.host_tx_packet + k.host_tx_copy(n); });
      plan.loads.push_back({fmt::format("host_writer{}", i), hcpu, "host writer (send, packets into the ring)", i,
                            msgs * (k.host_send_call + wp.sum),
                            fmt::format("{:.0f} packets per MB of up to {} bytes", msgs * wp.packets, max_pkt)});
      // LinuxReader: recv() returns at most the rest of one packet and at
      // most message_size bytes; hv_pkt_iter per packet, iter_close per
      // ring's worth at best.
      const double ring_pkts = std::max(1.0, std::floor(data / static_cast<double>(models::hvs_packet_len(max_pkt))));
      const Split rp = split(m, max_pkt, [&](double n) {
        const double chunks = std::ceil(n / static_cast<double>(m));
        return k.guest_dequeue_packet + chunks * (k.guest_user_per_call + k.guest_recv_syscall) +
               (chunks - 1) * k.guest_copy_fixed + k.guest_copy(n);
      });
      plan.loads.push_back({fmt::format("linux_reader{}", i), gcpu, "guest reader (recv syscall, copy from the ring)",
                            i, msgs * rp.sum + msgs * rp.packets / ring_pkts * k.guest_iter_close,
                            fmt::format("{:.0f} packets per MB, one copy each", msgs * rp.packets)});
      plan.links.push_back({chan, i, fmt::format("host_writer{}", i), fmt::format("linux_reader{}", i)});
    }
  }
  return plan;
}

namespace {

// The guest's send() of m bytes (send_loop off: one hvs_stream_enqueue per
// packet), and its recv() calls of a message of `host_packets` packets (one
// recv() per packet: SO_RCVLOWAT 1, buffer of the bytes missing).
double guest_send(const Costs& k, std::uint64_t m, bool per_check)
{
  const Split s = split(m, kSendBufPayload, [&](double n) {
    return k.guest_space_check + (per_check ? k.guest_pending_send_sz_write : 0) + k.guest_enqueue_call +
           k.guest_space_check + k.guest_copy(n) + k.guest_ring_write +
           k.guest_copy(models::hvs_packet_len(static_cast<std::uint32_t>(n)));
  });
  return k.guest_user_per_call + k.guest_send_syscall + s.sum;
}

// A message guest to host. responded: the guest responds to the host's
// request, its send() starting in the step that ends its recv() with
// hv_pkt_iter_close (a stage begins where a step does).
std::vector<RoundTripStage> guest_to_host(const Costs& k, std::uint64_t m, bool per_check, bool responded)
{
  const Split rx = split(m, kSendBufPayload, [&](double n) { return k.host_rx_packet + k.host_rx_copy(n); });
  return {
      {stage_name(Stage::GuestSend),
       std::string(responded ? "hv_pkt_iter_close of the request, then " : "") +
           "vsock_stream_sendmsg, hvs_stream_has_space, hvs_stream_enqueue, hv_ringbuffer_write",
       (responded ? k.guest_iter_close : 0) + guest_send(k, m, per_check)},
      {stage_name(Stage::GuestSignal), "vmbus_setevent (HvSignalEvent hypercall)", k.guest_signal_host},
      {stage_name(Stage::SignalToHost), "host_signal_latency", k.host_signal_latency},
      {stage_name(Stage::HostRecv), "the channel DPC draining the ring (Windows)",
       k.host_dpc + k.host_recv_call + rx.sum},
  };
}

// A message host to guest. responding: the guest reads the host's request
// and responds (its hv_pkt_iter_close goes with its send(): guest_to_host).
std::vector<RoundTripStage> host_to_guest(const Costs& k, std::uint64_t m, std::uint64_t host_packet, bool responding)
{
  const Split tx = split(m, host_packet, [&](double n) { return k.host_tx_packet + k.host_tx_copy(n); });
  const Split rx = split(m, host_packet, [&](double n) { return k.guest_dequeue_packet + k.guest_copy(n); });
  return {
      {stage_name(Stage::HostSend), "packets of hv_sock.host_packet_size into the ring (Windows)",
       k.host_send_call + tx.sum},
      {stage_name(Stage::HostSignal), "host_signal_guest", k.host_signal_guest},
      {stage_name(Stage::SignalToGuest), "host_interrupt_latency", k.host_interrupt_latency},
      {stage_name(Stage::GuestIrq), "VM exit, vmbus_isr, vmbus_on_event tasklet, hvs_channel_cb",
       k.guest_irq_exit + k.guest_isr + k.guest_tasklet},
      {stage_name(Stage::ReaderWakeup), "sk_data_ready -> try_to_wake_up, guest_wakeup_latency, context switch",
       k.guest_wakeup_latency + k.guest_context_switch},
      {stage_name(Stage::GuestRecv),
       responding ? "vsock_stream_recvmsg, hvs_stream_dequeue"
                  : "vsock_stream_recvmsg, hvs_stream_dequeue, hv_pkt_iter_close",
       (rx.packets - 1) * (k.guest_user_per_call + k.guest_recv_syscall) + rx.sum +
           (responding ? 0 : k.guest_iter_close)},
  };
}

} // namespace

std::vector<RoundTripStage> round_trip_path(const Params& p)
{
  const Costs k = Costs::from(p);
  const bool g2h = p.text("direction") == "guest_to_host";
  const bool rr = p.text("workload.pattern") == "request_response";
  const auto size = [&](const char* key) { return static_cast<std::uint64_t>(p.integer(key)); };
  const std::uint64_t request = rr ? size("workload.request_size") : size("workload.message_size");
  const std::uint64_t response = rr ? size("workload.response_size") : request;
  const bool per_check = p.text("hv_sock.pending_send_size") == "per_check";
  const std::uint64_t host_packet = size("hv_sock.host_packet_size");
  std::vector<RoundTripStage> first =
      g2h ? guest_to_host(k, request, per_check, false) : host_to_guest(k, request, host_packet, true);
  std::vector<RoundTripStage> back =
      g2h ? host_to_guest(k, response, host_packet, false) : guest_to_host(k, response, per_check, true);
  first.insert(first.end(), back.begin(), back.end());
  return first;
}

} // namespace vsim::hv_sock
