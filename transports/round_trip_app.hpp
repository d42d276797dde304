// The application of a round-trip workload (workload.pattern ping_pong and
// request_response), the same for every transport and either side: the
// initiator sends its requests and reads each response whole, the responder
// reads each request whole and sends its response, each one thread with
// blocking calls on one socket (as sockperf ping-pong and netperf TCP_RR
// do). A transport supplies the socket (send a message, read one whole).
#pragma once

#include <cstdint>

#include "sim/params.hpp"
#include "sim/round_trips.hpp"
#include "sim/task.hpp"
#include "sim/thread.hpp"

namespace vsim {

// workload.pattern: a stream one way, or round trips.
enum class Pattern : std::uint8_t { Stream, PingPong, RequestResponse };

// The round-trip keys of a point: per connection the round trips, the
// request and response bytes (ping_pong: message_size each way), the
// requests in flight (ping_pong: 1) and the think time's mean in whole
// cycles of the platform's clock (ping_pong: none).
struct RoundTripKnobs {
  Pattern pattern = Pattern::Stream;
  std::uint64_t transactions = 0;
  std::uint64_t request = 0, response = 0;
  std::uint32_t outstanding = 1;
  double think = 0;
  bool think_exponential = false;
};
RoundTripKnobs read_round_trip_knobs(const Params& p);

// One side's application socket as the round-trip threads use it: send() a
// whole message (blocking), recv() until `bytes` more have arrived.
class RoundTripSocket {
public:
  virtual ~RoundTripSocket() = default;
  virtual Task<> send_message(std::uint64_t bytes) = 0;
  virtual Task<> receive_message(std::uint64_t bytes) = 0;
};

// The initiator's loop on thread `t` (the socket's thread) for connection
// `conn`: up to `outstanding` requests in flight, each round trip reported
// to `rt` from the request's send() call (RoundTrips::begin, where its
// first stage begins) to the return of the recv() that completes its
// response; think times from the stream (seed, iteration,
// "conn<conn>.think_time").
Task<> initiate(RoundTripSocket& sock, SimThread& t, const RoundTripKnobs& kn, RoundTrips& rt, std::uint64_t seed,
                std::uint32_t iteration, int conn);
// The responder's loop: each request read whole, then its response sent.
Task<> respond(RoundTripSocket& sock, const RoundTripKnobs& kn);

} // namespace vsim
