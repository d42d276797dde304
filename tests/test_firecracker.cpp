// End-to-end runs of the firecracker_vsock transport (Firecracker's device,
// transports/virtio_vsock/firecracker.cpp) and `direction: bidirectional`.
// The costs are set here (firecracker-m6i's start values), not taken from
// the calibrated profile, so these pins do not move when it is re-fitted.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/run/runner.hpp"
#include "transports/simulate.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

const char* kFcBase = R"(
transport: firecracker_vsock
platform: firecracker-m6i
seed: 5
iterations: 1
virtio_vsock.preset: linux-5.10
workload:
  app: iperf3
  message_size: 64KiB
  total_bytes: 1MB
costs:
  clock_ghz: 3.5
  guest_user_per_call: 300
  guest_copy_fixed: 60
  guest_copy_bytes_per_cycle: 19.41
  guest_wakeup_latency: 2473
  guest_context_switch: 1638
  host_wakeup_latency: 6906.29749367122
  latency_jitter: 0.2
  iteration_jitter: 0.03
  guest_iteration_jitter: 0.03
  virtio_guest_send_syscall: 815.5
  virtio_guest_recv_syscall: 2854
  virtio_guest_poll_syscall: 1168
  virtio_guest_iperf3_user_per_call: 3100.910719919002
  virtio_guest_alloc: 116.8
  virtio_guest_page_alloc: 800
  virtio_guest_page_alloc_pcp: 300
  virtio_guest_free: 271.8
  virtio_guest_pkt: 2883.846637393947
  virtio_guest_vq_add: 363.76403694869197
  virtio_guest_kick: 5714
  virtio_guest_work_run: 1734
  virtio_guest_rx_buf: 182
  virtio_guest_rx_pkt: 247.9184742792844
  virtio_guest_tx_done: 543.7
  virtio_guest_irq_exit: 1926
  virtio_guest_isr: 494.6
  virtio_guest_dequeue_pkt: 423.3
  virtio_host_iperf3_user_per_call: 1116
  virtio_host_poll_syscall: 1168
  virtio_guest_wake_ipi: 3000
  virtio_guest_halted_wakeup: 21574.174148163896
  virtio_guest_halt_poll_wakeup: 3000
  virtio_kvm_halt_poll_ns: 200000
  virtio_host_wake_ipi: 1105
  virtio_host_kick_latency: 1050
  virtio_host_interrupt_latency: 14680.717833882421
  virtio_guest_init_on_alloc: 0
  virtio_guest_rx_copy_bytes_per_cycle: 10.48
  virtio_zero_bytes_per_cycle: 5.550066785298559
  fc_loop_iter: 2000
  fc_eventfd_read: 800
  fc_muxer_epoll: 800
  fc_epoll_ctl: 1000
  fc_tx_pkt: 600
  fc_rx_probe: 200
  fc_rx_pkt: 600
  fc_irq: 2000
  fc_irqfd_inject: 0
  fc_seccomp: 200
  fc_unix_syscall: 1200
  fc_unix_skb: 1000
  fc_vcpu_mmio_exit: 5000
  fc_host_copy_bytes_per_cycle: 19.41
  fc_host_rx_copy_bytes_per_cycle: 10.48
)";

std::string base()
{
  return kFcBase;
}

std::vector<PointResult> run(const std::vector<std::string>& sets)
{
  const Experiment ex = load_experiment_text(base(), "t.yaml", sets, registry());
  RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  return run_points(ex, simulate_iteration, opt);
}

double metric(const PointResult& r, const char* name)
{
  INFO(r.failed);
  REQUIRE(r.failed.empty());
  return r.iterations.at(0).at(name);
}

} // namespace

TEST_CASE("firecracker_vsock delivers every byte each way and both ways, with its figures", "[firecracker][e2e]")
{
  for (const char* dir : {"guest_to_host", "host_to_guest", "bidirectional"}) {
    for (const char* vcpus : {"1", "2"}) {
      INFO(dir << " vcpus " << vcpus);
      auto r = run({std::string("direction=") + dir, std::string("guest.vcpus=") + vcpus,
                    std::string("workload.connections=") + vcpus});
      REQUIRE(r.size() == 1);
      const double total = metric(r[0], "throughput_Gbps");
      CHECK(total > 1);
      CHECK(metric(r[0], "throughput_Mibps") == Approx(total * 1e9 / 1048576));
      // Per direction (bidirectional runs): the first half of the connections
      // write from the guest.
      const std::string d = dir;
      REQUIRE(r[0].iterations[0].count("throughput_guest_to_host_Gbps") == (d == "bidirectional" ? 1u : 0u));
      if (d == "bidirectional") {
        const double g2h = metric(r[0], "throughput_guest_to_host_Gbps");
        const double h2g = metric(r[0], "throughput_host_to_guest_Gbps");
        CHECK(g2h + h2g == Approx(total));
        CHECK(g2h > 0);
        CHECK((h2g > 0) == (std::string(vcpus) == "2"));
      }
      // The VMM thread does work; the vCPUs' figure includes their busy time.
      CHECK(metric(r[0], "cpu_vmm_thread_percent") > 1);
      CHECK(metric(r[0], "cpu_vmm_thread_percent") <= 100.0001);
      CHECK(metric(r[0], "cpu_vcpus_total_percent") >= metric(r[0], "guest_cpu_percent"));
      CHECK(metric(r[0], "cpu_vcpus_total_percent") <= 100.0001 * std::stod(vcpus));
    }
  }
}

TEST_CASE("firecracker_vsock credit: a credit update per 60 KiB forwarded, none from a guest that only writes",
          "[firecracker][credit]")
{
  // 1 MB in 64 KiB packets: 15 whole packets each push the forwarded count
  // past tx_buf_size - 4 KiB (VsockConnection::peer_needs_credit_update);
  // the last 16960 bytes do not.
  auto r = run({"direction=guest_to_host"});
  CHECK(metric(r[0], "credit_updates_per_MB") == 15);
  // With a window of 128 KiB, an update per two packets (7 of 15).
  auto wide = run({"direction=guest_to_host", "firecracker_vsock.tx_buf_size=128KiB"});
  CHECK(metric(wide[0], "credit_updates_per_MB") == 7);
  CHECK(metric(wide[0], "throughput_Gbps") > metric(r[0], "throughput_Gbps"));
}

TEST_CASE("firecracker_vsock: a host stream that takes less than a packet leaves the rest in the TxBuf",
          "[firecracker][txbuf]")
{
  // The default send buffer (212992) takes a 64 KiB packet whole; 4608
  // bytes take a part, the rest waits in the TxBuf for EPOLLOUT.
  auto plain = run({"direction=guest_to_host"});
  CHECK(metric(plain[0], "txbuf_pushes_per_MB") == 0);
  auto small = run({"direction=guest_to_host", "firecracker_vsock.unix_sndbuf=4608"});
  CHECK(metric(small[0], "txbuf_pushes_per_MB") > 0);
  CHECK(metric(small[0], "throughput_Gbps") < metric(plain[0], "throughput_Gbps"));
}

TEST_CASE("firecracker_vsock rx: one packet per connection per wake-up, or a drain", "[firecracker][rx]")
{
  auto one = run({"direction=host_to_guest"});
  auto drain = run({"direction=host_to_guest", "firecracker_vsock.rx_per_wakeup=drain"});
  // Every 4 KiB rx buffer costs a loop pass with one packet a wake-up; a
  // drain fills several per pass.
  CHECK(metric(one[0], "worker_runs_per_MB") >= metric(one[0], "rx_buffers_per_MB") * 0.99);
  CHECK(metric(drain[0], "worker_runs_per_MB") < metric(one[0], "worker_runs_per_MB"));
  CHECK(metric(one[0], "rx_buffers_per_MB") == Approx(1e6 / 4096).epsilon(0.01));
}

TEST_CASE("firecracker_vsock on x86: a kworker on the VMM's core injects the interrupts, on its own time",
          "[firecracker][irqfd]")
{
  // The same interrupt work inline in the VMM's irqfd write (fc_irq 2000),
  // or split: 500 for the write and 1500 for the injection, which a kworker
  // runs on the VMM's core (irqfd_wakeup's schedule_work), plus its switch
  // in (guest_context_switch, 1638) when it was asleep.
  auto inl = run({"direction=host_to_guest"});
  auto split = run({"direction=host_to_guest", "costs.fc_irq=500", "costs.fc_irqfd_inject=1500"});
  CHECK(metric(inl[0], "irqfd_writes_per_MB") > 0);
  CHECK(metric(inl[0], "irqfd_injections_per_MB") == 0);
  CHECK(inl[0].iterations.at(0).count("thread.kworker_irqfd.busy_percent") == 0);
  const double writes = metric(split[0], "irqfd_writes_per_MB");
  const double injections = metric(split[0], "irqfd_injections_per_MB");
  CHECK(injections > 0);
  CHECK(injections <= writes); // a write while the item is queued shares its injection
  // The kworker's CPU time: 1500 cycles an injection, and at most one switch
  // each (and the part of one more that runs across the end of the run).
  const double secs = metric(split[0], "elapsed_seconds");
  const double mb = metric(split[0], "throughput_Gbps") * 1e9 / 8 * secs / 1e6;
  const double kworker = metric(split[0], "thread.kworker_irqfd.busy_percent") / 100 * secs * 3.5e9;
  CHECK(kworker >= injections * mb * 1500 * 0.999);
  CHECK(kworker <= (injections * mb + 1) * (1500 + 1638));
  // Its time is the VMM's core's, not the VMM thread's: the core runs the two.
  CHECK(metric(split[0], "cpu.hcpu0.busy_percent") ==
        Approx(metric(split[0], "cpu_vmm_thread_percent") + metric(split[0], "thread.kworker_irqfd.busy_percent")));
  const double vmm_per_byte_inline = metric(inl[0], "cpu_vmm_thread_percent") / metric(inl[0], "throughput_Gbps");
  const double vmm_per_byte_split = metric(split[0], "cpu_vmm_thread_percent") / metric(split[0], "throughput_Gbps");
  CHECK(vmm_per_byte_split < vmm_per_byte_inline * 0.95);
}

TEST_CASE("halt polling: an interrupt that ends a halt adapts the window, and the polled time is the vCPU's",
          "[firecracker][halt_poll]")
{
  // Guest to host with one 64 KiB packet in flight at a time (the device's
  // 64 KiB window): the writer waits for each CREDIT_UPDATE with its vCPU
  // halted, and every halt ends with the interrupt that brings the update
  // (kvm_vcpu_block's wake event), never with a thread's wake-up. KVM's
  // window grows on those halts (grow_halt_poll_ns) until it covers them,
  // so the vCPU thread is busy polling through nearly every gap: the host
  // sees it almost always busy, as Firecracker's CI does (99%).
  auto polled = run({"direction=guest_to_host"});
  auto off = run({"direction=guest_to_host", "costs.virtio_kvm_halt_poll_ns=0"});
  const double guest = metric(polled[0], "guest_cpu_percent");
  CHECK(guest < 90);
  CHECK(metric(polled[0], "cpu_vcpus_total_percent") > 97);
  // Without halt polling the vCPU thread's time is the guest's work alone.
  CHECK(metric(off[0], "cpu_vcpus_total_percent") == Approx(metric(off[0], "guest_cpu_percent")));
}

TEST_CASE("firecracker_vsock runs are deterministic and pinned", "[firecracker][determinism]")
{
  auto a = run({"direction=host_to_guest"});
  auto b = run({"direction=host_to_guest"});
  CHECK(a[0].iterations == b[0].iterations);
  CHECK(metric(a[0], "elapsed_seconds") == Approx(0.0008722577).epsilon(1e-7));
}

TEST_CASE("firecracker_vsock refuses what it does not model, up front", "[firecracker][input]")
{
  auto refused = [](const std::vector<std::string>& sets, const std::string& key) {
    try {
      load_experiment_text(base(), "t.yaml", sets, registry());
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
  };
  refused({"virtio_vsock.preset=linux-6.9"}, "virtio_vsock.preset");
  refused({"workload.pattern=ping_pong"}, "workload.pattern");
  refused({"virtio_vsock.event_idx=true"}, "virtio_vsock.event_idx"); // vhost's knob, not this device's
  // Round trips run one way, on every transport.
  try {
    load_experiment_text("transport: hv_sock\ndirection: bidirectional\nworkload: {pattern: ping_pong}\n", "h.yaml", {},
                         registry());
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("bidirectional round trips") != std::string::npos);
  }
}

TEST_CASE("direction bidirectional on hv_sock and virtio_vsock: the first half of the connections each way",
          "[bidirectional][e2e]")
{
  for (const char* transport : {"hv_sock", "virtio_vsock"}) {
    INFO(transport);
    const Experiment ex = load_experiment_text(
        std::string("transport: ") + transport +
            "\niterations: 1\ndirection: bidirectional\nworkload: {connections: 3, total_bytes: 1MB, message_size: "
            "16KiB}\n",
        "b.yaml", {}, registry());
    RunOptions opt;
    opt.jobs = 1;
    opt.progress = false;
    const auto r = run_points(ex, simulate_iteration, opt);
    REQUIRE(r.size() == 1);
    const double g2h = metric(r[0], "throughput_guest_to_host_Gbps");
    const double h2g = metric(r[0], "throughput_host_to_guest_Gbps");
    CHECK(g2h > 0);
    CHECK(h2g > 0);
    CHECK(g2h + h2g == Approx(metric(r[0], "throughput_MBps") * 8 / 1000));
  }
}
