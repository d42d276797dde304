// sim/histogram.hpp: log-linear buckets, merges and quantiles against the
// exact order statistics of what was recorded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/histogram.hpp"
#include "sim/rng.hpp"

using vsim::Histogram;

TEST_CASE("histogram buckets: each power of two in 128 equal buckets, contiguous, at most 1% wide", "[histogram]")
{
  CHECK(Histogram::lower(Histogram::bucket_of(1.0)) == 1.0);
  CHECK(Histogram::upper(Histogram::bucket_of(1.0)) == 1.0 + 1.0 / 128);
  CHECK(Histogram::bucket_of(2.0) == Histogram::bucket_of(1.0) + 128);
  CHECK(Histogram::lower(Histogram::bucket_of(0.75)) == 0.75);
  CHECK(Histogram::bucket_of(0.0) < Histogram::bucket_of(1e-300));
  CHECK(Histogram::lower(Histogram::bucket_of(-3.0)) == 0);
  for (double v : {1e-6, 0.3, 1.0, 1.9999, 7.25, 12.345, 1000.5, 65536.0, 3.3e7}) {
    INFO(v);
    const auto b = Histogram::bucket_of(v);
    CHECK(Histogram::lower(b) <= v);
    CHECK(v < Histogram::upper(b));
    CHECK(Histogram::upper(b) == Histogram::lower(b + 1));
    CHECK((Histogram::upper(b) - Histogram::lower(b)) / Histogram::lower(b) <= 1.0 / 128);
  }
}

TEST_CASE("histogram quantiles are within 1% of the exact order statistics", "[histogram]")
{
  vsim::Rng rng(3, 0, "histogram");
  std::vector<double> x;
  Histogram h;
  for (int i = 0; i < 5000; ++i) { // a long tail: 5 to 500
    const double v = 5 * std::exp(4.6 * rng.uniform() * rng.uniform());
    x.push_back(v);
    h.record(v);
  }
  std::sort(x.begin(), x.end());
  for (double q : {0.001, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    INFO(q);
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(x.size())));
    const double exact = x[rank - 1];
    CHECK(std::abs(h.quantile(q) - exact) <= 0.01 * exact);
  }
  CHECK(h.count() == 5000);
  CHECK(h.min() == x.front());
  CHECK(h.max() == x.back());
  CHECK(h.quantile(1.0) == x.back());
}

TEST_CASE("merged histograms answer as one that recorded everything", "[histogram]")
{
  Histogram a, b, all;
  for (int i = 1; i <= 300; ++i) {
    const double v = 0.37 * i * i;
    (i % 3 ? a : b).record(v);
    all.record(v);
  }
  Histogram m = a;
  m.merge(b);
  CHECK(m.count() == all.count());
  CHECK(m.counts() == all.counts());
  CHECK(m.min() == all.min());
  CHECK(m.max() == all.max());
  CHECK(m.mean() == Approx(all.mean()).epsilon(1e-12));
  for (double q : {0.01, 0.5, 0.99})
    CHECK(m.quantile(q) == all.quantile(q));
  Histogram back = Histogram::from_counts(m.counts(), m.min(), m.max(), m.sum());
  CHECK(back.quantile(0.9) == m.quantile(0.9));
  CHECK(Histogram().quantile(0.5) == 0);
}
