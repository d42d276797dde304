// KVM's adaptive halt-polling window (models/halt_poll.hpp, kvm_vcpu_halt).
#include <catch2/catch.hpp>

#include "models/halt_poll.hpp"

using vsim::models::HaltPoll;

TEST_CASE("halt polling: the window starts closed, grows from the grow start by x2 after short halts it missed, "
          "up to the most",
          "[halt_poll]")
{
  HaltPoll p(200, 10, 2); // the most 200, grow start 10 (cycles), shrink 2 (Linux 6.11 on)
  CHECK(p.window() == 0);
  CHECK_FALSE(p.wake(5)); // missed: window 0
  CHECK(p.window() == 10);
  CHECK(p.wake(5)); // within 10: caught, unchanged
  CHECK(p.window() == 10);
  CHECK_FALSE(p.wake(30)); // short but beyond the window: grows
  CHECK(p.window() == 20);
  CHECK_FALSE(p.wake(30));
  CHECK(p.window() == 40);
  CHECK(p.wake(30));
  CHECK(p.window() == 40);
  for (int i = 0; i < 3; ++i)
    CHECK_FALSE(p.wake(190)); // 40 -> 80 -> 160 -> 200
  CHECK(p.window() == 200);   // capped at the most
  CHECK(p.wake(200));         // the window's edge is inside it
  CHECK(p.window() == 200);
}

TEST_CASE("halt polling: a halt longer than the most halves the window, and below the grow start closes it",
          "[halt_poll]")
{
  HaltPoll p(200, 10, 2);
  p.wake(5);
  p.wake(15);
  p.wake(35);
  REQUIRE(p.window() == 40);
  CHECK_FALSE(p.wake(1000));
  CHECK(p.window() == 20);
  CHECK_FALSE(p.wake(1000));
  CHECK(p.window() == 10);
  CHECK_FALSE(p.wake(1000));
  CHECK(p.window() == 0); // 5 < the grow start
  CHECK_FALSE(p.wake(1000));
  CHECK(p.window() == 0); // a closed window does not shrink or grow on long halts
}

TEST_CASE("halt polling: a shrink of 0 (Linux before 6.11) closes the window after one long halt", "[halt_poll]")
{
  HaltPoll p(200, 10, 0);
  p.wake(5);
  p.wake(15);
  p.wake(35);
  p.wake(75);
  REQUIRE(p.window() == 80);
  CHECK_FALSE(p.wake(1000)); // long: 80 -> 0 at once, not 40
  CHECK(p.window() == 0);
  CHECK_FALSE(p.wake(5)); // and grows again from the grow start
  CHECK(p.window() == 10);
  // A halt within the window, however long the window, leaves it alone.
  HaltPoll q(200, 10, 0);
  for (double h : {5.0, 15.0, 35.0, 75.0, 155.0})
    q.wake(h);
  REQUIRE(q.window() == 160);
  CHECK(q.wake(160));
  CHECK(q.window() == 160);
  CHECK_FALSE(q.wake(199)); // short (under the most) but missed: grows to the most
  CHECK(q.window() == 200);
}

TEST_CASE("halt polling: a most of 0 never polls", "[halt_poll]")
{
  HaltPoll p(0, 10, 2);
  for (double h : {0.5, 5.0, 50.0})
    CHECK_FALSE(p.wake(h));
  CHECK(p.window() == 0);
}
