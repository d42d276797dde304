// A timeline of one simulation, in the Trace Event Format that Perfetto
// (ui.perfetto.dev) and chrome://tracing open: what ran on each CPU (the
// engine's steps: a thread's work, or an interrupt context's), the wake-ups
// between threads as flow arrows, named instants a transport marks at its
// kernel functions (signals, kicks, interrupts, credit updates) and counter
// tracks (ring and queue levels, credit). docs/trace.md says how to read it.
//
// The recorder only observes: it draws no random numbers and never changes
// the order of events, so a traced run gives exactly the figures of an
// untraced one. A World without a recorder (the normal case) pays one null
// check per hook. It knows no transport: the names come from the callers.
//
// Only what happens inside the window [start, end) of simulated time is
// kept (slices are clipped to it), and at most `cap` events: once the cap
// is reached the recorder stops at the engine's time then (the cut), keeps
// the slices already running (clipped to the cut) and says so in the
// trace's metadata.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cpu.hpp"
#include "sim/time.hpp"

namespace vsim {

class Trace {
public:
  // start, end: the window in cycles; cycles_per_us: the platform clock.
  Trace(Time start, Time end, double cycles_per_us, std::size_t cap);

  // The engine's clock (World::set_trace binds it), for the cut at the cap.
  void bind_clock(const Time* now) { now_ = now; }
  // Names the tracks: one per CPU, grouped by side.
  void add_cpu(const Cpu& cpu);

  // What ran on cpu in [start, end): a thread's step (its name and the
  // category of most of its cycles, cycles per category in args) or an
  // interrupt context's piece.
  void slice(const Cpu& cpu, Time start, Time end, const std::string& thread, Cat cat, const CpuTime& cycles);
  // A named point on cpu's track: the kernel function `name` ran at t in
  // thread `thread` (arg: a figure worth showing, e.g. bytes or credit).
  void instant(const Cpu& cpu, Time t, std::string_view name, const std::string& thread);
  void instant(const Cpu& cpu, Time t, std::string_view name, const std::string& thread, std::string_view arg,
               double value);
  // Counter `name` (e.g. "vmbus_ring0 guest_to_host") is at `value`, in
  // `unit` (its series: "bytes", "chains"), from t on. Perfetto names the
  // track "<name> <unit>".
  void counter(const std::string& name, const std::string& unit, Time t, double value);
  // A span of time on a named track of the "round trips" process (not a
  // CPU's: what a request/response went through, sim/round_trips.hpp):
  // [start, end) named `name`, category `cat`. Tracks are made on first use,
  // in that order; spans on one track must nest.
  void span(const std::string& track, Time start, Time end, std::string name, std::string cat,
            nlohmann::ordered_json args);
  // Thread `woken` woken by a thread on `from` at t0 resumes on `to` at t1:
  // a flow arrow between zero-length `wake_up` slices at both ends.
  void wakeup(const Cpu& from, Time t0, const Cpu& to, Time t1, const std::string& woken);

  // When the run ended (World::run sets it): a window starting at or after
  // it shows nothing.
  void set_run_end(Time t) { run_end_ = t; }
  Time run_end() const { return run_end_; }
  bool capped() const { return capped_; }

  // The whole trace: {"traceEvents": [...], "displayTimeUnit": "ns",
  // "metadata": {...}} with `metadata` merged into the metadata object.
  // Events sorted by time (then longer slices first, so nested ones follow
  // their parent), timestamps in microseconds of simulated time.
  nlohmann::ordered_json to_json(const nlohmann::ordered_json& metadata) const;

private:
  struct Event {
    char ph;      // X, i, C, s, f
    Time ts, dur; // cycles
    int pid, tid;
    std::string name;
    std::string cat;
    nlohmann::ordered_json args;
    std::uint64_t id; // flows
    std::uint64_t seq;
  };
  bool keep(Time t) const { return t >= start_ && t < end_ && !capped_; }
  // A slice [start, end) of the window (a slice ends up recorded when it
  // ends: after the cut only one already running at it).
  bool keep_slice(Time start, Time end) const;
  void push(Event e);
  static int pid_of(const Cpu& cpu) { return cpu.side() == Side::Guest ? 1 : 2; }
  static int tid_of(const Cpu& cpu) { return cpu.index() + 1; }

  Time start_, end_;
  double per_us_;
  std::size_t cap_;
  const Time* now_ = nullptr;
  bool capped_ = false;
  Time cut_ = 0;
  Time run_end_ = 0;
  std::uint64_t seq_ = 0, flows_ = 0;
  std::vector<Event> events_;
  struct Track {
    int pid, tid;
    std::string name;
  };
  std::vector<Track> cpus_;              // one per CPU, in the order added
  std::vector<std::string> span_tracks_; // the round trips' tracks, tid = kRoundTripsTid + position
  std::map<std::string, std::pair<std::string, double>> before_; // each counter's unit and level as the window opens
};

} // namespace vsim
