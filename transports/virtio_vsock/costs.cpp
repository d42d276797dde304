#include "transports/virtio_vsock/costs.hpp"

namespace vsim::virtio_vsock::detail {

namespace {

const std::vector<CostField<Costs>>& table()
{
  using CostsType = Costs;
  static const std::vector<CostField<Costs>> t = {
      // virtio-vsock: Linux guest driver (net/vmw_vsock/virtio_transport*.c)
        VSIM_COST(virtio_guest_send_syscall, "cycles", 0, 1e7, "sendmsg entry/exit + vsock_stream_sendmsg fixed work", "virtio_vsock",
         300, 3000, "Same composition as guest_send_syscall (entry/exit 190-240 ns with KPTI, socket lock, lookups, cache misses).",
         "[R1], [R2], [R3]"),
        VSIM_COST(virtio_guest_recv_syscall, "cycles", 0, 1e7, "recvmsg entry/exit + vsock_stream_recvmsg fixed work", "virtio_vsock",
         300, 3000, "Same as above for recvmsg; per-packet dequeue and credit-update packets are separate parameters.",
         "[R1], [R2], [R3]"),
        VSIM_COST(virtio_guest_poll_syscall, "cycles", 0, 1e7, "select() on the benchmark's sockets (workload.app iperf3): entry/exit, vsock_poll under the socket lock, the loop's timers", "virtio_vsock",
         300, 4000, "(derived) A syscall entry/exit as for recvmsg (190-240 ns with KPTI), a poll callback and wait-queue set-up per descriptor (iperf3 polls its control socket and the stream), vsock_poll's lock_sock, and iperf3's timer check (gettimeofday in the vDSO).",
         "[R1], [R2], [R3]"),
        VSIM_COST(virtio_guest_alloc, "cycles", 0, 1e7, "one kernel allocation (kzalloc of a packet, kmalloc of its buffer)", "virtio_vsock",
         20, 3000, "A SLUB fast-path allocation is ~20-25 cycles (42-47 for alloc+free) plus zeroing of a small struct; a 64 KiB kmalloc (5.4 tx packets) is an order-4 buddy allocation that before 5.13 takes the zone lock with no per-CPU cache (no cycle figure found; upper bound ~1 us derived).",
         "[R20], [R23], [R24], [R22]"),
        VSIM_COST(virtio_guest_free, "cycles", 0, 1e7, "freeing one packet (struct and buffer)", "virtio_vsock",
         15, 1500, "Mirror of virtio_guest_alloc (SLUB fast-path free, buddy free with merging under the zone lock for high orders).",
         "[R20], [R23], [R24]"),
        VSIM_COST(virtio_guest_pkt, "cycles", 0, 1e7, "virtio_transport_send_pkt_info per packet: credit, header, send list, queue_work", "virtio_vsock",
         150, 3000, "(derived) Credit arithmetic under spinlocks (irq save/restore 37 cycles), list insertion and queue_work, which wakes an idle kworker (try_to_wake_up, possibly an IPI exit).",
         "[R20], [R11]"),
        VSIM_COST(virtio_guest_vq_add, "cycles", 0, 1e7, "virtqueue_add_sgs for one chain", "virtio_vsock",
         50, 600, "(derived) Two 16-byte descriptors and an avail entry, with cross-core misses when vhost's core last touched those lines.",
         "[R26]"),
        VSIM_COST(virtio_guest_kick, "cycles", 0, 1e7, "virtqueue_notify: the notify write's VM exit and re-entry (ioeventfd, in the kernel), hypervisor time", "virtio_vsock",
         1500, 6000, "A PIO or fast-MMIO ioeventfd write exits to a kernel handler (world switch ~1350-2000 cycles, fast-MMIO eventfd as fast as PIO) and signals the eventfd; an exit handled in QEMU costs ~5800 and serves as upper reference.",
         "[R5], [R16], [R14], [R7]"),
        VSIM_COST(virtio_guest_work_run, "cycles", 0, 1e7, "one workqueue item run (process_one_work); the kworker's switches in and out are guest_context_switch each", "virtio_vsock",
         200, 6000, "(derived) Dispatch by a running kworker (pool lock, work list, the item's own set-up such as tx_lock or rx_lock) is cheap; a cold cache after another thread ran costs up to a context switch (1.2-2.5 us in VMs).",
         "[R17], [R49]"),
        VSIM_COST(virtio_guest_rx_buf, "cycles", 0, 1e7, "rx work per used rx buffer (virtqueue_get_buf, length checks)", "virtio_vsock",
         80, 600, "(derived) Used-ring entry written by vhost on another core (one miss) plus detach_buf bookkeeping.",
         "[R26]"),
        VSIM_COST(virtio_guest_rx_pkt, "cycles", 0, 1e7, "virtio_transport_recv_pkt per packet: socket lookup, lock, credit fields, enqueue", "virtio_vsock",
         150, 2000, "(derived) Connected-socket hash lookup (likely a miss), bh lock, credit fields, queueing and sk_data_ready.",
         "[R26], [R20]"),
        VSIM_COST(virtio_guest_tx_done, "cycles", 0, 1e7, "tx work per completed tx chain (virtqueue_get_buf)", "virtio_vsock",
         50, 600, "(derived) Same as virtio_guest_rx_buf for a completed tx chain.",
         "[R26]"),
        VSIM_COST(virtio_guest_irq_exit, "cycles", 0, 1e7, "MSI injection into the vCPU: exit/entry cost there (hypervisor time)", "virtio_vsock",
         100, 6000, "With APICv posted interrupts (Skylake-SP) a running vCPU takes the MSI without an exit (cost a few hundred cycles at most, derived); without them, exit, injection and entry as for timers (~3200) plus an EOI exit unless PV EOI.",
         "[R7], [R8], [R13], [R6]"),
        VSIM_COST(virtio_guest_isr, "cycles", 0, 1e7, "vring_interrupt: interrupt entry, callback, queue_work (irq time)", "virtio_vsock",
         300, 2500, "(derived) Interrupt entry/exit (syscall entry/exit as proxy), vring_interrupt and queue_work.",
         "[R1], [R2]"),
        VSIM_COST(virtio_guest_dequeue_pkt, "cycles", 0, 1e7, "virtio_transport_stream_do_dequeue per packet touched", "virtio_vsock",
         50, 600, "(derived) Spinlock, list walk and length bookkeeping per packet touched (copy and free are separate).",
         "[R20], [R26]"),
        // virtio-vsock: host (drivers/vhost/vsock.c, vhost.c, the host socket)
        VSIM_COST(virtio_host_user_per_call, "cycles", 0, 1e7, "user-space cost of one send()/recv() of the host application (iperf3's server: once per block)", "virtio_vsock",
         50, 5000, "Same as guest_user_per_call (tight loop tens of cycles; iperf3 with timers and select() up to ~2 us).",
         "[R1], [R2]"),
        VSIM_COST(virtio_host_send_syscall, "cycles", 0, 1e7, "host sendmsg entry/exit + vsock_stream_sendmsg fixed work", "virtio_vsock",
         300, 3000, "Same composition as guest_send_syscall on the host kernel (KPTI and retpolines on Skylake-SP hosts of 2018-19).",
         "[R1], [R2], [R3]"),
        VSIM_COST(virtio_host_recv_syscall, "cycles", 0, 1e7, "host recvmsg entry/exit + vsock_stream_recvmsg fixed work", "virtio_vsock",
         300, 3000, "Same as above for recvmsg.",
         "[R1], [R2], [R3]"),
        VSIM_COST(virtio_host_poll_syscall, "cycles", 0, 1e7, "host select() on the benchmark's sockets (workload.app iperf3)", "virtio_vsock",
         300, 4000, "Same as virtio_guest_poll_syscall on the host kernel.",
         "[R1], [R2], [R3]"),
        VSIM_COST(virtio_host_alloc, "cycles", 0, 1e7, "one host kernel allocation (packet struct or buffer)", "virtio_vsock",
         20, 3000, "Same as virtio_guest_alloc.",
         "[R20], [R23], [R24]"),
        VSIM_COST(virtio_host_free, "cycles", 0, 1e7, "freeing one host packet", "virtio_vsock",
         15, 1500, "Same as virtio_guest_free.",
         "[R20], [R23]"),
        VSIM_COST(virtio_host_pkt, "cycles", 0, 1e7, "host virtio_transport_send_pkt_info per packet (credit, header, send list)", "virtio_vsock",
         150, 3000, "(derived) As virtio_guest_pkt; queueing vhost work wakes the vhost worker (try_to_wake_up plus a host IPI, no VM exit).",
         "[R20], [R11]"),
        VSIM_COST(virtio_host_copy_fixed, "cycles", 0, 1e7, "fixed cost of one host kernel copy", "virtio_vsock",
         30, 300, "Same as guest_copy_fixed.",
         "[R30], [R32]"),
        VSIM_COST(virtio_host_copy_bytes_per_cycle, "bytes/cycle", 0.01, 1e3, "host copy bandwidth between the application and kernel packets", "virtio_vsock",
         1.0, 32, "Same copy physics as guest_copy_bytes_per_cycle.",
         "[R31], [R29], [R27], [R28]"),
        VSIM_COST(virtio_host_dequeue_pkt, "cycles", 0, 1e7, "host virtio_transport_stream_do_dequeue per packet touched", "virtio_vsock",
         50, 600, "Same as virtio_guest_dequeue_pkt.",
         "[R20], [R26]"),
        VSIM_COST(virtio_host_worker_run, "cycles", 0, 1e7, "vhost worker: one work item run (handle_tx_kick or send_pkt_work) fixed cost", "virtio_vsock",
         300, 3000, "(derived) Worker loop, vq mutex, disabling and re-enabling notification with a barrier; every guest-memory access is a copy_user with access_ok and (unless nosmap) stac/clac, costly enough that a 2019 RFC bypassing them gained 24% tx packets per second.",
         "[R33], [R32]"),
        VSIM_COST(virtio_host_tx_pkt, "cycles", 0, 1e7, "vhost per guest tx chain: vhost_get_vq_desc, header copy, recv_pkt, add_used", "virtio_vsock",
         500, 5000, "(derived) vhost_get_vq_desc (avail index, ring entry and descriptors read through copy_user, misses on guest-written lines), a 44-byte header copy, delivery to the socket with a reader wake-up, add_used and a barrier.",
         "[R33], [R26]"),
        VSIM_COST(virtio_host_rx_buf, "cycles", 0, 1e7, "vhost per guest rx buffer filled: vhost_get_vq_desc, header copy, add_used", "virtio_vsock",
         300, 3000, "(derived) As virtio_host_tx_pkt without socket delivery: descriptor fetch, header write, add_used.",
         "[R33], [R26]"),
        VSIM_COST(virtio_host_guest_copy_bytes_per_cycle, "bytes/cycle", 0.01, 1e3, "vhost copy bandwidth to and from guest memory (copy_to_iter/copy_from_iter)", "virtio_vsock",
         1.0, 32, "Same copy physics; per-segment copy_user overhead (access_ok, stac/clac, address translation) is a fixed cost per segment, not a per-byte one.",
         "[R31], [R27], [R33], [R32]"),
        VSIM_COST(virtio_host_signal, "cycles", 0, 1e7, "vhost_signal: eventfd_signal into irqfd and MSI injection request, on the worker's CPU", "virtio_vsock",
         500, 4000, "(derived) Reading used_event from guest memory, eventfd_signal into irqfd and MSI injection: a posted-interrupt descriptor update plus notification IPI for a running vCPU, or a kick and wake-up of a halted one.",
         "[R15], [R11], [R47]"),
        VSIM_COST(virtio_host_kick_latency, "cycles latency", 0, 1e8, "guest notify write until its ioeventfd queues the vhost work (exit handling, eventfd; the worker's own wake-up is host_wakeup_latency)", "virtio_vsock",
         1000, 7500, "Exit to the in-kernel handler (world switch ~1350-2000 cycles), fast-MMIO ioeventfd match and eventfd_signal into the vhost poll queue (worker wake-up excluded).",
         "[R5], [R16], [R14]"),
        VSIM_COST(virtio_host_interrupt_latency, "cycles latency", 0, 1e8, "vhost_signal until the interrupt runs on guest vCPU 0", "virtio_vsock",
         1500, 50000, "A running vCPU with posted interrupts takes the notification IPI in ~0.5-1 us (derived); a halted vCPU needs its thread woken and re-entered (1.2-2.5 us per cross-vCPU switch measured) plus C-state exit; ~20 us upper bound excludes deep C6.",
         "[R17], [R18], [R8], [R41]"),
  };
  return t;
}

}  // namespace

Costs Costs::from(const Params& p) { return fill_costs(p, table()); }

std::vector<CostDecl> Costs::decls() { return decls_of(table()); }

}  // namespace vsim::virtio_vsock::detail
