// VMBus ring model: see vmbus_ring.hpp. Each piece names the Linux v5.2/v5.3
// function it models (drivers/hv/ring_buffer.c, include/linux/hyperv.h).
#include "models/vmbus_ring.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vsim::models {

namespace {

[[noreturn]] void violated(const char* where, const std::string& what)
{
  throw std::logic_error(std::string("VmbusRing invariant violated in ") + where + ": " + what);
}

// Kernel-style offset advance: idx += len; if (idx >= dsize) idx -= dsize
// (hv_copyto_ringbuffer for the write index, __hv_pkt_iter_next for the
// private read index). len < dsize always holds for an accepted packet.
std::uint32_t wrap_add(std::uint32_t idx, std::uint32_t len, std::uint32_t dsize)
{
  std::uint64_t next = std::uint64_t{idx} + len;
  if (next >= dsize)
    next -= dsize;
  return static_cast<std::uint32_t>(next);
}

} // namespace

// hv_ringbuffer_init(): ring_datasize = ring_size - sizeof(struct hv_ring_buffer)
// (one page); read_index = write_index = 0; priv_read_index = 0.
VmbusRing::VmbusRing(std::uint32_t ring_size) : ring_size_(ring_size), data_size_(0)
{
  if (ring_size % kPageSize != 0)
    throw std::invalid_argument("VmbusRing: ring size " + std::to_string(ring_size) +
                                " is not a multiple of the 4096-byte page");
  if (ring_size < 2 * kPageSize)
    throw std::invalid_argument("VmbusRing: ring size " + std::to_string(ring_size) +
                                " is below two pages (header page + at least one data page)");
  data_size_ = ring_size - kPageSize;
  occupancy_ = Occupancy(data_size_);
}

// ------------------------------------------------------------------ writer side

// hv_get_bytes_to_write(): dsize - (write - read) with the writer's own
// write_index and read_index as published at or before t.
std::uint32_t VmbusRing::bytes_to_write() const
{
  const std::uint64_t used = write_total_ - read_total_;
  return data_size_ - static_cast<std::uint32_t>(used);
}

// hv_ringbuffer_write() + hv_signal_on_write().
VmbusRing::Published VmbusRing::publish(Time t, std::uint32_t payload)
{
  if (payload > kMaxModelPayload)
    throw std::invalid_argument("VmbusRing::write: payload " + std::to_string(payload) + " too large");
  advance_writer_time(t, "write");
  const std::uint32_t len = hvs_packet_len(payload);

  // hv_ringbuffer_write: "If there is only room for the packet, assume it is
  // full": refuse when the free space is <= the packet length.
  if (bytes_to_write() <= len) {
    ++write_refusals_;
    return {false, write_index_, len};
  }

  const std::uint32_t old_write = write_index_;
  queue_.push_back({payload, len});
  queued_bytes_ += len;
  queued_payload_ += payload;
  payload_written_ += payload;
  ++packets_written_;
  write_index_ = wrap_add(write_index_, len, data_size_);
  // virt_mb(); hv_set_next_write_location(): publish write_index at t.
  write_total_ = write_total_ + len;
  occupancy_.change(t, len);
  check_fast("write");
  return {true, old_write, len};
}

// hv_signal_on_write(): not if the reader masked interrupts; else only on
// the empty -> non-empty transition (old write index == read_index), both
// read after write_index was published.
bool VmbusRing::signal_on_write(std::uint32_t old_write_index)
{
  bool signal = !interrupt_mask_ && old_write_index == read_index();
  if (signal)
    ++write_signals_;
  return signal;
}

VmbusRing::WriteResult VmbusRing::write(Time t, std::uint32_t payload)
{
  Published p = publish(t, payload);
  if (!p.written)
    return {false, false, p.ring_bytes};
  return {true, signal_on_write(p.old_write_index), p.ring_bytes};
}

// set_channel_pending_send_size() (include/linux/hyperv.h).
void VmbusRing::set_pending_send_sz(std::uint32_t bytes)
{
  pending_send_sz_ = bytes;
}

// ------------------------------------------------------------------ reader side

std::uint32_t VmbusRing::peek_payload(std::uint32_t i) const
{
  if (i >= queue_.size())
    throw std::logic_error("VmbusRing::peek_payload: fewer unconsumed packets than asked for");
  return queue_[i].payload;
}

std::uint32_t VmbusRing::peek_payload() const
{
  if (queue_.empty())
    throw std::logic_error("VmbusRing::peek_payload: no unconsumed packet");
  return queue_.front().payload;
}

// __hv_pkt_iter_next(): priv_read_index += packet length + trailer, wrapped.
// (hv_pkt_iter_first() must have found the packet.)
std::uint32_t VmbusRing::consume(Time t)
{
  if (queue_.empty())
    throw std::logic_error("VmbusRing::consume: no packet in the ring");
  advance_reader_time(t, "consume");
  const Packet p = queue_.front();
  queue_.pop_front();
  queued_bytes_ -= p.ring_bytes;
  queued_payload_ -= p.payload;
  priv_read_total_ += p.ring_bytes;
  priv_read_index_ = wrap_add(priv_read_index_, p.ring_bytes, data_size_);
  payload_consumed_ += p.payload;
  ++packets_consumed_;
  check_fast("consume");
  return p.payload;
}

// hv_pkt_iter_close() as of v5.x.
bool VmbusRing::iter_close(Time t)
{
  advance_reader_time(t, "iter_close");
  // start_read_index = read_index; read_index = priv_read_index.
  const std::uint64_t start_read_total = read_total_;
  read_total_ = priv_read_total_;
  published_read_index_ = priv_read_index_;
  occupancy_.change(t, -static_cast<double>(priv_read_total_ - start_read_total));

  // Linux sets feat_pending_send_sz on every ring it creates (hv_ringbuffer_init),
  // so the pending_send_sz protocol is always on in this model.
  // "If the pending_send_sz is zero ... no need to signal."
  const std::uint32_t pending_sz = pending_send_sz_;
  bool signal = false;
  if (pending_sz != 0) {
    // hv_get_bytes_to_write() after the publication, write_index as of t.
    const std::uint64_t written_at_t = write_total_;
    if (written_at_t < priv_read_total_)
      violated("iter_close", "write_index as of t is behind priv_read_index (reader consumed unpublished data)");
    const std::uint32_t curr_write_sz = data_size_ - static_cast<std::uint32_t>(written_at_t - priv_read_total_);
    // hv_pkt_iter_bytes_read(): bytes between the old and new read_index.
    const std::uint32_t bytes_read = static_cast<std::uint32_t>(priv_read_total_ - start_read_total);
    // Signal only on the "not enough space" -> "enough space" transition
    // (exactly full counts as "not enough").
    if (curr_write_sz - bytes_read > pending_sz)
      signal = false; // the writer was not blocked before this iteration
    else if (curr_write_sz <= pending_sz)
      signal = false; // still not enough space: no false hope
    else
      signal = true;
  }
  if (signal)
    ++close_signals_;
  check_fast("iter_close");
  return signal;
}

// hv_pkt_iter_next() (include/linux/hyperv.h): __hv_pkt_iter_next, then
// hv_pkt_iter_close when hv_pkt_iter_first finds nothing more.
VmbusRing::NextResult VmbusRing::iter_next(Time t)
{
  NextResult r{consume(t), false, false};
  if (unconsumed_packets() == 0) {
    r.closed = true;
    r.signal = iter_close(t);
  }
  return r;
}

// hv_get_bytes_to_read(): write_index (as of t) - read_index.
std::uint32_t VmbusRing::bytes_to_read() const
{
  const std::uint64_t w = write_total_;
  const std::uint64_t r = read_total_;
  return w > r ? static_cast<std::uint32_t>(w - r) : 0;
}

// hv_pkt_iter_avail(): write_index (as of t) - priv_read_index.
std::uint32_t VmbusRing::iter_avail() const
{
  const std::uint64_t w = write_total_;
  return w > priv_read_total_ ? static_cast<std::uint32_t>(w - priv_read_total_) : 0;
}

void VmbusRing::set_interrupt_mask(bool masked)
{
  interrupt_mask_ = masked;
}

// ------------------------------------------------------------------ bookkeeping

std::uint32_t VmbusRing::read_index() const
{
  return static_cast<std::uint32_t>(read_total_ % data_size_);
}

void VmbusRing::advance_writer_time(Time t, const char* where)
{
  if (t < writer_time_)
    throw std::logic_error(std::string("VmbusRing::") + where + ": writer time went backwards (" + std::to_string(t) +
                           " < " + std::to_string(writer_time_) + ")");
  writer_time_ = t;
}

void VmbusRing::advance_reader_time(Time t, const char* where)
{
  if (t < reader_time_)
    throw std::logic_error(std::string("VmbusRing::") + where + ": reader time went backwards (" + std::to_string(t) +
                           " < " + std::to_string(reader_time_) + ")");
  reader_time_ = t;
}

// O(1) checks, run after every mutation.
void VmbusRing::check_fast(const char* where) const
{
  const std::uint64_t w = write_total_;
  const std::uint64_t r = read_total_;
  const std::uint64_t p = priv_read_total_;
  if (!(r <= p))
    violated(where, "published read_index ahead of priv_read_index");
  if (!(p <= w))
    violated(where, "priv_read_index ahead of write_index");
  const std::uint64_t used = w - r;
  if (used == data_size_)
    violated(where, "ring exactly full (used bytes == data_size)");
  if (used > std::uint64_t{data_size_} - 8)
    violated(where, "used bytes " + std::to_string(used) + " > data_size - 8 = " + std::to_string(data_size_ - 8));
  if (payload_consumed_ > payload_written_)
    violated(where, "payload consumed > payload written");
  if (write_index_ != w % data_size_)
    violated(where, "write_index != write_total mod data_size");
  if (priv_read_index_ != p % data_size_)
    violated(where, "priv_read_index != priv_read_total mod data_size");
  if (published_read_index_ != r % data_size_)
    violated(where, "read_index != read_total mod data_size");
  if (w % 8 != 0 || p % 8 != 0 || r % 8 != 0)
    violated(where, "index not 8-byte aligned");
  if (queued_bytes_ != w - p)
    violated(where, "queued packet bytes != write_index - priv_read_index");
  if (queued_payload_ != payload_written_ - payload_consumed_)
    violated(where, "queued payload != payload written - payload consumed");
  if (packets_consumed_ + queue_.size() != packets_written_)
    violated(where, "packets consumed + queued != packets written");
}

void VmbusRing::check_invariants() const
{
  check_fast("check_invariants");
  std::uint64_t bytes = 0, payload = 0;
  for (const Packet& pk : queue_) {
    if (pk.ring_bytes != hvs_packet_len(pk.payload))
      violated("check_invariants", "queued packet length != hvs_packet_len(payload)");
    bytes += pk.ring_bytes;
    payload += pk.payload;
  }
  if (bytes != queued_bytes_)
    violated("check_invariants", "sum of queued packet lengths != queued bytes");
  if (payload != queued_payload_)
    violated("check_invariants", "sum of queued payloads != queued payload");
}

} // namespace vsim::models
