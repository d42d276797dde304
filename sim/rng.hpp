// Deterministic random streams.
//
// Every stream is seeded by (seed, iteration, component name) only, so a
// component draws the same numbers whatever else runs, and iteration i of a
// point depends on nothing but (seed, i). The generator and the conversion
// to floating point are written out here (not std::*_distribution) so results
// do not depend on the standard library's implementation.
#pragma once

#include <cstdint>
#include <string_view>

namespace vsim {

// SplitMix64 step: used to mix seeds and as the generator itself.
constexpr std::uint64_t splitmix64(std::uint64_t& state)
{
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a of a component name: stable across runs, compilers and platforms.
constexpr std::uint64_t fnv1a(std::string_view s)
{
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

class Rng {
public:
  Rng(std::uint64_t seed, std::uint64_t iteration, std::string_view component)
  {
    std::uint64_t s = seed;
    std::uint64_t a = splitmix64(s);
    s = a ^ iteration;
    std::uint64_t b = splitmix64(s);
    s = b ^ fnv1a(component);
    state_ = splitmix64(s);
  }

  std::uint64_t next() { return splitmix64(state_); }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // A factor uniform in [1 - j, 1 + j].
  double factor(double j) { return 1.0 - j + 2.0 * j * uniform(); }

  // value * U[1 - j, 1 + j], rounded to whole cycles (keeps time sums exact).
  double jitter(double value, double j)
  {
    if (j <= 0 || value <= 0)
      return value;
    double f = factor(j);
    double r = static_cast<double>(static_cast<std::int64_t>(value * f + 0.5));
    return r;
  }

private:
  std::uint64_t state_;
};

// A latency drawn from one component's own stream (value x U[1 - j, 1 + j]
// in whole cycles): each thread owns its stream, so what it draws does not
// depend on the order in which threads run.
class Latency {
public:
  Latency(std::uint64_t seed, std::uint64_t iteration, std::string_view component, double jitter)
      : rng_(seed, iteration, component), j_(jitter)
  {
  }
  double operator()(double cycles) { return rng_.jitter(cycles, j_); }

private:
  Rng rng_;
  double j_;
};

} // namespace vsim
