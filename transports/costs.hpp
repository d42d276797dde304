// How the model's costs are declared: each cost parameter (`costs.<name>`)
// once, with its unit, accepted range, meaning, the transport that charges
// it, its physically plausible range with the basis and sources
// (docs/cost-sources.md), and the field of the transport's cost struct it
// fills. The costs both transports charge are declared here
// (transports/costs.cpp); each transport declares its own in its costs.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/params.hpp"
#include "sim/rng.hpp"

namespace vsim {

struct CostDecl {
  const char* name;
  const char* unit; // "cycles" of the platform clock (CPU time), "cycles latency" (time no CPU of the model
                    // spends), "bytes/cycle" (copy bandwidth), ...
  double min;
  double max;
  const char* doc;
  const char* scope; // the transport whose algorithms charge it ("" = both)
  // The physically plausible range on the modelled hardware (2017-2019
  // two-socket Xeon servers at the 2.5 GHz clock), what it rests on, and its
  // sources ([Rn]: docs/cost-sources.md). Calibration searches only inside
  // it; a profile value outside it is reported (describe platforms).
  double plausible_min;
  double plausible_max;
  const char* basis;
  const char* sources;
  // The value a profile that does not give the cost has (a mechanism added
  // after profiles were written: its "off"); NaN: every profile must give it.
  double absent = std::numeric_limits<double>::quiet_NaN();
};

// An inclusive range of a cost table's entry.
struct CostRange {
  double min;
  double max;
};

// A cost table's entry: the declaration and the field of C it fills, one
// designated initialiser per field; VSIM_COST_NAME writes the name and the
// field at once, so that they cannot differ:
//   {VSIM_COST_NAME(Costs, guest_send_syscall),
//    .unit = "cycles",
//    .range = {0, 1e7},
//    .doc = "...",
//    .scope = "hv_sock",
//    .plausible = {300, 3000},
//    .basis = "...",
//    .sources = "[R1], [R2]"},
template <typename C> struct CostField {
  const char* name;
  double C::*field;
  const char* unit; // as CostDecl::unit
  CostRange range;  // accepted
  const char* doc;
  const char* scope;   // the transport whose algorithms charge it ("" = both)
  CostRange plausible; // physically plausible (CostDecl::plausible_min/max)
  const char* basis;
  const char* sources;
  double absent = std::numeric_limits<double>::quiet_NaN(); // CostDecl::absent

  CostDecl decl() const
  {
    return {name, unit, range.min, range.max, doc, scope, plausible.min, plausible.max, basis, sources, absent};
  }
};
// The name and field of a table's entry for C's field `n`.
#define VSIM_COST_NAME(C, n) .name = #n, .field = &C::n

// Costs that stand for the same physics (docs/cost-sources.md, "Ties"): in
// a profile of `transport`, every member has one value, inside the
// plausible range of the situation they share (which may be narrower than a
// member's own range, where the member is declared for other transports
// too). `vsocksim calibrate` fits a tie as one cost, and `describe
// platforms` says which ties a profile keeps.
struct CostTie {
  const char* name;      // e.g. "copy_remote"
  const char* transport; // the transport whose profiles it binds
  std::vector<std::string> members;
  CostRange plausible; // the situation's range, in the members' unit
  const char* doc;     // what the members have in common
  const char* basis;   // why they are the same physics, and the range
  const char* sources; // [Rn]: docs/cost-sources.md
};

// How a profile's values stand to a tie: kept (every member present, one
// value inside the situation's range), or why not.
struct TieState {
  const CostTie* tie = nullptr;
  bool kept = false;
  std::string why; // "" when kept: "values differ: a=1, b=2" / "x outside the situation's range 2.5 .. 16"
};

// The costs both transports charge; each transport's cost struct derives
// from it.
struct SharedCosts {
  double clock_ghz, guest_user_per_call, guest_copy_fixed, guest_copy_bytes_per_cycle, guest_wakeup_latency,
      guest_context_switch, host_wakeup_latency, latency_jitter, iteration_jitter, guest_iteration_jitter;
  // What spreads a round trip (issue 53): each side's scheduler tick (HZ,
  // the cost of one), the host cores' idle states (exit latency, target
  // residency) for the menu governor (sim/cpu.hpp).
  double guest_tick_hz, guest_tick, host_tick_hz, host_tick, host_idle_c1_exit, host_idle_c1e_exit,
      host_idle_c1e_residency, host_idle_c6_exit, host_idle_c6_residency;
};
const std::vector<CostField<SharedCosts>>& shared_costs();

// A transport's cost struct C (derived from SharedCosts) from the resolved
// `costs.*` parameters: the shared table, then the transport's own.
template <typename C> C fill_costs(const Params& p, const std::vector<CostField<C>>& own)
{
  C k{};
  for (const auto& f : shared_costs())
    k.*static_cast<double C::*>(f.field) = p.number(std::string("costs.") + f.name);
  // A cost of another transport (a table two transports share) stays 0.
  const std::string transport = p.has("transport") ? p.text("transport") : std::string();
  for (const auto& f : own)
    if (transport.empty() || scope_applies(f.scope, transport))
      k.*(f.field) = p.number(std::string("costs.") + f.name);
  return k;
}

// Per-iteration variability of one side: every cost of `table` whose name
// starts with `prefix` scaled by f, CPU costs ("cycles") rounded to whole
// cycles and copy bandwidths ("bytes/cycle") divided by it; latencies are
// left alone. Derived from the declarations, so a cost added to the side is
// scaled without a list to keep.
template <typename C>
void scale_side_costs(C& k, const std::vector<CostField<C>>& table, std::string_view prefix, double f)
{
  for (const auto& e : table) {
    if (std::string_view(e.name).substr(0, prefix.size()) != prefix)
      continue;
    const std::string_view unit = e.unit;
    if (unit == "cycles")
      k.*(e.field) = std::round(k.*(e.field) * f);
    else if (unit == "bytes/cycle")
      k.*(e.field) /= f;
  }
}

// The per-iteration variability of both sides, for a transport's costs `k`
// (table: its own costs): the host's CPU costs (own, named host_prefix...)
// scaled by a factor drawn in [1-iteration_jitter, 1+iteration_jitter] from
// the stream "host_speed", the guest's (own, named guest_prefix..., and the
// shared guest_*) by one drawn with guest_iteration_jitter from "guest_speed".
template <typename C>
void apply_iteration_jitter(C& k, const std::vector<CostField<C>>& table, std::string_view host_prefix,
                            std::string_view guest_prefix, std::uint64_t seed, std::uint32_t iteration)
{
  scale_side_costs(k, table, host_prefix, Rng(seed, iteration, "host_speed").factor(k.iteration_jitter));
  const double g = Rng(seed, iteration, "guest_speed").factor(k.guest_iteration_jitter);
  scale_side_costs(k, table, guest_prefix, g);
  scale_side_costs(static_cast<SharedCosts&>(k), shared_costs(), "guest_", g);
}

template <typename C> std::vector<CostDecl> decls_of(const std::vector<CostField<C>>& table)
{
  std::vector<CostDecl> out;
  for (const auto& f : table)
    out.push_back(f.decl());
  return out;
}

} // namespace vsim
