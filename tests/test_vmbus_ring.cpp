// Tests of the VMBus ring model (models/vmbus_ring.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "models/vmbus_ring.hpp"

using vsim::Time;
using vsim::models::align8;
using vsim::models::hvs_packet_len;
using vsim::models::VmbusRing;

namespace {

// Payload whose packet takes exactly `ring_bytes` on the ring (ring_bytes >= 32, multiple of 8).
std::uint32_t payload_for_len(std::uint32_t ring_bytes)
{
  return ring_bytes - 32;
}

// Deterministic pseudo-random numbers (64-bit LCG, high bits).
struct Lcg {
  std::uint64_t s;
  std::uint32_t next(std::uint32_t bound)
  {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>((s >> 33) % bound);
  }
};

// Drain everything visible at t with the iterator, then publish.
std::uint64_t drain(VmbusRing& r, Time t)
{
  std::uint64_t payload = 0;
  while (r.unconsumed_packets() > 0)
    payload += r.consume(t);
  r.iter_close(t);
  return payload;
}

} // namespace

TEST_CASE("hvs_packet_len: descriptor + pipe header + payload padded to 8 + trailer", "[vmbus]")
{
  CHECK(hvs_packet_len(0) == 32); // FIN
  CHECK(hvs_packet_len(1) == 40);
  CHECK(hvs_packet_len(7) == 40);
  CHECK(hvs_packet_len(8) == 40);
  CHECK(hvs_packet_len(9) == 48);
  CHECK(hvs_packet_len(4088) == 4120);
  CHECK(hvs_packet_len(16 * 1024) == 16 * 1024 + 32);
  CHECK(align8(0) == 0);
  CHECK(align8(1) == 8);
  CHECK(align8(8) == 8);
  CHECK(align8(4095) == 4096);
  static_assert(hvs_packet_len(0) == 32, "usable in constant expressions");
}

TEST_CASE("VmbusRing: size validation and data size", "[vmbus]")
{
  CHECK_THROWS_AS(VmbusRing(0), std::invalid_argument);
  CHECK_THROWS_AS(VmbusRing(4096), std::invalid_argument); // header page only
  CHECK_THROWS_AS(VmbusRing(4097), std::invalid_argument);
  CHECK_THROWS_AS(VmbusRing(6000), std::invalid_argument);
  CHECK_THROWS_AS(VmbusRing(24576 + 8), std::invalid_argument);
  VmbusRing two(8192);
  CHECK(two.ring_size() == 8192);
  CHECK(two.data_size() == 4096);
  VmbusRing r(24576);
  CHECK(r.data_size() == 20480);
  VmbusRing big(256 * 1024);
  CHECK(big.data_size() == 256 * 1024 - 4096);
}

TEST_CASE("VmbusRing: empty ring", "[vmbus]")
{
  VmbusRing r(24576);
  CHECK(r.bytes_to_write() == r.data_size());
  CHECK(r.bytes_to_read() == 0);
  CHECK(r.iter_avail() == 0);
  CHECK(r.write_index() == 0);
  CHECK(r.read_index() == 0);
  CHECK(r.unconsumed_packets() == 0);
  CHECK(r.unconsumed_packets() == 0);
  CHECK_THROWS_AS(r.peek_payload(), std::logic_error);
  CHECK_THROWS_AS(r.consume(0), std::logic_error);
  CHECK_FALSE(r.interrupt_mask());
  CHECK(r.pending_send_sz() == 0);
  CHECK_NOTHROW(r.check_invariants());
}

TEST_CASE("VmbusRing: a write that would fill the ring exactly is refused", "[vmbus]")
{
  SECTION("empty ring, packet of exactly data_size bytes")
  {
    VmbusRing r(8192); // 4096 data bytes
    auto refused = r.write(0, payload_for_len(4096));
    CHECK_FALSE(refused.written);
    CHECK_FALSE(refused.signal);
    CHECK(refused.ring_bytes == 4096);
    CHECK(r.write_refusals() == 1);
    CHECK(r.bytes_written() == 0);
    CHECK(r.packets_written() == 0);
    // 8 bytes less fits and leaves exactly 8 bytes free.
    auto ok = r.write(1, payload_for_len(4088));
    CHECK(ok.written);
    CHECK(ok.ring_bytes == 4088);
    CHECK(r.bytes_to_write() == 8);
    CHECK(r.used_bytes() == r.data_size() - 8);
    // Nothing fits any more, not even a FIN (32 bytes).
    CHECK_FALSE(r.write(2, 0).written);
    CHECK(r.write_refusals() == 2);
    r.check_invariants();
  }
  SECTION("partly used ring, packet of exactly the free space")
  {
    VmbusRing r(8192);
    REQUIRE(r.write(0, 8).written); // 40 bytes
    const std::uint32_t free_bytes = r.bytes_to_write();
    REQUIRE(free_bytes == 4056);
    CHECK_FALSE(r.write(1, payload_for_len(free_bytes)).written);
    CHECK(r.bytes_to_write() == free_bytes); // refusal changes nothing
    CHECK(r.write(2, payload_for_len(free_bytes - 8)).written);
    CHECK(r.bytes_to_write() == 8);
    CHECK(r.write_refusals() == 1);
    r.check_invariants();
  }
  SECTION("after a wrap, the same rule holds")
  {
    VmbusRing r(8192);
    REQUIRE(r.write(0, payload_for_len(3000)).written);
    drain(r, 0);
    REQUIRE(r.write_index() == 3000);
    REQUIRE(r.read_index() == 3000);
    CHECK_FALSE(r.write(1, payload_for_len(4096)).written);
    CHECK(r.write(1, payload_for_len(4088)).written); // wraps: 3000 + 4088 - 4096
    CHECK(r.write_index() == 2992);
    CHECK(r.bytes_to_write() == 8);
    r.check_invariants();
  }
}

TEST_CASE("VmbusRing: the ring is never exactly full (random workload)", "[vmbus]")
{
  VmbusRing r(3 * 4096);
  Lcg rng{42};
  Time t = 0;
  int accepted = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    t += 1;
    if (rng.next(3) != 0) {
      const std::uint32_t payload = rng.next(3000);
      const std::uint32_t before = r.bytes_to_write();
      auto res = r.write(t, payload);
      CHECK(res.written == (before > hvs_packet_len(payload)));
      if (res.written) {
        ++accepted;
        CHECK(r.bytes_to_write() == before - res.ring_bytes);
      } else {
        ++refused;
      }
      // The free space is never 0 and stays a multiple of 8.
      REQUIRE(r.bytes_to_write() >= 8);
      REQUIRE(r.bytes_to_write() % 8 == 0);
      REQUIRE(r.used_bytes() <= r.data_size() - 8);
    } else {
      const std::uint32_t n = r.unconsumed_packets() == 0 ? 0 : 1 + rng.next(r.unconsumed_packets());
      for (std::uint32_t k = 0; k < n; ++k)
        r.consume(t);
      if (rng.next(2) == 0)
        r.iter_close(t);
    }
    if (i % 97 == 0)
      r.check_invariants();
  }
  CHECK(accepted > 1000);
  CHECK(refused > 100);
  r.check_invariants();
}

TEST_CASE("VmbusRing: wrap-around keeps indices equal to the counters modulo data_size", "[vmbus]")
{
  VmbusRing r(5 * 4096); // 16384 data bytes
  const std::uint32_t ds = r.data_size();
  Lcg rng{7};
  Time t = 0;
  std::uint64_t payload_in = 0, payload_out = 0;
  std::uint64_t prev_write_index = 0;
  int wraps = 0;
  while (r.bytes_written() < 50ull * ds) {
    t += 1;
    // Writer: fill until refused, with varying sizes (including FINs and MTU-sized packets).
    for (;;) {
      const std::uint32_t choice = rng.next(4);
      const std::uint32_t payload = choice == 0 ? 0 : choice == 1 ? 16 * 1024 - rng.next(8) : rng.next(4500);
      auto res = r.write(t, payload);
      if (!res.written)
        break;
      payload_in += payload;
      if (r.write_index() < prev_write_index)
        ++wraps;
      prev_write_index = r.write_index();
      REQUIRE(r.write_index() == r.bytes_written() % ds);
      REQUIRE(r.write_index() < ds);
    }
    t += 1;
    // Reader: drain part or all, publish.
    const std::uint32_t n = r.unconsumed_packets();
    const std::uint32_t take = rng.next(2) == 0 ? n : n / 2;
    for (std::uint32_t k = 0; k < take; ++k)
      payload_out += r.consume(t);
    REQUIRE(r.priv_read_index() == r.bytes_consumed() % ds);
    r.iter_close(t);
    REQUIRE(r.read_index() == r.bytes_published_read() % ds);
    REQUIRE(r.read_index() == r.priv_read_index());
    REQUIRE(r.read_index() < ds);
    r.check_invariants();
  }
  t += 1;
  payload_out += drain(r, t);
  CHECK(wraps >= 49);
  CHECK(r.write_index() == r.read_index());
  CHECK(r.bytes_to_write() == ds);
  CHECK(payload_in == r.payload_written());
  CHECK(payload_out == r.payload_consumed());
  CHECK(payload_in == payload_out);
}

TEST_CASE("VmbusRing: writer signals only on empty -> non-empty, and never when masked", "[vmbus]")
{
  VmbusRing r(24576);
  // First packet into an empty ring signals; the second does not.
  CHECK(r.write(1, 100).signal);
  CHECK_FALSE(r.write(2, 100).signal);
  CHECK(r.write_signals() == 1);

  // Consuming without publishing read_index: the writer still sees a non-empty ring.
  r.consume(3);
  r.consume(3);
  CHECK_FALSE(r.write(4, 100).signal);

  // Drain and publish: the next write signals again.
  drain(r, 5);
  CHECK(r.bytes_to_write() == r.data_size());
  CHECK(r.write(6, 100).signal);

  // The reader masks interrupts and drains: a write into the empty ring does not signal.
  r.set_interrupt_mask(true);
  drain(r, 8);
  CHECK(r.interrupt_mask());
  CHECK_FALSE(r.write(9, 100).signal);
  // Unmasked but the ring is not empty: no signal.
  r.set_interrupt_mask(false);
  CHECK_FALSE(r.write(11, 100).signal);
  // Drained again: signal.
  drain(r, 12);
  CHECK(r.write(13, 100).signal);
  CHECK(r.write_signals() == 3);
  // A refused write never signals.
  drain(r, 14);
  auto big = r.write(15, payload_for_len(r.data_size()));
  CHECK_FALSE(big.written);
  CHECK_FALSE(big.signal);
}

TEST_CASE("VmbusRing: read_index is published only by iter_close", "[vmbus]")
{
  VmbusRing r(24576);
  r.write(1, 1000);
  r.write(1, 1000);
  const std::uint32_t free_before = r.bytes_to_write();
  r.consume(2);
  r.consume(2);
  CHECK(r.bytes_to_write() == free_before); // consume alone frees nothing for the writer
  CHECK(r.read_index() == 0);
  CHECK(r.bytes_published_read() == 0);
  CHECK(r.bytes_consumed() == 2 * hvs_packet_len(1000));
  CHECK(r.priv_read_index() == 2 * hvs_packet_len(1000));
  CHECK(r.bytes_to_read() == 2 * hvs_packet_len(1000)); // hv_get_bytes_to_read uses read_index
  CHECK(r.iter_avail() == 0);                           // the iterator is at the end
  r.iter_close(3);
  CHECK(r.read_index() == 2 * hvs_packet_len(1000));
  CHECK(r.bytes_to_write() == r.data_size());
  CHECK(r.bytes_to_read() == 0);
}

TEST_CASE("VmbusRing: iter_next closes only when no further packet is visible", "[vmbus]")
{
  VmbusRing r(24576);
  r.write(1, 10);
  r.write(1, 20);
  auto a = r.iter_next(2);
  CHECK(a.payload == 10);
  CHECK_FALSE(a.closed);
  CHECK(r.bytes_published_read() == 0);
  auto b = r.iter_next(2); // no further packet: close
  CHECK(b.payload == 20);
  CHECK(b.closed);
  CHECK(r.bytes_published_read() == hvs_packet_len(10) + hvs_packet_len(20));
  r.write(5, 30);
  auto c = r.iter_next(6);
  CHECK(c.payload == 30);
  CHECK(c.closed);
  CHECK(r.bytes_to_write() == r.data_size());
}

TEST_CASE("VmbusRing: iter_close signals only when crossing pending_send_sz", "[vmbus]")
{
  // 4096 data bytes; three 1032-byte packets leave 1000 free.
  auto three_packets = [](std::uint32_t pending) {
    VmbusRing r(8192);
    r.set_pending_send_sz(pending);
    for (int i = 0; i < 3; ++i)
      REQUIRE(r.write(1, 1000).written);
    REQUIRE(r.bytes_to_write() == 1000);
    return r;
  };

  SECTION("crossing from below to above signals, the next close does not")
  {
    VmbusRing r = three_packets(1032);
    r.consume(2);
    CHECK(r.iter_close(2)); // 1000 -> 2032 crosses 1032
    CHECK(r.close_signals() == 1);
    r.consume(3);
    CHECK_FALSE(r.iter_close(3)); // 2032 -> 3064: already above
    CHECK_FALSE(r.iter_close(4)); // nothing read
    CHECK(r.close_signals() == 1);
  }
  SECTION("pending_send_sz == 0 never signals")
  {
    VmbusRing r = three_packets(0);
    r.consume(2);
    CHECK_FALSE(r.iter_close(2));
    r.consume(3);
    r.consume(3);
    CHECK_FALSE(r.iter_close(3));
    CHECK(r.close_signals() == 0);
  }
  SECTION("still below after the read: no signal, the later crossing signals")
  {
    VmbusRing r(8192);
    r.set_pending_send_sz(2000);
    REQUIRE(r.write(1, 8).written); // 40 bytes
    for (int i = 0; i < 3; ++i)
      REQUIRE(r.write(1, 1000).written);
    REQUIRE(r.bytes_to_write() == 960);
    r.consume(2);
    CHECK_FALSE(r.iter_close(2)); // 960 -> 1000: still <= 2000
    r.consume(3);
    CHECK(r.iter_close(3)); // 1000 -> 2032: crosses
  }
  SECTION("several packets read in one iteration count together")
  {
    VmbusRing r = three_packets(2500);
    r.consume(2);
    r.consume(2);
    CHECK(r.iter_close(2)); // 1000 -> 3064 crosses 2500
  }
  SECTION("boundary: ending exactly at pending_send_sz is still 'not enough space'")
  {
    VmbusRing r = three_packets(2032);
    r.consume(2);
    CHECK_FALSE(r.iter_close(2)); // curr_write_sz == pending_sz
    VmbusRing s = three_packets(2031);
    s.consume(2);
    CHECK(s.iter_close(2));
  }
  SECTION("boundary: starting exactly at pending_send_sz counts as blocked")
  {
    VmbusRing r = three_packets(1000); // before: 1000 == pending -> blocked
    r.consume(2);
    CHECK(r.iter_close(2));
    VmbusRing s = three_packets(999); // before: 1000 > 999 -> not blocked
    s.consume(2);
    CHECK_FALSE(s.iter_close(2));
  }
  SECTION("interrupt_mask plays no part in iter_close")
  {
    VmbusRing r = three_packets(1032);
    r.set_interrupt_mask(true);
    r.consume(2);
    CHECK(r.iter_close(2));
  }
}

TEST_CASE("VmbusRing: per-side time must not go backwards", "[vmbus]")
{
  VmbusRing r(24576);
  r.write(10, 1);
  CHECK_THROWS_AS(r.write(9, 1), std::logic_error);
  r.write(10, 1);
  r.write(20, 1);
  r.consume(20);
  CHECK_THROWS_AS(r.iter_close(14), std::logic_error);
  CHECK_THROWS_AS(r.consume(14), std::logic_error);
  CHECK(r.unconsumed_packets() == 2);
  r.iter_close(20);
  CHECK_THROWS_AS(r.write(30, vsim::models::kMaxModelPayload + 1), std::invalid_argument);
}

TEST_CASE("VmbusRing: payload is conserved", "[vmbus]")
{
  VmbusRing r(7 * 4096);
  Lcg rng{99};
  std::uint64_t sent = 0, received = 0;
  Time t = 0;
  for (int i = 0; i < 3000; ++i) {
    t += 1;
    const std::uint32_t p = rng.next(5000);
    if (r.write(t, p).written)
      sent += p;
    if (rng.next(3) == 0)
      received += drain(r, t);
    REQUIRE(r.payload_written() == sent);
    REQUIRE(r.payload_consumed() == received);
    REQUIRE(r.payload_consumed() <= r.payload_written());
  }
  received += drain(r, t + 1);
  CHECK(sent == received);
  CHECK(r.packets_written() == r.packets_consumed());
  CHECK(r.bytes_written() == r.bytes_published_read());
  CHECK(r.unconsumed_packets() == 0);
}
