#include "sim/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vsim {

namespace {
// Bucket index of the values at or below zero (below every positive one).
constexpr std::int64_t kZero = std::numeric_limits<std::int64_t>::min();
} // namespace

std::int64_t Histogram::bucket_of(double v)
{
  if (!(v > 0))
    return kZero;
  int e = 0;
  const double f = std::frexp(v, &e); // v = f 2^e, f in [0.5, 1)
  const auto sub = static_cast<std::int64_t>((2 * f - 1) * kSubBuckets);
  return static_cast<std::int64_t>(e - 1) * kSubBuckets + std::min<std::int64_t>(sub, kSubBuckets - 1);
}

double Histogram::lower(std::int64_t bucket)
{
  if (bucket == kZero)
    return 0;
  const std::int64_t e = bucket >= 0 ? bucket / kSubBuckets : -((-bucket + kSubBuckets - 1) / kSubBuckets);
  const std::int64_t sub = bucket - e * kSubBuckets;
  return std::ldexp(1.0 + static_cast<double>(sub) / kSubBuckets, static_cast<int>(e));
}

double Histogram::upper(std::int64_t bucket)
{
  return bucket == kZero ? 0 : lower(bucket + 1);
}

void Histogram::record(double v)
{
  ++counts_[bucket_of(v)];
  min_ = count_ ? std::min(min_, v) : v;
  max_ = count_ ? std::max(max_, v) : v;
  ++count_;
  sum_ += v;
}

void Histogram::merge(const Histogram& o)
{
  if (!o.count_)
    return;
  for (const auto& [b, n] : o.counts_)
    counts_[b] += n;
  min_ = count_ ? std::min(min_, o.min_) : o.min_;
  max_ = count_ ? std::max(max_, o.max_) : o.max_;
  count_ += o.count_;
  sum_ += o.sum_;
}

double Histogram::quantile(double q) const
{
  if (!count_)
    return 0;
  const auto rank = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(count_, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)))));
  if (rank == count_) // the extremes are known exactly
    return max_;
  if (rank == 1)
    return min_;
  std::uint64_t seen = 0;
  for (const auto& [b, n] : counts_) {
    seen += n;
    if (seen >= rank)
      return std::clamp((lower(b) + upper(b)) / 2, min_, max_);
  }
  return max_;
}

std::vector<Histogram::Bucket> Histogram::buckets() const
{
  std::vector<Bucket> out;
  out.reserve(counts_.size());
  for (const auto& [b, n] : counts_)
    out.push_back(Bucket{lower(b), upper(b), n});
  return out;
}

Histogram Histogram::from_counts(const std::map<std::int64_t, std::uint64_t>& counts, double min, double max,
                                 double sum)
{
  Histogram h;
  h.counts_ = counts;
  for (const auto& [b, n] : counts)
    h.count_ += n;
  h.min_ = min;
  h.max_ = max;
  h.sum_ = sum;
  return h;
}

} // namespace vsim
