// A split virtqueue (virtio spec 1.1, section 2.6 "Split Virtqueues"), with
// the driver's side as Linux implements it (drivers/virtio/virtio_ring.c,
// virtqueue_add_split / virtqueue_kick_prepare_split / virtqueue_get_buf_ctx_split
// / virtqueue_enable_cb_prepare_split / virtqueue_disable_cb_split) and the
// device's side as vhost does (drivers/vhost/vhost.c, vhost_get_vq_desc /
// vhost_add_used_n / vhost_notify / vhost_enable_notify / vhost_disable_notify).
//
// What is modelled exactly: the descriptor table's free list (a chain takes
// one descriptor per buffer, or one slot with an indirect table), the
// available and used rings with free-running 16-bit indices, the
// notification flags (VRING_AVAIL_F_NO_INTERRUPT, VRING_USED_F_NO_NOTIFY) and
// VIRTIO_RING_F_EVENT_IDX (used_event / avail_event and vring_need_event()
// with 16-bit wrap-around).
//
// Time: the driver and the device are threads of the engine's one order of
// events (sim/thread.hpp), so every word one side writes and the other reads
// (avail.idx, used.idx, the flags, used_event, avail_event) is plain state,
// read when it is current. Operations take the time they happen at for the
// queue's occupancy statistics.
//
// Each side's private state (free list, shadow indices) is touched by one
// side only. Invariants (no more buffers in flight than descriptors, indices
// never more than the queue size apart, used entries name buffers that are in
// flight) are checked on every operation; a violation throws std::logic_error.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/occupancy.hpp"
#include "sim/time.hpp"

namespace vsim::models {

// vring_need_event() (include/uapi/linux/virtio_ring.h): whether moving an
// index from old_idx to new_idx passes event_idx, in 16-bit arithmetic.
inline bool vring_need_event(std::uint16_t event_idx, std::uint16_t new_idx, std::uint16_t old_idx)
{
  return static_cast<std::uint16_t>(new_idx - event_idx - 1) < static_cast<std::uint16_t>(new_idx - old_idx);
}

class Virtqueue {
public:
  // size: entries (a power of 2, 2..32768); event_idx: VIRTIO_RING_F_EVENT_IDX
  // negotiated; indirect: VIRTIO_RING_F_INDIRECT_DESC negotiated (a chain of
  // more than one buffer then takes one descriptor).
  Virtqueue(std::uint16_t size, bool event_idx, bool indirect, std::uint16_t first_index = 0);

  std::uint16_t size() const { return size_; }
  bool event_idx() const { return event_idx_; }

  // Descriptors a chain of `buffers` buffers takes, with or without
  // VIRTIO_RING_F_INDIRECT_DESC.
  static std::uint16_t descriptors_for(std::uint16_t buffers, bool indirect)
  {
    return indirect && buffers > 1 ? 1 : buffers;
  }
  std::uint16_t descriptors_for(std::uint16_t buffers) const { return descriptors_for(buffers, indirect_); }

  // ---- driver (guest) -----------------------------------------------------
  std::uint16_t num_free() const { return num_free_; }
  // virtqueue_add_split(): expose a chain of `buffers` buffers (token: the
  // caller's handle for it). Publishes avail.idx at t. Returns false
  // (nothing added) when there are not enough free descriptors.
  bool add(Time t, std::uint16_t buffers, std::uint64_t token);
  // virtqueue_kick_prepare_split(): whether the device wants a notification
  // for the entries added since the last call (reads avail_event or the
  // used flags as of t).
  bool kick_prepare();
  struct Used {
    std::uint64_t token;
    std::uint32_t len;
  };
  // virtqueue_get_buf_ctx_split(): the next used buffer visible at t (frees
  // its descriptors); while callbacks are enabled, moves used_event along.
  std::optional<Used> get_buf(Time t);
  bool more_used() const { return last_used_ != used_idx_; }
  // virtqueue_disable_cb_split(): ask for no interrupts (with EVENT_IDX the
  // device-visible used_event is left as it is, so one more may come).
  void disable_cb();
  // virtqueue_enable_cb(): re-arm interrupts at last_used; returns false if
  // used buffers are already pending (the caller must process them).
  bool enable_cb();
  std::uint64_t in_flight() const { return in_flight_; }
  // in_flight() time-weighted (only the driver changes it). Capacity: the chains
  // of two buffers (a vsock header and its payload) the queue holds, i.e.
  // size() / descriptors_for(2).
  const Occupancy& occupancy() const { return occupancy_; }
  // Show that level on the timeline as counter `name` in `unit` (sim/trace.hpp; nullptr: not traced).
  void trace_as(Trace* trace, std::string name, std::string unit)
  {
    occupancy_.trace_as(trace, std::move(name), std::move(unit));
  }

  // ---- device (vhost) -----------------------------------------------------
  // vhost_get_vq_desc(): the next available chain visible at t.
  struct Avail {
    std::uint16_t head;
    std::uint64_t token;
    std::uint16_t buffers;
  };
  std::optional<Avail> pop();
  bool avail_pending() const { return last_avail_ != avail_idx_; }
  std::uint16_t avail_visible() const { return static_cast<std::uint16_t>(avail_idx_ - last_avail_); }
  // vhost_add_used(): return a chain with `len` bytes written; publishes
  // used.idx at t.
  void push_used(std::uint16_t head, std::uint32_t len);
  // vhost_notify(): whether the driver wants an interrupt for the used
  // entries published since the last signal.
  bool signal_needed();
  // vhost_disable_notify() / vhost_enable_notify(): the latter re-arms
  // notifications (avail_event = last seen avail.idx with EVENT_IDX) and
  // returns true if more entries are already available.
  void disable_notify();
  bool enable_notify();
  bool notify_enabled() const { return !device_no_notify_; }

  // ---- inspection ------------------------------------------------------
  std::uint16_t avail_idx() const { return avail_idx_; }
  std::uint16_t used_idx() const { return used_idx_; }
  std::uint16_t used_event() const { return used_event_; }
  std::uint16_t avail_event() const { return avail_event_; }
  std::uint16_t last_used() const { return last_used_; }
  std::uint16_t last_avail() const { return last_avail_; }
  std::uint64_t chains_added() const { return added_total_; }
  std::uint64_t chains_used() const { return used_total_; }
  void check_invariants() const;

private:
  struct Desc {
    std::uint64_t token = 0;
    std::uint16_t buffers = 0; // buffers in the chain (0: free)
    std::uint16_t ndesc = 0;   // descriptors it holds
  };
  [[noreturn]] void fail(const char* what) const;

  std::uint16_t size_;
  bool event_idx_;
  bool indirect_;
  std::vector<Desc> desc_;                                         // indexed by head
  std::vector<std::uint16_t> free_heads_;                          // descriptor heads not in use (a stack)
  std::vector<std::uint16_t> avail_ring_;                          // ring[i % size] = head
  std::vector<std::pair<std::uint16_t, std::uint32_t>> used_ring_; // {id, len}

  // Shared words.
  std::uint16_t avail_idx_;
  std::uint16_t used_idx_;
  std::uint16_t used_event_;        // driver -> device (EVENT_IDX)
  std::uint16_t avail_event_;       // device -> driver (EVENT_IDX)
  bool avail_no_interrupt_ = false; // VRING_AVAIL_F_NO_INTERRUPT (without EVENT_IDX)
  bool used_no_notify_ = false;     // VRING_USED_F_NO_NOTIFY (without EVENT_IDX)

  // Driver's private state.
  std::uint16_t num_free_;
  std::uint16_t avail_shadow_;
  std::uint16_t num_added_ = 0;
  std::uint16_t last_used_;
  bool driver_cb_disabled_ = false;
  std::uint64_t in_flight_ = 0;
  Occupancy occupancy_;
  std::uint64_t added_total_ = 0;
  std::uint64_t used_total_ = 0;

  // Device's private state.
  std::uint16_t last_avail_;
  std::uint16_t avail_cache_; // vq->avail_idx: the avail.idx value vhost last read
  std::uint16_t device_used_; // the device's used index (vq->last_used_idx)
  std::uint16_t signalled_used_ = 0;
  bool signalled_used_valid_ = false;
  bool device_no_notify_ = false;
  std::vector<bool> device_holds_; // heads popped and not yet returned
};

} // namespace vsim::models
