#include "sim/round_trips.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/trace.hpp"

namespace vsim {

void RoundTrips::set_stages(std::vector<std::string> names)
{
  if (!conns_.empty() || rtt_us_.count())
    throw std::logic_error("invariant violated: RoundTrips::set_stages after round trips began");
  stages_ = std::move(names);
}

int RoundTrips::stage_id(const std::string& name) const
{
  const auto it = std::find(stages_.begin(), stages_.end(), name);
  if (it == stages_.end())
    throw std::logic_error("invariant violated: '" + name + "' is not a stage of the round trip");
  return static_cast<int>(it - stages_.begin());
}

int RoundTrips::add_cause(const std::string& name)
{
  const bool began = rtt_us_.count() > 0 ||
                     std::any_of(conns_.begin(), conns_.end(), [](const auto& c) { return c.second.in_flight > 0; });
  if (began)
    throw std::logic_error("invariant violated: RoundTrips::add_cause after round trips began");
  if (std::find(causes_.begin(), causes_.end(), name) != causes_.end())
    throw std::logic_error("invariant violated: round-trip cause '" + name + "' added twice");
  causes_.push_back(name);
  return static_cast<int>(causes_.size()) - 1;
}

void RoundTrips::note(int cause, double cycles)
{
  if (cause < 0 || cause >= static_cast<int>(causes_.size()) || cycles < 0)
    throw std::logic_error(
        fmt::format("invariant violated: round-trip cause {} noted out of range ({} cycles)", cause, cycles));
  for (auto& [c, s] : conns_)
    if (s.alone && s.in_flight == 1)
      s.causes[static_cast<std::size_t>(s.stage) * causes_.size() + static_cast<std::size_t>(cause)] += cycles;
}

RoundTrips::Conn& RoundTrips::conn(int c)
{
  Conn& s = conns_[c];
  if (s.starts.size() != stages_.size())
    s.starts.assign(stages_.size(), -1);
  if (s.causes.size() != causes_.size() * stages_.size())
    s.causes.assign(causes_.size() * stages_.size(), 0.0);
  return s;
}

void RoundTrips::begin(int c, Time now)
{
  Conn& s = conn(c);
  // Another request in flight: neither it nor this one is attributed.
  s.alone = s.in_flight == 0 && !stages_.empty();
  ++s.in_flight;
  if (!s.alone)
    return;
  std::fill(s.starts.begin(), s.starts.end(), -1);
  std::fill(s.causes.begin(), s.causes.end(), 0.0);
  s.stage = 0;
  s.starts[0] = now;
}

void RoundTrips::stamp(int c, int stage, Time now)
{
  const auto it = conns_.find(c);
  if (it == conns_.end())
    return;
  Conn& s = it->second;
  if (!s.alone || s.in_flight != 1 || stage <= s.stage)
    return;
  if (stage >= static_cast<int>(stages_.size()) || now < s.starts[static_cast<std::size_t>(s.stage)])
    throw std::logic_error(fmt::format("invariant violated: round-trip stage {} stamped out of range or before the "
                                       "stage it ends began (connection {})",
                                       stage, c));
  s.stage = stage;
  s.starts[static_cast<std::size_t>(stage)] = now;
}

void RoundTrips::completed(int c, Time sent, Time now)
{
  const double rtt = us(now - sent);
  rtt_us_.record(rtt);
  if (monitor_) {
    monitor_->round_trip(rtt, now);
    monitor_->delivered(c, bytes_, now);
  }
  const auto it = conns_.find(c);
  if (it == conns_.end() || it->second.in_flight == 0) { // a transport that does not call begin()
    if (trace_)
      trace_round_trip(conn(c), c, sent, now, rtt, false);
    return;
  }
  Conn& s = it->second;
  const bool staged = s.alone && s.in_flight == 1;
  if (staged) {
    if (s.starts[0] != sent)
      throw std::logic_error(fmt::format("invariant violated: a round trip completed on connection {} is not the "
                                         "one begun (sent at {}, begun at {})",
                                         c, sent, s.starts[0]));
    attribute(s, sent, now, rtt);
  }
  if (trace_)
    trace_round_trip(s, c, sent, now, rtt, staged);
  --s.in_flight;
  s.alone = false;
}

void RoundTrips::attribute(Conn& s, Time sent, Time now, double rtt)
{
  attributed_us_.record(rtt);
  std::vector<double>& sums = stage_sums_us_[Histogram::bucket_of(rtt)];
  sums.resize(stages_.size(), 0.0);
  // Each stage reached lasts until the next one reached begins, the last
  // until now; a stage skipped lasts zero.
  Time end = now;
  for (std::size_t i = stages_.size(); i-- > 0;) {
    const Time start = s.starts[i];
    if (start < 0)
      continue;
    sums[i] += us(end - start);
    end = start;
  }
  if (end != sent)
    throw std::logic_error("invariant violated: a round trip's first stage does not begin at its send()");
  if (causes_.empty())
    return;
  std::vector<double>& cs = cause_sums_us_[Histogram::bucket_of(rtt)];
  std::vector<double>& ch = cause_hits_[Histogram::bucket_of(rtt)];
  const std::size_t nc = causes_.size();
  cs.resize(s.causes.size(), 0.0);
  ch.resize(nc, 0.0);
  for (std::size_t i = 0; i < nc; ++i) {
    bool hit = false;
    for (std::size_t st = 0; st < stages_.size(); ++st)
      if (const double v = s.causes[st * nc + i]; v > 0) {
        cs[st * nc + i] += us(v);
        hit = true;
      }
    if (hit)
      ch[i] += 1;
  }
}

RoundTrips::Band RoundTrips::band(double q_lo, double q_hi) const
{
  Band b;
  if (!attributed_us_.count())
    return b;
  const std::int64_t lo = Histogram::bucket_of(attributed_us_.quantile(q_lo));
  const std::int64_t hi = Histogram::bucket_of(attributed_us_.quantile(q_hi));
  std::vector<double> sums(stages_.size(), 0.0);
  const auto& counts = attributed_us_.counts();
  const std::size_t nc = causes_.size();
  std::vector<double> cause_us(nc, 0.0), hits(nc, 0.0), by_stage(nc * stages_.size(), 0.0);
  for (auto it = counts.lower_bound(lo); it != counts.end() && it->first <= hi; ++it) {
    b.round_trips += it->second;
    const std::vector<double>& s = stage_sums_us_.at(it->first);
    for (std::size_t i = 0; i < sums.size(); ++i)
      sums[i] += s[i];
    if (const auto c = cause_sums_us_.find(it->first); c != cause_sums_us_.end()) {
      const std::vector<double>& h = cause_hits_.at(it->first);
      for (std::size_t i = 0; i < by_stage.size(); ++i) {
        by_stage[i] += c->second[i];
        cause_us[i % nc] += c->second[i];
      }
      for (std::size_t i = 0; i < nc; ++i)
        hits[i] += h[i];
    }
  }
  const auto n = static_cast<double>(b.round_trips);
  for (double& v : sums)
    v /= n;
  for (std::size_t i = 0; i < nc; ++i) {
    cause_us[i] /= n;
    hits[i] /= n;
  }
  for (double& v : by_stage)
    v /= n;
  b.mean_us = std::move(sums);
  b.cause_us = std::move(cause_us);
  b.cause_share = std::move(hits);
  b.cause_stage_us = std::move(by_stage);
  return b;
}

void RoundTrips::trace_as(Trace* trace, int c, const std::string& initiator)
{
  trace_ = trace;
  if (trace)
    conn(c).track = initiator + " round trips";
}

void RoundTrips::trace_round_trip(Conn& s, int c, Time sent, Time now, double rtt, bool staged)
{
  if (s.track.empty())
    return;
  // Round trips overlapping in time (several in flight) go on lanes of
  // their own: the first whose last round trip ended by this one's send().
  std::size_t lane = 0;
  while (lane < s.lane_end.size() && s.lane_end[lane] > sent)
    ++lane;
  if (lane == s.lane_end.size())
    s.lane_end.push_back(now);
  s.lane_end[lane] = now;
  const std::string track = lane ? fmt::format("{} ({})", s.track, lane + 1) : s.track;
  ++seq_;
  trace_->span(track, sent, now, "round trip", "round_trip",
               {{"connection", c}, {"round_trip", seq_}, {"rtt_us", rtt}, {"stages", staged}});
  if (!staged)
    return;
  Time end = now;
  for (std::size_t i = stages_.size(); i-- > 0;)
    if (s.starts[i] >= 0) {
      if (end > s.starts[i])
        trace_->span(track, s.starts[i], end, stages_[i], "stage", {{"us", us(end - s.starts[i])}});
      end = s.starts[i];
    }
}

} // namespace vsim
