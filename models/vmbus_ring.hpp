// One direction of a VMBus channel: the shared ring (struct hv_ring_buffer:
// header page with write_index, read_index, interrupt_mask, pending_send_sz,
// then the data pages) together with the driver's private bookkeeping
// (struct hv_ring_buffer_info, notably priv_read_index).
//
// The model follows drivers/hv/ring_buffer.c and include/linux/hyperv.h of
// Linux v5.2/v5.3 (2019). No bytes are stored: a packet is its payload
// length and its length on the ring.
//
// Time. The writer and the reader are threads of the engine's one order of
// events (sim/thread.hpp): what one side publishes, the other sees from then
// on. Mutating operations take the time they happen at, for the ring's
// occupancy statistics; each side's times must not go backwards (enforced:
// std::logic_error otherwise).
//
// Internally the indices are 64-bit free-running byte counters (write_total,
// priv_read_total, read_total); the 32-bit ring offsets are kept alongside with
// the kernel's wrap arithmetic and checked against counter % data_size.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>

#include "sim/occupancy.hpp"
#include "sim/time.hpp"

namespace vsim::models {

// Hyper-V page size: the ring header is one such page and ring sizes are
// multiples of it (HV_HYP_PAGE_SIZE).
inline constexpr std::uint32_t kPageSize = 4096;

// ALIGN(n, 8) as used by HVS_PKT_LEN and VMBus packet lengths.
constexpr std::uint32_t align8(std::uint32_t n)
{
  return (n + 7u) & ~7u;
}

// VMBus packet descriptor (struct vmpacket_descriptor), hv_sock pipe header
// (struct vmpipe_proto_header) and trailer (the u64 "previous indices" that
// hv_ringbuffer_write appends after every packet, VMBUS_PKT_TRAILER).
inline constexpr std::uint32_t kVmbusDescriptorBytes = 16;
inline constexpr std::uint32_t kPipeHeaderBytes = 8;
inline constexpr std::uint32_t kVmbusTrailerBytes = 8;

// Ring bytes of one hv_sock packet: HVS_PKT_LEN(payload) in
// net/vmw_vsock/hyperv_transport.c = HVS_HEADER_LEN (16 + 8) + ALIGN(payload, 8)
// + VMBUS_PKT_TRAILER_SIZE (8). A FIN (0-byte payload) takes 32 bytes.
constexpr std::uint32_t hvs_packet_len(std::uint32_t payload)
{
  return kVmbusDescriptorBytes + kPipeHeaderBytes + align8(payload) + kVmbusTrailerBytes;
}

// Largest payload hvs_packet_len accepts without overflowing 32 bits.
inline constexpr std::uint32_t kMaxModelPayload =
    std::numeric_limits<std::uint32_t>::max() - 7u - kVmbusDescriptorBytes - kPipeHeaderBytes - kVmbusTrailerBytes;

class VmbusRing {
public:
  // ring_size: total bytes including the 4 KiB header page, as passed to
  // vmbus_open() (hv_ringbuffer_init: ring_datasize = ring_size - header page).
  // Must be a multiple of kPageSize and at least two pages, else
  // std::invalid_argument.
  explicit VmbusRing(std::uint32_t ring_size);

  std::uint32_t ring_size() const { return ring_size_; }
  std::uint32_t data_size() const { return data_size_; }

  // ---------------------------------------------------------------- writer side

  // hv_get_bytes_to_write(): free bytes seen by the writer, from its own
  // write_index and the published read_index. An empty ring gives data_size().
  std::uint32_t bytes_to_write() const;

  struct WriteResult {
    bool written;             // false: refused (-EAGAIN), nothing changed but the refusal count
    bool signal;              // the writer must signal the reader (vmbus_setevent)
    std::uint32_t ring_bytes; // hvs_packet_len(payload), also when refused
  };

  // hv_ringbuffer_write() followed by hv_signal_on_write():
  //  - refused when bytes_to_write() <= packet bytes (the ring is never left
  //    exactly full, so full and empty stay distinguishable);
  //  - else the packet is appended and write_index published at t;
  //  - signal: never if interrupt_mask is set; otherwise only if the ring was
  //    empty before this packet (old write_index == read_index).
  // Throws std::invalid_argument if payload > kMaxModelPayload, std::logic_error
  // if t is earlier than the writer's previous operation.
  WriteResult write(Time t, std::uint32_t payload);

  // The two halves of write(): publish() is hv_ringbuffer_write up to
  // publishing write_index (or the refusal), signal_on_write() is
  // hv_signal_on_write, reading interrupt_mask and read_index.
  struct Published {
    bool written;
    std::uint32_t old_write_index; // write_index before this packet
    std::uint32_t ring_bytes;
  };
  Published publish(Time t, std::uint32_t payload);
  bool signal_on_write(std::uint32_t old_write_index);

  // pending_send_sz in the ring header, written by the writer
  // (set_channel_pending_send_size()). 0 = cleared.
  void set_pending_send_sz(std::uint32_t bytes);
  std::uint32_t pending_send_sz() const { return pending_send_sz_; }

  // ---------------------------------------------------------------- reader side
  // The reader walks packets with the private priv_read_index (consume) and
  // publishes read_index only in iter_close, as hv_pkt_iter_* do.

  // Packets written and not yet consumed by the iterator.
  std::uint32_t unconsumed_packets() const { return static_cast<std::uint32_t>(queue_.size()); }
  // Payload of the next unconsumed packet (std::logic_error if there is none).
  std::uint32_t peek_payload() const;
  // Payload of the i-th unconsumed packet (0: the next; std::logic_error if
  // there are not that many).
  std::uint32_t peek_payload(std::uint32_t i) const;

  // __hv_pkt_iter_next(): advance priv_read_index past the next packet
  // (std::logic_error if there is none); returns its payload.
  // read_index is not published: the writer's free space does not change.
  std::uint32_t consume(Time t);

  // hv_pkt_iter_close(): publish read_index = priv_read_index at t, then decide
  // whether to signal the writer. Following v5.x exactly:
  //   pending_sz = pending_send_sz; no signal if 0;
  //   curr_write_sz = hv_get_bytes_to_write() after publication;
  //   bytes_read = bytes between the previously published read_index and the new one;
  //   signal iff curr_write_sz - bytes_read <= pending_sz && curr_write_sz > pending_sz.
  // interrupt_mask plays no part (v5.x; 4.x kernels also skipped when it was set).
  bool iter_close(Time t);

  struct NextResult {
    std::uint32_t payload; // payload of the consumed packet
    bool closed;           // no more packets: iter_close was called
    bool signal;           // iter_close's answer (false when not closed)
  };
  // hv_pkt_iter_next() (include/linux/hyperv.h): __hv_pkt_iter_next, and when
  // no further packet is there, hv_pkt_iter_close.
  NextResult iter_next(Time t);

  // hv_get_bytes_to_read(): write_index minus the published read_index.
  std::uint32_t bytes_to_read() const;
  // hv_pkt_iter_avail(): write_index minus priv_read_index.
  std::uint32_t iter_avail() const;

  // interrupt_mask in the ring header, written by the reader (the host sets it
  // on the guest-to-host ring while it drains).
  void set_interrupt_mask(bool masked);
  bool interrupt_mask() const { return interrupt_mask_; }

  // ---------------------------------------------------------------- bookkeeping
  std::uint64_t bytes_written() const { return write_total_; }       // ring bytes ever written
  std::uint64_t bytes_consumed() const { return priv_read_total_; }  // ring bytes passed by the iterator
  std::uint64_t bytes_published_read() const { return read_total_; } // released by published read_index
  std::uint64_t payload_written() const { return payload_written_; }
  std::uint64_t payload_consumed() const { return payload_consumed_; }
  std::uint64_t packets_written() const { return packets_written_; }
  std::uint64_t packets_consumed() const { return packets_consumed_; }
  std::uint64_t write_refusals() const { return write_refusals_; }
  std::uint64_t write_signals() const { return write_signals_; } // cf. channel->intr_out_empty
  std::uint64_t close_signals() const { return close_signals_; } // cf. channel->intr_in_full
  // Bytes between published read_index and write_index (latest values).
  std::uint64_t used_bytes() const { return write_total_ - read_total_; }

  // Ring offsets in [0, data_size).
  std::uint32_t write_index() const { return write_index_; }
  std::uint32_t priv_read_index() const { return priv_read_index_; }
  std::uint32_t read_index() const;

  // Bytes in use as the writer sees them (write_index - published read_index),
  // time-weighted: the writer's publications and the reader's iter_close
  // are its two update streams. Capacity: data_size().
  const Occupancy& occupancy() const { return occupancy_; }
  // Show that level on the timeline as counter `name` in `unit` (sim/trace.hpp; nullptr: not traced).
  void trace_as(Trace* trace, std::string name, std::string unit)
  {
    occupancy_.trace_as(trace, std::move(name), std::move(unit));
  }

  // Full check (O(queued packets)): throws std::logic_error naming the violated
  // invariant. The O(1) part also runs at the end of write/consume/iter_close.
  void check_invariants() const;

private:
  void check_fast(const char* where) const;
  void advance_writer_time(Time t, const char* where);
  void advance_reader_time(Time t, const char* where);

  struct Packet {
    std::uint32_t payload;
    std::uint32_t ring_bytes;
  };

  std::uint32_t ring_size_;
  std::uint32_t data_size_;

  // Free-running counters. write_total and read_total are shared;
  // priv_read_total is the reader's own.
  std::uint64_t write_total_ = 0;
  std::uint64_t read_total_ = 0;
  std::uint64_t priv_read_total_ = 0;
  bool interrupt_mask_ = false;
  std::uint32_t pending_send_sz_ = 0;

  // Ring offsets with the kernel's wrap arithmetic (cross-checked).
  std::uint32_t write_index_ = 0;
  std::uint32_t priv_read_index_ = 0;
  std::uint32_t published_read_index_ = 0;

  std::deque<Packet> queue_; // written, not yet consumed (bounded by the ring)
  std::uint64_t queued_bytes_ = 0;
  std::uint64_t queued_payload_ = 0;

  std::uint64_t payload_written_ = 0;
  std::uint64_t payload_consumed_ = 0;
  std::uint64_t packets_written_ = 0;
  std::uint64_t packets_consumed_ = 0;
  std::uint64_t write_refusals_ = 0;
  std::uint64_t write_signals_ = 0;
  std::uint64_t close_signals_ = 0;

  Occupancy occupancy_;

  Time writer_time_ = -std::numeric_limits<Time>::infinity();
  Time reader_time_ = -std::numeric_limits<Time>::infinity();
};

} // namespace vsim::models
