// The application of a round-trip workload (workload.pattern ping_pong and
// request_response), the same on either side: the initiator sends its
// requests and reads each response whole, the responder reads each request
// whole and sends its response, each one thread (as sockperf ping-pong and
// netperf TCP_RR do, blocking calls on one socket).
#include "transports/hv_sock/internal.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include <fmt/format.h>

namespace vsim::hv_sock::detail {

namespace {

// One think time in whole cycles: the mean, or drawn from an exponential
// distribution with that mean (inversion of one uniform draw).
double think_time(Rng& rng, const Knobs& kn)
{
  if (!kn.think_exponential)
    return kn.think;
  return std::round(-kn.think * std::log1p(-rng.uniform()));
}

// The thread's time, its work settled.
Task<Time> settled_now(SimThread& t)
{
  co_await t.settle();
  co_return t.now();
}

} // namespace

Task<> initiate(AppSocket& sock, SimThread& t, Shared& s, Channel& ch)
{
  const Knobs& kn = s.knobs;
  Rng think(s.seed, s.iteration, fmt::format("conn{}.think_time", ch.index));
  std::deque<Time> sent; // the send() calls of the requests in flight, oldest first
  std::uint64_t issued = 0;
  while (issued < std::min<std::uint64_t>(kn.outstanding, kn.transactions)) {
    sent.push_back(co_await settled_now(t));
    s.round_trips->begin(ch.index, sent.back());
    co_await sock.send_message(kn.request);
    ++issued;
  }
  for (std::uint64_t done = 0; done < kn.transactions; ++done) {
    co_await sock.receive_message(kn.response);
    const Time now = co_await settled_now(t);
    s.round_trips->completed(ch.index, sent.front(), now);
    sent.pop_front();
    if (issued == kn.transactions)
      continue;
    if (kn.think > 0)
      co_await t.sleep(think_time(think, kn));
    sent.push_back(co_await settled_now(t));
    s.round_trips->begin(ch.index, sent.back());
    co_await sock.send_message(kn.request);
    ++issued;
  }
}

Task<> respond(AppSocket& sock, Shared& s)
{
  for (std::uint64_t j = 0; j < s.knobs.transactions; ++j) {
    co_await sock.receive_message(s.knobs.request);
    co_await sock.send_message(s.knobs.response);
  }
}

} // namespace vsim::hv_sock::detail
