// A histogram of positive values with log-linear buckets (as HdrHistogram):
// each power of two [2^e, 2^(e+1)) is cut into kSubBuckets equal buckets, so
// a bucket is at most 1/kSubBuckets of its lower bound wide and the value
// reported for it (its midpoint, kept within the recorded minimum and
// maximum) is within half that, 0.4%, of any value recorded in it. Values
// at or below zero share one bucket [0, 0]. Buckets are kept in a sorted
// map: iteration order, merges and results depend on the values only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vsim {

class Histogram {
public:
  static constexpr int kSubBuckets = 128;

  void record(double v);
  // Adds every value recorded in `o` (as if each had been recorded here).
  void merge(const Histogram& o);

  std::uint64_t count() const { return count_; }
  double min() const { return min_; }
  double max() const { return max_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  // The nearest-rank q-quantile (0 < q <= 1): the value of rank
  // ceil(q x count) in sorted order, as its bucket's midpoint (within the
  // recorded minimum and maximum; ranks 1 and count: the minimum and
  // maximum themselves). 0 when empty.
  double quantile(double q) const;

  // The bucket a value falls in, and that bucket's bounds [lower, upper).
  static std::int64_t bucket_of(double v);
  static double lower(std::int64_t bucket);
  static double upper(std::int64_t bucket);

  struct Bucket {
    double lower, upper;
    std::uint64_t count;
  };
  // The non-empty buckets in increasing order.
  std::vector<Bucket> buckets() const;
  const std::map<std::int64_t, std::uint64_t>& counts() const { return counts_; }
  // Rebuilt from bucket counts (bucket_of indices), with the recorded
  // extremes and sum.
  static Histogram from_counts(const std::map<std::int64_t, std::uint64_t>& counts, double min, double max, double sum);
  double sum() const { return sum_; }

private:
  std::map<std::int64_t, std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double min_ = 0, max_ = 0, sum_ = 0;
};

} // namespace vsim
