#include "models/virtqueue.hpp"

#include <stdexcept>
#include <string>

namespace vsim::models {

Virtqueue::Virtqueue(std::uint16_t size, bool event_idx, bool indirect, std::uint16_t first_index)
    : size_(size), event_idx_(event_idx), indirect_(indirect), desc_(size), avail_ring_(size), used_ring_(size),
      avail_idx_(first_index), used_idx_(first_index), used_event_(first_index), avail_event_(first_index),
      avail_no_interrupt_(false), used_no_notify_(false), num_free_(size), avail_shadow_(first_index),
      last_used_(first_index), last_avail_(first_index), avail_cache_(first_index), device_used_(first_index),
      device_holds_(size, false)
{
  // Virtio 1.1 section 2.6: Queue Size is a power of 2, at most 32768.
  if (size < 2 || size > 32768 || (size & (size - 1)) != 0)
    throw std::invalid_argument("virtqueue size must be a power of 2 in [2, 32768], got " + std::to_string(size));
  free_heads_.reserve(size);
  for (int i = size - 1; i >= 0; --i)
    free_heads_.push_back(static_cast<std::uint16_t>(i));
  occupancy_ = Occupancy(size / descriptors_for(2));
}

void Virtqueue::fail(const char* what) const
{
  throw std::logic_error(std::string("invariant violated: virtqueue: ") + what);
}

bool Virtqueue::add(Time t, std::uint16_t buffers, std::uint64_t token)
{
  if (buffers == 0)
    fail("a chain needs at least one buffer");
  const std::uint16_t need = descriptors_for(buffers);
  if (need > size_)
    fail("a chain longer than the queue");
  if (num_free_ < need)
    return false;
  // virtqueue_add_split() kicks by itself when num_added reaches 65535, so
  // that kick_prepare's 16-bit window (avail.idx - num_added) never wraps;
  // the model's drivers call kick_prepare after every batch instead.
  if (num_added_ == 0xffff)
    fail("65535 chains added without virtqueue_kick_prepare: its window would wrap");
  // The chain's head names it; the other descriptors it takes are only
  // counted (their contents are not modelled).
  std::uint16_t head = free_heads_.back();
  free_heads_.pop_back();
  num_free_ = static_cast<std::uint16_t>(num_free_ - need);
  desc_[head] = Desc{token, buffers, need};
  avail_ring_[avail_shadow_ % size_] = head;
  ++avail_shadow_;
  ++num_added_;
  ++in_flight_;
  occupancy_.change(t, 1);
  ++added_total_;
  // virtio_wmb() then avail->idx = avail_idx_shadow: published at once.
  avail_idx_ = avail_shadow_;
  check_invariants();
  return true;
}

bool Virtqueue::kick_prepare()
{
  const std::uint16_t new_idx = avail_shadow_;
  const std::uint16_t old_idx = static_cast<std::uint16_t>(new_idx - num_added_);
  num_added_ = 0;
  if (event_idx_)
    return vring_need_event(avail_event_, new_idx, old_idx);
  return !used_no_notify_;
}

std::optional<Virtqueue::Used> Virtqueue::get_buf(Time t)
{
  if (!more_used())
    return std::nullopt;
  auto [id, len] = used_ring_[last_used_ % size_];
  if (id >= size_ || desc_[id].buffers == 0)
    fail("a used entry names a descriptor that is not in flight");
  Used u{desc_[id].token, len};
  num_free_ = static_cast<std::uint16_t>(num_free_ + desc_[id].ndesc);
  desc_[id] = Desc{};
  free_heads_.push_back(id);
  ++last_used_;
  --in_flight_;
  occupancy_.change(t, -1);
  ++used_total_;
  // "If we expect an interrupt for the next entry, tell host by writing
  // event index" (only while callbacks are enabled).
  if (event_idx_ && !driver_cb_disabled_)
    used_event_ = last_used_;
  check_invariants();
  return u;
}

void Virtqueue::disable_cb()
{
  if (driver_cb_disabled_)
    return;
  driver_cb_disabled_ = true;
  if (!event_idx_)
    avail_no_interrupt_ = true;
}

bool Virtqueue::enable_cb()
{
  if (driver_cb_disabled_) {
    driver_cb_disabled_ = false;
    if (!event_idx_)
      avail_no_interrupt_ = false;
  }
  // virtqueue_enable_cb_prepare_split writes used_event = last_used_idx even
  // when callbacks were already on; virtqueue_poll then looks for more.
  if (event_idx_)
    used_event_ = last_used_;
  return !more_used();
}

std::optional<Virtqueue::Avail> Virtqueue::pop()
{
  // vhost reads avail->idx only when it has used up the value it cached.
  if (last_avail_ == avail_cache_) {
    avail_cache_ = avail_idx_;
    if (last_avail_ == avail_cache_)
      return std::nullopt;
  }
  if (static_cast<std::uint16_t>(avail_cache_ - last_avail_) > size_)
    fail("avail.idx moved more than the queue size past the device"); // vhost: "Guest moved used index"
  std::uint16_t head = avail_ring_[last_avail_ % size_];
  if (head >= size_ || desc_[head].buffers == 0 || device_holds_[head])
    fail("an available entry names a descriptor the driver did not expose");
  device_holds_[head] = true;
  ++last_avail_;
  return Avail{head, desc_[head].token, desc_[head].buffers};
}

void Virtqueue::push_used(std::uint16_t head, std::uint32_t len)
{
  if (head >= size_ || !device_holds_[head])
    fail("the device returned a descriptor it does not hold");
  device_holds_[head] = false;
  used_ring_[device_used_ % size_] = {head, len};
  ++device_used_;
  used_idx_ = device_used_;
  check_invariants();
}

bool Virtqueue::signal_needed()
{
  if (!event_idx_)
    return !avail_no_interrupt_;
  const std::uint16_t old_idx = signalled_used_;
  const bool valid = signalled_used_valid_;
  signalled_used_ = device_used_;
  signalled_used_valid_ = true;
  if (!valid)
    return true;
  return vring_need_event(used_event_, device_used_, old_idx);
}

void Virtqueue::disable_notify()
{
  if (device_no_notify_)
    return;
  device_no_notify_ = true;
  if (!event_idx_)
    used_no_notify_ = true;
}

bool Virtqueue::enable_notify()
{
  if (!device_no_notify_)
    return false;
  device_no_notify_ = false;
  if (!event_idx_)
    used_no_notify_ = false;
  else
    avail_event_ = avail_cache_; // vhost_update_avail_event(vq, vq->avail_idx)
  // smp_mb(), then read avail->idx again: anything beyond the cached value?
  return avail_idx_ != avail_cache_;
}

void Virtqueue::check_invariants() const
{
  if (num_free_ > size_)
    fail("more free descriptors than the queue has");
  if (in_flight_ > size_)
    fail("more chains in flight than the queue size");
  if (static_cast<std::uint16_t>(avail_shadow_ - last_used_) != in_flight_)
    fail("avail.idx - last_used != chains in flight");
  if (static_cast<std::uint16_t>(device_used_ - last_used_) > size_)
    fail("used.idx ran more than the queue size ahead of the driver");
}

} // namespace vsim::models
