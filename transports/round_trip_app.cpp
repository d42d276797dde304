#include "transports/round_trip_app.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include <fmt/format.h>

#include "sim/rng.hpp"

namespace vsim {

RoundTripKnobs read_round_trip_knobs(const Params& p)
{
  RoundTripKnobs kn;
  const std::string& pattern = p.text("workload.pattern");
  kn.pattern = pattern == "ping_pong"          ? Pattern::PingPong
               : pattern == "request_response" ? Pattern::RequestResponse
                                               : Pattern::Stream;
  kn.transactions = static_cast<std::uint64_t>(p.integer("workload.transactions"));
  kn.request = kn.response = static_cast<std::uint64_t>(p.integer("workload.message_size"));
  if (kn.pattern != Pattern::RequestResponse)
    return kn;
  kn.request = static_cast<std::uint64_t>(p.integer("workload.request_size"));
  kn.response = static_cast<std::uint64_t>(p.integer("workload.response_size"));
  kn.outstanding = static_cast<std::uint32_t>(p.integer("workload.outstanding"));
  kn.think = std::round(p.number("workload.think_time") * 1e3 * p.number("costs.clock_ghz"));
  kn.think_exponential = p.text("workload.think_time_distribution") == "exponential";
  return kn;
}

namespace {

// One think time in whole cycles: the mean, or drawn from an exponential
// distribution with that mean (inversion of one uniform draw).
double think_time(Rng& rng, const RoundTripKnobs& kn)
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

Task<> initiate(RoundTripSocket& sock, SimThread& t, const RoundTripKnobs& kn, RoundTrips& rt, std::uint64_t seed,
                std::uint32_t iteration, int conn)
{
  Rng think(seed, iteration, fmt::format("conn{}.think_time", conn));
  std::deque<Time> sent; // the send() calls of the requests in flight, oldest first
  std::uint64_t issued = 0;
  while (issued < std::min<std::uint64_t>(kn.outstanding, kn.transactions)) {
    sent.push_back(co_await settled_now(t));
    rt.begin(conn, sent.back());
    co_await sock.send_message(kn.request);
    ++issued;
  }
  for (std::uint64_t done = 0; done < kn.transactions; ++done) {
    co_await sock.receive_message(kn.response);
    const Time now = co_await settled_now(t);
    rt.completed(conn, sent.front(), now);
    sent.pop_front();
    if (issued == kn.transactions)
      continue;
    if (kn.think > 0)
      co_await t.sleep(think_time(think, kn));
    sent.push_back(co_await settled_now(t));
    rt.begin(conn, sent.back());
    co_await sock.send_message(kn.request);
    ++issued;
  }
}

Task<> respond(RoundTripSocket& sock, const RoundTripKnobs& kn)
{
  for (std::uint64_t j = 0; j < kn.transactions; ++j) {
    co_await sock.receive_message(kn.request);
    co_await sock.send_message(kn.response);
  }
}

} // namespace vsim
