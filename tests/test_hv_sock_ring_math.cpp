// Tests of hv_sock's ring arithmetic (transports/hv_sock/ring_math.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "models/vmbus_ring.hpp"
#include "transports/hv_sock/ring_math.hpp"

using namespace vsim::hv_sock;
using vsim::models::hvs_packet_len;
using vsim::models::VmbusRing;

TEST_CASE("writable_bytes: 72 bytes of headroom, rounded down to 8", "[hv_sock]")
{
  CHECK(writable_bytes(0) == 0);
  CHECK(writable_bytes(8) == 0);
  CHECK(writable_bytes(71) == 0);
  CHECK(writable_bytes(72) == 0);
  CHECK(writable_bytes(73) == 0); // 1 byte above the headroom rounds down to 0
  CHECK(writable_bytes(79) == 0);
  CHECK(writable_bytes(80) == 8);
  CHECK(writable_bytes(81) == 8);
  CHECK(writable_bytes(88) == 16);
  CHECK(writable_bytes(20480) == 20408);
  CHECK(kWritableHeadroom == hvs_packet_len(1) + hvs_packet_len(0));
  CHECK(kPendingSendSize == 4120);
  CHECK(kSendBufPayload == 4088);
}

TEST_CASE("writable_bytes: a packet of that size always fits, with room for a FIN", "[hv_sock]")
{
  for (std::uint32_t avail = 8; avail <= 20480; avail += 8) {
    const std::uint32_t w = writable_bytes(avail);
    if (w == 0)
      continue;
    // hv_ringbuffer_write accepts when avail > packet length.
    REQUIRE(avail > hvs_packet_len(w));
    // and afterwards a FIN still fits (hvs_shutdown: "It can't fail").
    REQUIRE(avail - hvs_packet_len(w) > hvs_packet_len(0));
  }
}

TEST_CASE("host_room_needed: the Windows writer is signalled whenever it slept for want of room", "[hv_sock]")
{
  // hv_pkt_iter_close() wakes the writer once bytes_to_write > pending_send_sz
  // (and only on that transition): the writer must be unable to write at
  // every free space <= the value it advertises, and able to at every free
  // space above it, or it sleeps for good (issue 30's lost wake-up).
  CHECK(host_room_needed(8, true) == kWritableHeadroom); // was hvs_packet_len(8) = 40
  CHECK(host_room_needed(8, false) == hvs_packet_len(8));
  CHECK(host_room_needed(4096, true) == hvs_packet_len(4096));
  for (const bool fill : {true, false}) {
    for (std::uint32_t want = 1; want <= 16384; want += (want < 100 ? 1 : 37)) {
      INFO("want " << want << " fill " << fill);
      const std::uint32_t need = host_room_needed(want, fill);
      // Free space on a ring is a multiple of 8 (packets are 8-aligned).
      const std::uint32_t above = (need / 8 + 1) * 8;
      const bool fits_above = fill ? writable_bytes(above) > 0 : above > hvs_packet_len(want);
      REQUIRE(fits_above);
      // Where it sleeps it could not write: some free space at or below need.
      const std::uint32_t at = need / 8 * 8;
      const bool fits_at = fill ? std::min(want, writable_bytes(at)) > 0 : at > hvs_packet_len(want);
      if (fill)
        REQUIRE((!fits_at || at > kWritableHeadroom));
      else
        REQUIRE_FALSE(fits_at);
    }
  }
}

TEST_CASE("enqueue_payload: min(remaining, writable, 4088)", "[hv_sock]")
{
  CHECK(enqueue_payload(64 * 1024, 20480) == 4088);
  CHECK(enqueue_payload(100, 20480) == 100);
  CHECK(enqueue_payload(64 * 1024, 4000) == 3928);
  CHECK(enqueue_payload(64 * 1024, 72) == 0);
  CHECK(enqueue_payload(0, 20480) == 0);
}

namespace {

// hvs_stream_enqueue-style fill of an empty ring with one long message:
// returns the payload of each packet written before writable_bytes reaches 0.
std::vector<std::uint32_t> fill_with_enqueue(VmbusRing& r)
{
  std::vector<std::uint32_t> sizes;
  for (;;) {
    const std::uint32_t p = enqueue_payload(1ull << 40, r.bytes_to_write());
    if (p == 0)
      break;
    auto res = r.write(0, p);
    REQUIRE(res.written);
    sizes.push_back(p);
  }
  return sizes;
}

} // namespace

TEST_CASE("24 KiB ring: 4 full packets, then a partial one per writable_bytes", "[hv_sock]")
{
  SECTION("raw ring: the fifth 4088-byte packet is refused")
  {
    VmbusRing r(24576);
    for (int i = 0; i < 4; ++i)
      REQUIRE(r.write(0, kSendBufPayload).written);
    CHECK(r.bytes_to_write() == 20480 - 4 * 4120);
    CHECK_FALSE(r.write(0, kSendBufPayload).written);
  }
  SECTION("hvs_stream_enqueue sizing")
  {
    VmbusRing r(24576);
    auto sizes = fill_with_enqueue(r);
    CHECK(sizes == std::vector<std::uint32_t>{4088, 4088, 4088, 4088, 3928});
    CHECK(r.bytes_to_write() == 40);
    CHECK(writable_bytes(r.bytes_to_write()) == 0);
    CHECK(r.write(0, 0).written); // the FIN still fits
  }
}

TEST_CASE("Full packets in flight for each ring size", "[hv_sock]")
{
  struct Row {
    std::uint32_t ring;
    std::size_t full;
  };
  for (Row row : {Row{24576, 4}, Row{32768, 6}, Row{65536, 14}, Row{131072, 30}, Row{262144, 62}}) {
    VmbusRing r(row.ring);
    auto sizes = fill_with_enqueue(r);
    std::size_t full = 0;
    for (auto s : sizes)
      full += s == kSendBufPayload;
    INFO("ring " << row.ring);
    CHECK(full == row.full);
    CHECK(sizes.size() == row.full + 1); // one partial packet at the end
  }
}

TEST_CASE("socket_buffer_value: setsockopt doubles, caps by sysctl, floors at SOCK_MIN", "[hv_sock]")
{
  const std::uint64_t wmem = kDefaultSysctlMemMax;
  CHECK(kDefaultSysctlMemMax == 212992);
  CHECK(socket_buffer_value(std::nullopt, wmem) == 24576); // hvs_sock_init
  CHECK(socket_buffer_value(std::nullopt, wmem, SocketBuffer::Receive) == 24576);
  CHECK(socket_buffer_value(16 * 1024, wmem) == 32768);
  CHECK(socket_buffer_value(32 * 1024, wmem) == 65536);
  CHECK(socket_buffer_value(64 * 1024, wmem) == 131072);
  CHECK(socket_buffer_value(212992, wmem) == 425984);
  CHECK(socket_buffer_value(212993, wmem) == 425984); // capped by wmem_max
  CHECK(socket_buffer_value(1ull << 40, wmem) == 425984);
  CHECK(socket_buffer_value(64 * 1024, 16 * 1024) == 32768); // small sysctl cap
  // Floors: SOCK_MIN_SNDBUF = 4608, SOCK_MIN_RCVBUF = 2304.
  CHECK(kSockMinSndbuf == 4608);
  CHECK(kSockMinRcvbuf == 2304);
  CHECK(socket_buffer_value(0, wmem) == 4608);
  CHECK(socket_buffer_value(1, wmem) == 4608);
  CHECK(socket_buffer_value(2304, wmem) == 4608);
  CHECK(socket_buffer_value(2305, wmem) == 4610);
  CHECK(socket_buffer_value(1, wmem, SocketBuffer::Receive) == 2304);
  CHECK(socket_buffer_value(1200, wmem, SocketBuffer::Receive) == 2400);
  // val * 2 must fit an int: val capped at INT_MAX / 2.
  CHECK(socket_buffer_value(1ull << 40, 1ull << 40) == 2147483646u);
}

TEST_CASE("ring_size_for: page_align(min(max(sk_buf, 24 KiB), 256 KiB)), or 24 KiB fixed", "[hv_sock]")
{
  CHECK(kRingDefaultSize == 24576);
  CHECK(kRingMaxSize == 262144);
  CHECK(ring_size_for(24576, true) == 24576);
  CHECK(ring_size_for(0, true) == 24576);
  CHECK(ring_size_for(4608, true) == 24576);
  CHECK(ring_size_for(24575, true) == 24576);
  CHECK(ring_size_for(24577, true) == 28672); // page-aligned up
  CHECK(ring_size_for(30000, true) == 32768);
  CHECK(ring_size_for(200000, true) == 200704);
  CHECK(ring_size_for(262144, true) == 262144);
  CHECK(ring_size_for(262145, true) == 262144); // capped, then aligned: still 64 pages
  CHECK(ring_size_for(0xFFFFFFFFu, true) == 262144);
  for (std::uint32_t b : {0u, 24576u, 65536u, 262144u, 0xFFFFFFFFu})
    CHECK(ring_size_for(b, false) == 24576);
}

TEST_CASE("Ring sizes for the published socket option rows", "[hv_sock]")
{
  const std::uint64_t wmem = kDefaultSysctlMemMax;
  auto ring = [&](std::optional<std::uint64_t> opt, bool sockopt) {
    return ring_size_for(socket_buffer_value(opt, wmem), sockopt);
  };
  // sockopt sizing (after the 2019 patch)
  CHECK(ring(std::nullopt, true) == 24 * 1024);
  CHECK(ring(16 * 1024, true) == 32 * 1024);
  CHECK(ring(32 * 1024, true) == 64 * 1024);
  CHECK(ring(64 * 1024, true) == 128 * 1024);
  CHECK(ring(128 * 1024, true) == 256 * 1024);
  CHECK(ring(1ull << 30, true) == 256 * 1024); // huge: 256 KiB cap
  CHECK(ring(1024, true) == 24 * 1024);        // tiny: 24 KiB floor
  CHECK(ring(50000, true) == 102400);          // 100000 -> rounded up to 25 pages
  // Receive side uses its own floor but the same sizing.
  CHECK(ring_size_for(socket_buffer_value(32 * 1024, wmem, SocketBuffer::Receive), true) == 64 * 1024);
  // fixed sizing (before the patch): 24 KiB whatever the option
  for (std::optional<std::uint64_t> opt :
       {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{16 * 1024},
        std::optional<std::uint64_t>{64 * 1024}, std::optional<std::uint64_t>{1ull << 30}})
    CHECK(ring(opt, false) == 24 * 1024);
  // Every size is a valid VMBus ring.
  for (std::optional<std::uint64_t> opt :
       {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1}, std::optional<std::uint64_t>{50000},
        std::optional<std::uint64_t>{1ull << 30}})
    CHECK_NOTHROW(VmbusRing(ring(opt, true)));
}
