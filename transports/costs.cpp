#include "transports/costs.hpp"

namespace vsim {

const std::vector<CostField<SharedCosts>>& shared_costs()
{
  static const std::vector<CostField<SharedCosts>> table = {
      {
          VSIM_COST_NAME(SharedCosts, clock_ghz),
          .unit = "GHz",
          .range = {0.1, 10},
          .doc = "platform clock: every cycle figure below counts cycles of this clock",
          .scope = "",
          .plausible = {2.0, 5.1},
          .basis = "Two-socket Xeons of the era run 2.0-2.7 GHz nominal (e.g. E5-2660 v4 2.0 GHz, 3.0 turbo) with "
                   "single-core turbo up to ~3.5-3.8 GHz; a 2020 desktop part (i7-10700KF, the 2024 series' host) "
                   "3.8 GHz base, 5.1 GHz single-core turbo; every cycle range below assumes 2.5 GHz and scales "
                   "with it.",
          .sources = "[R26], [R27], [R52]",
      },
      // The plain loop's (workload.app loop); iperf3's own is virtio_guest_iperf3_user_per_call.
      {
          VSIM_COST_NAME(SharedCosts, guest_user_per_call),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "user-space cost of one send()/recv() of the plain loop (workload.app loop: a tight loop around "
                 "blocking calls); iperf3 has its own, virtio_guest_iperf3_user_per_call",
          .scope = "",
          .plausible = {20, 600},
          .basis = "(derived) The loop's own instructions and the libc wrapper take tens of cycles; after each call "
                   "the user code refills what the kernel path displaced (pipeline, a few L1 lines from L2 or L3 at "
                   "14-56 cycles, branch history: the indirect cost of a synchronous syscall), a few hundred cycles "
                   "at most for a loop of a few cache lines.",
          .sources = "[R2], [R25], [R50]; hyperv-2019's loop rows fit 300 (docs/calibration.md, not a public source)",
      },
      {
          VSIM_COST_NAME(SharedCosts, guest_copy_fixed),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "fixed cost of one kernel copy (memcpy_from_msg, ring copy, memcpy_to_msg)",
          .scope = "",
          .plausible = {30, 300},
          .basis = "rep-movs start-up is ~40 cycles (measured for REP MOVSD on Nehalem; ERMSB from Ivy Bridge), and "
                   "each copy call adds access_ok, iov_iter bookkeeping and (with SMAP) stac/clac, which Linus "
                   "measured as the dominant part of a short user copy.",
          .sources = "[R30], [R32], [R33]",
      },
      {
          VSIM_COST_NAME(SharedCosts, guest_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "guest kernel copy bandwidth: hv_sock's every guest copy; virtio-vsock's writer's copy of its buffer "
                 "into new packets (the reader's copy out is virtio_guest_rx_copy_bytes_per_cycle)",
          .scope = "",
          .plausible = {1.0, 32},
          .basis = "L1/L2-resident copies run 16-32 B/cycle (peak read+write 32 B/cycle to Ivy Bridge, 64 on "
                   "Haswell+); DRAM-bound single-core copy on many-core Xeons is latency/concurrency-limited (~90 "
                   "ns DRAM, ~20 GB/s single-thread STREAM on Haswell-EP, worse on Skylake-SP) giving ~2-4 B/cycle; "
                   "~1 B/cycle when lines come from the remote socket's memory (higher latency than the ~90 ns "
                   "local figure; no remote figure found in this search) or are pulled from another core's cache.",
          .sources = "[R31], [R29], [R27], [R28], [R25], [R26]",
      },
      {
          VSIM_COST_NAME(SharedCosts, guest_wakeup_latency),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "from wake_up() in the callback until the woken thread runs (IPI, scheduler)",
          .scope = "",
          .plausible = {1500, 30000},
          .basis = "In-guest cross-vCPU wake-up plus switch measured 1.16-2.5 us per context switch on KVM "
                   "(2900-6200 cycles, lower with guest polling); a polling idle target needs no IPI (~0.6 us "
                   "floor, derived); a halted vCPU adds a host scheduler trip (\"a few microseconds\") and C1E exit "
                   "(10 us on SKX); deep C6 (133 us) is excluded as untuned.",
          .sources = "[R17], [R18], [R47], [R41]",
      },
      {
          VSIM_COST_NAME(SharedCosts, guest_context_switch),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "schedule() out and back in, charged to the thread that slept (sys time)",
          .scope = "",
          .plausible = {1500, 7500},
          .basis = "schedule() out and back in costs ~0.6-3 us on 2017-2019 kernels: VM context-switch benchmarks "
                   "give 1.2-2.5 us per switch (including wake-up), and KPTI adds a syscall-like cost (CR3 switch, "
                   "TLB refill) to every switch.",
          .sources = "[R17], [R4], [R44], [R43]",
      },
      {
          VSIM_COST_NAME(SharedCosts, host_wakeup_latency),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "a blocked host thread's wake-up latency once its wait is satisfied",
          .scope = "",
          .plausible = {2500, 50000},
          .basis = "A blocked host thread runs 1-20 us after its wait is satisfied: Windows LatencyMon reports "
                   "average interrupt-to-user-process latency of 3.3-9.1 us, SKX C1/C1E exit costs 2/10 us, and "
                   "KVM's halt-poll documentation puts one scheduler trip at a few microseconds.",
          .sources = "[R39], [R41], [R18]",
      },
      {
          VSIM_COST_NAME(SharedCosts, latency_jitter),
          .unit = "fraction",
          .range = {0, 0.9},
          .doc = "each latency is drawn uniformly in [1-j, 1+j] times its value",
          .scope = "",
          .plausible = {0.05, 0.5},
          .basis = "(derived) Repeated public hvsock runs vary by +-5-30% per point, and wake-up latency "
                   "distributions are long-tailed (average ~3 us, maxima 160 us+); no source gives a uniform-jitter "
                   "width directly.",
          .sources = "[R38], [R39]",
      },
      {
          VSIM_COST_NAME(SharedCosts, iteration_jitter),
          .unit = "fraction",
          .range = {0, 0.5},
          .doc = "per iteration, host costs are scaled by a factor drawn in [1-j, 1+j]",
          .scope = "",
          .plausible = {0.02, 0.15},
          .basis = "(derived) Run-to-run spread of repeated hvsock bulk transfers is about +-7% for stable points "
                   "(e.g. 2934-3359 Mbit/s at 4 KiB) and +-15-30% for unstable ones; the 2019 published min-max "
                   "rows are about +-4-11%.",
          .sources = "[R38]; project rows in docs/calibration.md (not a public source)",
      },
      {
          VSIM_COST_NAME(SharedCosts, guest_iteration_jitter),
          .unit = "fraction",
          .range = {0, 0.5},
          .doc = "per iteration, guest CPU costs (the guest_* ones, in cycles; copy bandwidths divided) are scaled "
                 "by a factor drawn in [1-j, 1+j], from a stream of their own",
          .scope = "",
          .plausible = {0.01, 0.15},
          .basis = "(derived) As iteration_jitter, for the guest side: the published 2019 hvsock rows limited by "
                   "the guest's CPU (128 B and 1 KiB guest to host) spread by 7-20% between min and max over 10 "
                   "runs, as much as the host-bound ones.",
          .sources = "[R38]; project rows in docs/calibration.md (not a public source)",
      },
      // What spreads a round trip (issue 53): the scheduler tick of each
      // side and the host cores' idle states. Declared with an `absent`
      // value (0: the mechanism off) so that profiles written before them
      // load unchanged.
      {
          VSIM_COST_NAME(SharedCosts, guest_tick_hz),
          .unit = "Hz",
          .range = {0, 10000},
          .doc = "the guest kernel's scheduler tick (CONFIG_HZ) on a busy vCPU (NO_HZ_IDLE: none while idle); 0: "
                 "no tick modelled (a profile without it)",
          .scope = "",
          .plausible = {0, 1000},
          .basis = "CONFIG_HZ is 250 in Debian's kernels, 1000 in Fedora's and (from 24.04) Ubuntu's generic "
                   "kernels, 250 in Ubuntu's before; every distribution's is tickless when idle (NO_HZ_FULL=y "
                   "without nohz_full= behaves as NO_HZ_IDLE).",
          .sources = "[R69], [R70]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, guest_tick),
          .unit = "cycles",
          .range = {0, 1e6},
          .doc = "one guest tick on a busy vCPU: the timer's expiry exit and injection, the handler "
                 "(update_process_times, scheduler_tick, the timer softirq) and the TSC_DEADLINE re-arm (irq time)",
          .scope = "",
          .plausible = {2500, 20000},
          .basis = "kvm-unit-tests tscdeadline: an expiry, its exit, injection and a minimal handler ~2300 cycles "
                   "and an immediate re-arm with injection ~2500 on Skylake-SP with KVM's fastpath; the tick "
                   "handler itself 1.8-4.9 us in osnoise's local_timer samples (4500-12000 cycles at 2.5 GHz).",
          .sources = "[R66], [R71]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, host_tick_hz),
          .unit = "Hz",
          .range = {0, 10000},
          .doc = "the host kernel's scheduler tick (CONFIG_HZ) on a busy host CPU, the cores under running vCPUs "
                 "included (an external-interrupt exit); 0: no tick modelled (a profile without it)",
          .scope = "",
          .plausible = {0, 1000},
          .basis = "As guest_tick_hz, for the host's kernel.",
          .sources = "[R69], [R70]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, host_tick),
          .unit = "cycles",
          .range = {0, 1e6},
          .doc = "one host tick on a busy host CPU (tick_sched_timer's handler and softirq, irq time); on the core "
                 "of a running vCPU also its exit and re-entry",
          .scope = "",
          .plausible = {2500, 15000},
          .basis = "osnoise's local_timer samples on bare metal 1.8-4.9 us per tick (its interrupt entry and exit "
                   "not counted); a tick's total cost including its cache refills 5-15 us at 1000 Hz on older "
                   "hardware (0.5-1.5% of a CPU), most of it indirect.",
          .sources = "[R71], [R72]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, host_idle_c1_exit),
          .unit = "cycles latency",
          .range = {0, 1e7},
          .doc = "exit latency of the host cores' shallowest idle state (C1, MWAIT 0x00), added to a wake-up that "
                 "finds the core in it; 0: no idle states modelled (a profile without them)",
          .scope = "",
          .plausible = {0, 10000},
          .basis = "intel_idle's Skylake table gives C1 2 us exit and 2 us target residency (worst-case guidance); "
                   "a client part without a table of its own (Comet Lake) takes the BIOS's _CST, C1 about 1 us.",
          .sources = "[R73]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, host_idle_c1e_exit),
          .unit = "cycles latency",
          .range = {0, 1e7},
          .doc = "exit latency of the host cores' C1E idle state (MWAIT 0x01)",
          .scope = "",
          .plausible = {0, 60000},
          .basis = "intel_idle: C1E 10 us exit on Skylake (table), 15 us at the 99.99th percentile measured on "
                   "SnowRidge with wult.",
          .sources = "[R73], [R74]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, host_idle_c1e_residency),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "target residency of C1E: the menu governor picks it only for a predicted idle period at least "
                 "this long (and an exit latency within it)",
          .scope = "",
          .plausible = {0, 100000},
          .basis = "intel_idle: C1E 20 us target residency on Skylake.",
          .sources = "[R73]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, host_idle_c6_exit),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "exit latency of the host cores' deep idle state (C6, MWAIT 0x20)",
          .scope = "",
          .plausible = {0, 400000},
          .basis = "intel_idle: C6 85 us exit on Skylake client (table), 133 us on Skylake-X; 128 us measured on "
                   "Ice Lake Xeon against 41 us in its _CST.",
          .sources = "[R73]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(SharedCosts, host_idle_c6_residency),
          .unit = "cycles latency",
          .range = {0, 1e9},
          .doc = "target residency of C6",
          .scope = "",
          .plausible = {0, 2000000},
          .basis = "intel_idle: C6 200 us target residency on Skylake client, 600 us on Skylake-X.",
          .sources = "[R73]",
          .absent = 0,
      },
  };
  return table;
}

} // namespace vsim
