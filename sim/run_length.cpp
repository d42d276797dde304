#include "sim/run_length.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

namespace vsim {

const char* run_end_text(RunEnd e)
{
  switch (e) {
  case RunEnd::Extrapolated:
    return "steady state reached the precision; the rest of the transfer extrapolated";
  case RunEnd::Full:
    return "simulated in full (sim.run_length: full)";
  case RunEnd::TooShort:
    return "simulated in full: the transfer was too short to judge its steady state";
  case RunEnd::PrecisionNotMet:
    return "simulated in full: the throughput's confidence interval stayed wider than sim.precision";
  case RunEnd::NoSteadyState:
    return "simulated in full: the warm-up did not end within the first half of the run";
  case RunEnd::UnequalConnections:
    return "simulated in full: the connections' shares of the throughput were unequal, or not steady";
  case RunEnd::FiguresNotSteady:
    return "simulated in full: a CPU figure or count did not settle to the precision of what it is a part of";
  case RunEnd::RoundTripsNotSteady:
    return "simulated in full: the round trip's mean or 99th percentile did not settle to sim.precision";
  }
  return "?";
}

std::uint64_t expected_auto_bytes(const RunLengthConfig& cfg, std::uint64_t delivery)
{
  // The first check comes after min_observations observations of at least
  // a chunk each (a delivery larger than the chunk is one observation);
  // a transient and a few more checks typically add as much again.
  // Round trips need quantile_batch of them in each batch after the warm-up.
  const std::uint64_t per_observation = std::max(cfg.chunk, delivery);
  const std::size_t observations =
      cfg.round_trips ? std::max(cfg.min_observations, cfg.batches * cfg.quantile_batch) : cfg.min_observations;
  return std::min(cfg.total_bytes, 2 * observations * per_observation);
}

std::optional<std::size_t> mser5_cut(const std::vector<double>& x)
{
  const std::size_t groups = x.size() / 5;
  if (groups < 2)
    return std::nullopt;
  std::vector<double> g(groups);
  for (std::size_t j = 0; j < groups; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < 5; ++i)
      s += x[5 * j + i];
    g[j] = s / 5;
  }
  const std::size_t last = groups / 2; // the cut is searched over the first half
  std::size_t best_d = 0;
  double best = 0;
  for (std::size_t d = 0; d <= last; ++d) {
    const double m = static_cast<double>(groups - d);
    double mean = 0;
    for (std::size_t j = d; j < groups; ++j)
      mean += g[j];
    mean /= m;
    double ss = 0;
    for (std::size_t j = d; j < groups; ++j)
      ss += (g[j] - mean) * (g[j] - mean);
    const double stat = ss / (m * m);
    // Only a clearly lower value moves the cut (ties and rounding noise keep the earliest).
    if (d == 0 || stat < best * (1 - 1e-9)) {
      best = stat;
      best_d = d;
    }
  }
  if (best_d == last && last > 0)
    return std::nullopt;
  return best_d * 5;
}

double student_t975(std::size_t df)
{
  if (df < 1)
    throw std::invalid_argument("student_t975: needs at least one degree of freedom");
  // The monitor asks for the same few degrees of freedom at every check:
  // each computed once (per process), when first asked for.
  static std::map<std::size_t, double> cache;
  auto [it, fresh] = cache.try_emplace(df, 0.0);
  if (fresh)
    it->second = boost::math::quantile(boost::math::students_t_distribution<double>(static_cast<double>(df)), 0.975);
  return it->second;
}

BatchMeansResult batch_means(const std::vector<double>& num, const std::vector<double>& den, std::size_t from,
                             std::size_t batches)
{
  BatchMeansResult r;
  const std::size_t n = std::min(num.size(), den.size());
  if (batches < 2 || from >= n || n - from < batches)
    return r;
  r.batches = batches;
  r.batch_size = (n - from) / batches;
  r.first = n - batches * r.batch_size;
  std::vector<double> ratio(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    double a = 0, c = 0;
    for (std::size_t i = 0; i < r.batch_size; ++i) {
      a += num[r.first + b * r.batch_size + i];
      c += den[r.first + b * r.batch_size + i];
    }
    ratio[b] = c > 0 ? a / c : 0;
  }
  double mean = 0;
  for (double v : ratio)
    mean += v;
  mean /= static_cast<double>(batches);
  double var = 0;
  for (double v : ratio)
    var += (v - mean) * (v - mean);
  var /= static_cast<double>(batches - 1);
  r.mean = mean;
  const double hw = student_t975(batches - 1) * std::sqrt(var / static_cast<double>(batches));
  r.relative_half_width = mean > 0 ? hw / mean : INFINITY;
  return r;
}

RunLength::RunLength(RunLengthConfig cfg, std::function<Figures(Time, std::uint64_t)> snapshot,
                     std::function<FigureKind(const std::string&)> kind, std::function<void()> stop, Shorten shorten,
                     Committed committed)
    : cfg_(cfg), snapshot_(std::move(snapshot)), kind_(std::move(kind)), stop_(std::move(stop)),
      shorten_(cfg.round_trips ? nullptr : std::move(shorten)),
      committed_(cfg.round_trips ? nullptr : std::move(committed)), chunk_(std::max<std::uint64_t>(1, cfg.chunk)),
      per_conn_(static_cast<std::size_t>(std::max(1, cfg.connections)), 0), next_boundary_(chunk_),
      next_check_(cfg.min_observations)
{
  if (cfg_.max_observations < 2 * cfg_.min_observations || cfg_.max_observations % 10 != 0 || cfg_.batches < 2)
    throw std::invalid_argument("RunLength: max_observations must be a multiple of 10 and at least twice "
                                "min_observations, and batches at least 2");
  Snap start;
  start.per_conn = per_conn_;
  snaps_.push_back(std::move(start));
}

void RunLength::delivered(int conn, std::uint64_t bytes, Time now)
{
  if (stopped_ && !shortened_)
    return;
  const auto c = static_cast<std::size_t>(conn);
  if (c >= per_conn_.size())
    throw std::logic_error(fmt::format("run length: delivery to connection {} of {}", conn, per_conn_.size()));
  if (now < last_delivery_)
    throw std::logic_error(fmt::format("run length: a delivery at {} after one at {}", now, last_delivery_));
  last_delivery_ = now;
  per_conn_[c] += bytes;
  total_ += bytes;
  if (!stopped_ && total_ >= next_boundary_) // a shortened run's drain is counted, not observed
    observe(now);
}

void RunLength::round_trip(double value, Time now)
{
  if (stopped_ || rtt_.size() >= cfg_.max_round_trips)
    return;
  rtt_t_.push_back(now);
  rtt_.push_back(value);
}

RoundTripInterval round_trip_interval(const std::vector<double>& x, std::size_t batches, std::size_t min_batch)
{
  RoundTripInterval r;
  const std::size_t size = batches ? x.size() / batches : 0;
  if (batches < 2 || size < std::max<std::size_t>(1, min_batch))
    return r;
  const std::size_t first = x.size() - batches * size;
  std::vector<double> means(batches), p99s(batches), batch(size);
  for (std::size_t b = 0; b < batches; ++b) {
    const auto from = x.begin() + static_cast<std::ptrdiff_t>(first + b * size);
    std::copy(from, from + static_cast<std::ptrdiff_t>(size), batch.begin());
    double sum = 0;
    for (double v : batch)
      sum += v;
    means[b] = sum / static_cast<double>(size);
    const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(size))); // nearest rank
    std::nth_element(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(rank - 1), batch.end());
    p99s[b] = batch[rank - 1];
  }
  auto interval = [&](const std::vector<double>& v, double& mean) {
    mean = 0;
    for (double e : v)
      mean += e;
    mean /= static_cast<double>(batches);
    double var = 0;
    for (double e : v)
      var += (e - mean) * (e - mean);
    var /= static_cast<double>(batches - 1);
    const double hw = student_t975(batches - 1) * std::sqrt(var / static_cast<double>(batches));
    return mean > 0 ? hw / mean : INFINITY;
  };
  r.mean_half_width = interval(means, r.mean);
  r.p99_half_width = interval(p99s, r.p99);
  return r;
}

bool RunLength::round_trips_steady(Time from)
{
  const auto first = std::lower_bound(rtt_t_.begin(), rtt_t_.end(), from) - rtt_t_.begin();
  const std::vector<double> since(rtt_.begin() + first, rtt_.end());
  rtt_ci_ = round_trip_interval(since, cfg_.batches, cfg_.quantile_batch);
  return rtt_ci_.mean_half_width <= cfg_.precision && rtt_ci_.p99_half_width <= cfg_.precision;
}

void RunLength::observe(Time now)
{
  dt_.push_back(now - last_t_);
  dd_.push_back(static_cast<double>(total_ - last_d_));
  last_t_ = now;
  last_d_ = total_;
  next_boundary_ = (total_ / chunk_ + 1) * chunk_;
  if (dt_.size() % 5 == 0)
    snaps_.push_back(take(now));
  if (dt_.size() >= next_check_)
    check(now);
  if (!stopped_ && dt_.size() >= cfg_.max_observations)
    merge_pairs();
}

void RunLength::merge_pairs()
{
  const std::size_t n = dt_.size() / 2;
  for (std::size_t i = 0; i < n; ++i) {
    dt_[i] = dt_[2 * i] + dt_[2 * i + 1];
    dd_[i] = dd_[2 * i] + dd_[2 * i + 1];
  }
  dt_.resize(n);
  dd_.resize(n);
  // snaps_[j] follows observation 5j; after the merge that is old 10j.
  std::vector<Snap> kept;
  for (std::size_t j = 0; j < snaps_.size(); j += 2)
    kept.push_back(std::move(snaps_[j]));
  snaps_ = std::move(kept);
  chunk_ *= 2;
  next_boundary_ = (total_ / chunk_ + 1) * chunk_;
  next_check_ = std::max(cfg_.min_observations, (next_check_ + 1) / 2);
}

void RunLength::check(Time now)
{
  const std::size_t n = dt_.size();
  next_check_ = std::max(n + 1, static_cast<std::size_t>(std::ceil(static_cast<double>(n) * 1.1)));
  if (total_ >= cfg_.total_bytes)
    return; // the transfer is over anyway
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = dd_[i] > 0 ? dt_[i] / dd_[i] : 0;
  const std::optional<std::size_t> cut = mser5_cut(x);
  if (!cut) {
    reason_ = RunEnd::NoSteadyState;
    last_ = {};
    return;
  }
  cut_obs_ = *cut;
  last_ = batch_means(dt_, dd_, cut_obs_, cfg_.batches);
  if (last_.batches == 0 || last_.relative_half_width > cfg_.precision) {
    warmup_bytes_ = snaps_.at(cut_obs_ / 5).d;
    reason_ = RunEnd::PrecisionNotMet;
    return;
  }
  // The batches leave out the remainder of the observations (and of the
  // snapshot intervals, for the figures) at the start of the series after
  // the cut. The rates are continued from where both the throughput's and
  // the figures' batches start, so that no byte the statistics did not
  // judge enters the extrapolation (a transient of a count the throughput
  // does not show, such as the rx buffers first posted, left out of the
  // batches would otherwise be extrapolated as steady).
  const std::size_t cut_snap = cut_obs_ / 5;
  const std::size_t intervals = snaps_.size() - 1 - cut_snap;
  base_snap_ = std::max(cut_snap + (intervals >= cfg_.batches ? intervals % cfg_.batches : 0), (last_.first + 4) / 5);
  const Snap& w = snaps_.at(base_snap_);
  warmup_bytes_ = w.d;
  if (!connections_steady(w, cut_snap)) {
    reason_ = RunEnd::UnequalConnections;
    return;
  }
  if (!figures_steady(cut_snap) || !in_flight_steady()) {
    reason_ = RunEnd::FiguresNotSteady;
    return;
  }
  if (cfg_.round_trips && !round_trips_steady(w.t)) {
    reason_ = RunEnd::RoundTripsNotSteady;
    return;
  }
  reason_ = RunEnd::Extrapolated;
  stopped_ = true;
  if (snaps_.back().t == now && snaps_.back().d == total_)
    stop_snap_ = snaps_.back();
  else
    stop_snap_ = take(now);
  if (!shorten_) {
    stop_();
    return;
  }
  shortened_ = true;
  for (std::uint64_t b : shorten_(shares_))
    skipped_ += b;
  if (total_ + skipped_ > cfg_.total_bytes)
    throw std::logic_error("invariant violated: a shortened run leaves out more bytes than it has left");
}

namespace {

// A figure as the quantity that grows with the run, at a snapshot taken at
// time t with d bytes delivered (BytesOver and AsIs figures: none).
std::optional<double> extensive(Scaling s, double value, double t, double d)
{
  switch (s) {
  case Scaling::Total:
    return value;
  case Scaling::PerByte:
    return value * d;
  case Scaling::PerTime:
    return value * t;
  default:
    return std::nullopt;
  }
}

} // namespace

RunLength::Snap RunLength::take(Time now)
{
  Figures f = snapshot_(now, total_);
  if (names_.empty()) {
    for (const auto& entry : f) {
      names_.push_back(entry.first);
      kinds_.push_back(kind_(entry.first));
    }
  }
  Snap s{now, total_, per_conn_, committed_ ? committed_() : total_, {}};
  s.values.reserve(names_.size());
  std::size_t i = 0;
  for (const auto& [name, v] : f) {
    if (i >= names_.size() || name != names_[i])
      throw std::logic_error("run length: the figures changed between snapshots (" + name + ")");
    s.values.push_back(v);
    ++i;
  }
  if (i != names_.size())
    throw std::logic_error("run length: the figures changed between snapshots");
  return s;
}

std::map<std::string, double> figure_scales(const Figures& x, const std::function<FigureKind(const std::string&)>& kind,
                                            const RunLengthConfig& cfg, double one_cpu)
{
  std::map<std::string, FigureKind> kinds;
  std::map<std::string, double> group_sum;
  for (const auto& [name, v] : x) {
    FigureKind k = kind(name);
    if (!k.judged || !extensive(k.scaling, 0, 0, 0))
      continue;
    group_sum[k.group] += std::abs(v);
    kinds.emplace(name, std::move(k));
  }
  std::map<std::string, double> scales;
  // A figure's scale needs its whole's first: a whole is a busy time or the
  // elapsed time, whose own wholes are not figures, so two levels at most.
  std::function<double(const std::string&, int)> scale_of = [&](const std::string& name, int depth) -> double {
    if (auto it = scales.find(name); it != scales.end())
      return it->second;
    const auto k = kinds.find(name);
    if (k == kinds.end() || depth > 4)
      throw std::logic_error("invariant violated: figure '" + name +
                             "' is the whole of another but is not a judged figure of the run (or the wholes loop)");
    const double self = std::abs(x.at(name));
    double floor = 0;
    switch (k->second.whole) {
    case Whole::Itself:
      break;
    case Whole::Figure:
      floor = cfg.part_share * scale_of(k->second.whole_figure, depth + 1);
      break;
    case Whole::OneCpu:
      floor = cfg.part_share * one_cpu;
      break;
    case Whole::Group:
      floor = cfg.group_share * group_sum.at(k->second.group);
      break;
    }
    return scales[name] = std::max(self, floor);
  };
  for (const auto& entry : kinds)
    scale_of(entry.first, 0);
  return scales;
}

std::vector<std::uint64_t> steady_span(const std::vector<std::uint64_t>& room, const std::vector<double>& shares)
{
  if (room.size() != shares.size())
    throw std::logic_error("steady_span: a share for every connection");
  double span = INFINITY;
  for (std::size_t c = 0; c < room.size(); ++c) {
    if (shares[c] < 0)
      throw std::logic_error("steady_span: a negative share");
    if (shares[c] > 0)
      span = std::min(span, static_cast<double>(room[c]) / shares[c]);
  }
  std::vector<std::uint64_t> out(room.size(), 0);
  if (!std::isfinite(span))
    return out;
  for (std::size_t c = 0; c < room.size(); ++c)
    out[c] = std::min(room[c], static_cast<std::uint64_t>(std::floor(span * shares[c])));
  return out;
}

template <class X> BatchMeansResult RunLength::rate_per_byte(std::size_t from_snap, const X& x) const
{
  // Per interval between snapshots: the growth of x, the bytes delivered.
  std::vector<double> dx, dd;
  for (std::size_t j = from_snap + 1; j < snaps_.size(); ++j) {
    dx.push_back(x(snaps_[j]) - x(snaps_[j - 1]));
    dd.push_back(static_cast<double>(snaps_[j].d) - static_cast<double>(snaps_[j - 1].d));
  }
  return batch_means(dx, dd, 0, cfg_.batches);
}

bool RunLength::connections_steady(const Snap& w, std::size_t from_snap)
{
  const std::size_t n = per_conn_.size();
  std::vector<double> since(n);
  double sum = 0;
  for (std::size_t c = 0; c < n; ++c) {
    since[c] = static_cast<double>(per_conn_[c] - w.per_conn[c]);
    sum += since[c];
  }
  if (sum <= 0)
    return false;
  shares_.assign(n, 0);
  for (std::size_t c = 0; c < n; ++c)
    shares_[c] = since[c] / sum;
  if (n == 1)
    return true;
  // Each connection's share of the throughput must be steady: its
  // half-width by batch means over the snapshots since the cut at most
  // figure_tolerance x precision of an equal share. (Shares compared over
  // the whole window alone pass a window in which one connection ended and
  // another sped up.)
  if (snaps_.size() < from_snap + 1 + cfg_.batches)
    return false;
  for (std::size_t c = 0; c < n; ++c) {
    const BatchMeansResult b =
        rate_per_byte(from_snap, [c](const Snap& s) { return static_cast<double>(s.per_conn[c]); });
    if (b.batches == 0)
      return false;
    const double hw = std::isfinite(b.relative_half_width) ? b.relative_half_width * b.mean : INFINITY;
    if (hw > cfg_.figure_tolerance * cfg_.precision / static_cast<double>(n))
      return false;
  }
  // Unequal shares: a shortened run ends as a whole one does (steady_span:
  // the faster connections end first, and the end where the slower go on
  // alone is simulated). A stopped run would continue the shares to the
  // transfer's end as they are: only equal ones (within the precision).
  if (shorten_)
    return true;
  const double mean = sum / static_cast<double>(n);
  return std::all_of(since.begin(), since.end(), [&](double s) { return std::abs(s - mean) <= cfg_.precision * mean; });
}

bool RunLength::in_flight_steady()
{
  if (!committed_)
    return true;
  const Snap &w = snaps_.at(base_snap_), &k = snaps_.back();
  if (k.d <= w.d || k.committed < k.d || w.committed < w.d)
    throw std::logic_error("invariant violated: the writers began fewer bytes than were delivered");
  const double change = std::abs(static_cast<double>(k.committed - k.d) - static_cast<double>(w.committed - w.d));
  const double relative = change / static_cast<double>(k.d - w.d);
  if (relative <= cfg_.figure_tolerance * cfg_.precision)
    return true;
  held_by_ = "bytes_in_flight";
  held_by_half_width_ = relative;
  return false;
}

std::size_t RunLength::index_of(const std::string& name) const
{
  // names_ come from a std::map: sorted.
  const auto it = std::lower_bound(names_.begin(), names_.end(), name);
  if (it == names_.end() || *it != name)
    throw std::logic_error("run length: no figure '" + name + "'");
  return static_cast<std::size_t>(it - names_.begin());
}

bool RunLength::figures_steady(std::size_t from_snap)
{
  if (snaps_.size() < from_snap + 1 + cfg_.batches)
    return false;
  // Each judged figure's steady-state rate per byte and the half-width of
  // its 95% interval, by batch means over the snapshots since the cut.
  Figures rates, half_widths;
  for (std::size_t f = 0; f < names_.size(); ++f) {
    const FigureKind& k = kinds_[f];
    if (!k.judged || !extensive(k.scaling, 0, 0, 0))
      continue;
    const BatchMeansResult b = rate_per_byte(from_snap, [&](const Snap& s) {
      return s.values.empty() ? 0 : *extensive(k.scaling, s.values[f], s.t, static_cast<double>(s.d));
    });
    if (b.batches == 0)
      return false;
    rates[names_[f]] = b.mean;
    half_widths[names_[f]] = std::isfinite(b.relative_half_width) ? b.relative_half_width * std::abs(b.mean) : 0;
  }
  // One CPU busy for the whole run, per byte, in the terms of a CPU
  // percentage's rate (percent x time per byte).
  const Snap &first = snaps_[from_snap], &last = snaps_.back();
  const double one_cpu = 100 * (last.t - first.t) / static_cast<double>(last.d - first.d);
  const std::map<std::string, double> scales = figure_scales(
      rates, [this](const std::string& n) { return kinds_.at(index_of(n)); }, cfg_, one_cpu);
  for (const auto& [name, scale] : scales) {
    const double hw = half_widths.at(name);
    if (hw > cfg_.figure_tolerance * cfg_.precision * scale) {
      held_by_ = name;
      held_by_half_width_ = hw / scale;
      return false;
    }
  }
  return true;
}

Figures RunLength::finish(const Figures& end, Time end_time) const
{
  if (!stopped_)
    return end;
  if (!shortened_)
    return extrapolate();
  if (skipped_ == 0)
    return end; // nothing was left out: the run is a full one
  // The bytes left out are inserted at the stop, at the steady state's
  // rates per byte (from where the batches start, w, to the stop, k).
  const Snap& w = snaps_.at(base_snap_);
  const Snap& k = stop_snap_;
  const double dw = static_cast<double>(w.d), dk = static_cast<double>(k.d);
  if (dk <= dw)
    throw std::logic_error("run length: no bytes between the warm-up cut and the stop");
  const double de = static_cast<double>(total_), skipped = static_cast<double>(skipped_);
  const double r = skipped / (dk - dw); // the bytes left out, in steady-state spans
  const double tt = end_time + (k.t - w.t) * r;
  const double dt = de + skipped;
  Figures out;
  for (std::size_t f = 0; f < names_.size(); ++f) {
    const auto it = end.find(names_[f]);
    if (it == end.end())
      throw std::logic_error("run length: the run's end lacks the figure " + names_[f]);
    const double me = it->second, mk = k.values.at(f);
    const double mw = w.values.empty() ? 0 : w.values.at(f);
    const Scaling scaling = kinds_[f].scaling;
    double v = me;
    if (const auto xe = extensive(scaling, me, end_time, de)) {
      const double x = *xe + (*extensive(scaling, mk, k.t, dk) - *extensive(scaling, mw, w.t, dw)) * r;
      v = scaling == Scaling::PerByte ? x / dt : scaling == Scaling::PerTime ? x / tt : x;
    } else if (scaling == Scaling::BytesOver && me > 0 && mk > 0 && (w.values.empty() || mw > 0)) {
      v = dt / (de / me + (dk / mk - (w.values.empty() ? 0 : dw / mw)) * r);
    }
    out.emplace(names_[f], v);
  }
  return out;
}

Figures RunLength::extrapolate() const
{
  if (!stopped_ || shortened_)
    throw std::logic_error("run length: extrapolate() before the run was stopped, or of a shortened run");
  const Snap& w = snaps_.at(base_snap_);
  const Snap& k = stop_snap_;
  const double dw = static_cast<double>(w.d), dk = static_cast<double>(k.d);
  const double dt = static_cast<double>(cfg_.total_bytes);
  if (dk <= dw)
    throw std::logic_error("run length: no bytes between the warm-up cut and the stop");
  const double r = (dt - dk) / (dk - dw); // the rest of the transfer, in steady-state spans
  const double tw = w.t, tk = k.t, tt = tk + (tk - tw) * r;
  auto grow = [&](double xw, double xk) { return xk + (xk - xw) * r; };
  Figures out;
  for (std::size_t f = 0; f < names_.size(); ++f) {
    const double mk = k.values.at(f);
    const double mw = w.values.empty() ? 0 : w.values.at(f);
    const Scaling scaling = kinds_[f].scaling;
    double v = mk;
    if (const auto xk = extensive(scaling, mk, tk, dk)) {
      // Grown to the transfer's end, then back per byte or per time.
      const double x = grow(*extensive(scaling, mw, tw, dw), *xk);
      v = scaling == Scaling::PerByte ? x / dt : scaling == Scaling::PerTime ? x / tt : x;
    } else if (scaling == Scaling::BytesOver && mk > 0 && (w.values.empty() || mw > 0)) {
      v = dt / grow(w.values.empty() ? 0 : dw / mw, dk / mk);
    }
    out.emplace(names_[f], v);
  }
  return out;
}

Figures RunLength::info() const
{
  Figures f;
  f["run_length.extrapolated"] = stopped_ && (!shortened_ || skipped_ > 0) ? 1 : 0;
  f["run_length.reason"] = static_cast<double>(static_cast<int>(reason_));
  f["run_length.simulated_bytes"] = static_cast<double>(ended_early() ? stop_snap_.d : total_);
  f["run_length.observation_bytes"] = static_cast<double>(chunk_);
  if (reason_ == RunEnd::FiguresNotSteady && !held_by_.empty())
    f["run_length.held_by." + held_by_] = held_by_half_width_;
  if (cfg_.round_trips && std::isfinite(rtt_ci_.mean_half_width)) {
    f["run_length.rtt_mean_half_width"] = rtt_ci_.mean_half_width;
    f["run_length.rtt_p99_half_width"] = rtt_ci_.p99_half_width;
  }
  if (last_.batches > 0) {
    f["run_length.warmup_bytes"] = static_cast<double>(warmup_bytes_);
    f["run_length.batches"] = static_cast<double>(last_.batches);
    f["run_length.half_width"] = last_.relative_half_width;
  }
  return f;
}

Figures RunLength::full_info(std::uint64_t total_bytes)
{
  return {{"run_length.extrapolated", 0},
          {"run_length.reason", static_cast<double>(static_cast<int>(RunEnd::Full))},
          {"run_length.simulated_bytes", static_cast<double>(total_bytes)}};
}

} // namespace vsim
