// The split virtqueue model: descriptor accounting, ring indices with 16-bit
// wrap-around, and both notification suppression schemes.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "models/virtqueue.hpp"

using vsim::models::Virtqueue;
using vsim::models::vring_need_event;

TEST_CASE("vring_need_event follows the 16-bit formula, including wrap-around", "[virtqueue]")
{
  // The event index lies in [old, new): notify.
  CHECK(vring_need_event(5, 6, 5));
  CHECK(vring_need_event(5, 10, 5));
  CHECK(vring_need_event(9, 10, 5));
  // Already past it before this batch, or not reached yet: no notification.
  CHECK_FALSE(vring_need_event(4, 10, 5));
  CHECK_FALSE(vring_need_event(10, 10, 5));
  CHECK_FALSE(vring_need_event(11, 10, 5));
  // Wrap at 65536: old = 65534, new = 2 covers 65534, 65535, 0, 1.
  CHECK(vring_need_event(65535, 2, 65534));
  CHECK(vring_need_event(0, 2, 65534));
  CHECK(vring_need_event(1, 2, 65534));
  CHECK_FALSE(vring_need_event(2, 2, 65534));
  CHECK_FALSE(vring_need_event(65533, 2, 65534));
}

TEST_CASE("virtqueue: a full ring refuses chains until the device returns descriptors", "[virtqueue]")
{
  Virtqueue vq(8, true, false);
  for (int i = 0; i < 4; ++i)
    REQUIRE(vq.add(1.0, 2, 100 + i)); // header + payload: 2 descriptors each
  CHECK(vq.num_free() == 0);
  CHECK_FALSE(vq.add(1.0, 1, 999)); // full: nothing added
  CHECK(vq.in_flight() == 4);
  CHECK(vq.avail_idx() == 4);

  auto a = vq.pop();
  REQUIRE(a);
  CHECK(a->token == 100);
  CHECK(a->buffers == 2);
  vq.push_used(a->head, 44 + 4096);
  auto u = vq.get_buf(3.0);
  REQUIRE(u);
  CHECK(u->token == 100);
  CHECK(u->len == 44 + 4096);
  CHECK(vq.num_free() == 2);
  CHECK(vq.add(4.0, 2, 104));
  CHECK_FALSE(vq.add(4.0, 1, 105));
  vq.check_invariants();
}

TEST_CASE("virtqueue: indirect descriptors make a chain take one slot", "[virtqueue]")
{
  Virtqueue vq(4, true, true);
  CHECK(vq.descriptors_for(2) == 1);
  CHECK(vq.descriptors_for(1) == 1);
  for (int i = 0; i < 4; ++i)
    REQUIRE(vq.add(0, 2, i));
  CHECK_FALSE(vq.add(0, 2, 4));
  Virtqueue direct(4, true, false);
  CHECK(direct.descriptors_for(2) == 2);
}

TEST_CASE("virtqueue: the device sees an available entry once it is added, an empty ring pops nothing", "[virtqueue]")
{
  Virtqueue vq(16, true, false);
  CHECK_FALSE(vq.pop());
  CHECK_FALSE(vq.avail_pending());
  vq.add(10.0, 1, 7);
  CHECK(vq.avail_pending());
  auto a = vq.pop();
  REQUIRE(a);
  CHECK(a->token == 7);
  CHECK_FALSE(vq.pop());
}

TEST_CASE("virtqueue EVENT_IDX: one kick per device idle-to-busy transition", "[virtqueue]")
{
  Virtqueue vq(16, true, false);
  // avail_event starts at 0: the first entry (0 -> 1) crosses it.
  vq.add(1, 1, 0);
  CHECK(vq.kick_prepare());
  // The device is busy (has not re-enabled): later adds need no kick.
  vq.disable_notify();
  vq.add(3, 1, 1);
  CHECK_FALSE(vq.kick_prepare());
  vq.add(4, 1, 2);
  CHECK_FALSE(vq.kick_prepare());
  // The device drains what it saw and re-arms at its last seen index.
  while (auto a = vq.pop())
    vq.push_used(a->head, 0);
  CHECK_FALSE(vq.enable_notify()); // nothing new beyond what it read
  CHECK(vq.avail_event() == 3);
  vq.add(6, 1, 3);
  CHECK(vq.kick_prepare());
  // Entries added before the device re-armed are seen by enable_notify.
  vq.disable_notify();
  vq.pop();
  vq.add(8, 1, 4);
  CHECK(vq.enable_notify());
}

TEST_CASE("virtqueue without EVENT_IDX uses the NO_NOTIFY and NO_INTERRUPT flags", "[virtqueue]")
{
  Virtqueue vq(8, false, false);
  vq.add(1, 1, 0);
  CHECK(vq.kick_prepare());
  vq.disable_notify();
  vq.add(3, 1, 1);
  CHECK_FALSE(vq.kick_prepare());
  auto a = vq.pop();
  vq.push_used(a->head, 0);
  CHECK(vq.signal_needed());
  vq.disable_cb();
  a = vq.pop();
  vq.push_used(a->head, 0);
  CHECK_FALSE(vq.signal_needed());
  vq.get_buf(7);
  vq.get_buf(7);
  CHECK(vq.enable_cb()); // nothing pending
}

TEST_CASE("virtqueue EVENT_IDX interrupts: used_event moves with get_buf while callbacks are on", "[virtqueue]")
{
  Virtqueue vq(8, true, false);
  for (int i = 0; i < 3; ++i)
    vq.add(0, 1, i);
  auto a = vq.pop();
  vq.push_used(a->head, 0);
  CHECK(vq.signal_needed()); // first signal is always sent
  a = vq.pop();
  vq.push_used(a->head, 0);
  CHECK_FALSE(vq.signal_needed()); // used_event still 0: already signalled past it
  // The driver consumes with callbacks on: used_event follows last_used.
  REQUIRE(vq.get_buf(3));
  REQUIRE(vq.get_buf(3));
  CHECK(vq.used_event() == 2);
  a = vq.pop();
  vq.push_used(a->head, 0);
  CHECK(vq.signal_needed());
  // Callbacks off: used_event stays, so the device signals at most once more.
  vq.disable_cb();
  REQUIRE(vq.get_buf(5));
  CHECK(vq.used_event() == 2);
  CHECK(vq.enable_cb());
  CHECK(vq.used_event() == 3);
}

TEST_CASE("virtqueue indices wrap at 65536 without losing entries", "[virtqueue]")
{
  Virtqueue vq(4, true, false, 65533);
  std::uint64_t next = 0, got = 0;
  double t = 0;
  for (int round = 0; round < 10; ++round) {
    while (vq.add(t, 1, next))
      ++next;
    t += 1;
    while (auto a = vq.pop())
      vq.push_used(a->head, 1);
    t += 1;
    while (auto u = vq.get_buf(t)) {
      CHECK(u->token == got);
      ++got;
    }
    // EVENT_IDX across the wrap: the device re-arms, the next add kicks.
    vq.enable_notify();
    vq.add(t, 1, next++);
    CHECK(vq.kick_prepare());
    vq.disable_notify();
    t += 1;
    while (auto a = vq.pop())
      vq.push_used(a->head, 1);
    while (auto u = vq.get_buf(t))
      CHECK(u->token == got++);
  }
  CHECK(got == next);
  CHECK(vq.avail_idx() == static_cast<std::uint16_t>(65533 + next));
  vq.check_invariants();
}

TEST_CASE("virtqueue invariants fail loudly", "[virtqueue]")
{
  Virtqueue vq(4, true, false);
  vq.add(0, 1, 1);
  auto a = vq.pop();
  vq.push_used(a->head, 0);
  // Returning the same descriptor twice is a device bug.
  CHECK_THROWS_AS(vq.push_used(a->head, 0), std::logic_error);
  CHECK_THROWS_AS(Virtqueue(6, true, false), std::invalid_argument);
  CHECK_THROWS_AS(vq.add(0, 0, 1), std::logic_error);
}

TEST_CASE("virtqueue: 65535 chains added without kick_prepare is a loud error (its window would wrap)", "[virtqueue]")
{
  // Linux kicks by itself at num_added == 65535; a model driver that forgets
  // kick_prepare for that long would compute a window of 0 and never kick.
  Virtqueue vq(32768, true, true);
  auto cycle = [&](int n) {
    for (int i = 0; i < n; ++i)
      REQUIRE(vq.add(0, 2, 0));
    while (auto a = vq.pop())
      vq.push_used(a->head, 0);
    while (vq.get_buf(0)) {
    }
  };
  cycle(32768);
  cycle(32767); // 65535 added, no kick_prepare
  CHECK_THROWS_AS(vq.add(0, 2, 0), std::logic_error);
  // With a kick_prepare in between, as the drivers do, it goes on.
  Virtqueue ok(32768, true, true);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 32768; ++i)
      REQUIRE(ok.add(0, 2, 0));
    // The device never re-armed, so avail_event stays 0: the batches [0, 32768)
    // and, 16-bit indices wrapping, [65536, 98304) pass it; [32768, 65536) does not.
    CHECK(ok.kick_prepare() == (round != 1));
    while (auto a = ok.pop())
      ok.push_used(a->head, 0);
    while (ok.get_buf(0)) {
    }
  }
}
