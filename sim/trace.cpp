#include "sim/trace.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace vsim {

namespace {
constexpr int kQueuesPid = 3; // counter tracks: rings, queues, credit (shared by both sides)
// Their events' tid: Perfetto reads tid 0 as "the pid", and a CPU track's tid
// (its index + 1) must not be taken by another process.
constexpr int kQueuesTid = 9999;
constexpr int kRoundTripsPid = 4;    // round trips and their stages, a track per connection (sim/round_trips.hpp)
constexpr int kRoundTripsTid = 9001; // their first track's tid (no CPU's)
} // namespace

Trace::Trace(Time start, Time end, double cycles_per_us, std::size_t cap)
    : start_(start), end_(end), per_us_(cycles_per_us), cap_(cap)
{
  if (!(end > start) || !(cycles_per_us > 0) || cap == 0)
    throw std::invalid_argument("Trace: needs start < end, a positive clock and a positive cap");
}

void Trace::add_cpu(const Cpu& cpu)
{
  cpus_.push_back(Track{pid_of(cpu), tid_of(cpu), cpu.name()});
}

void Trace::push(Event e)
{
  e.seq = seq_++;
  events_.push_back(std::move(e));
  if (!capped_ && events_.size() >= cap_) {
    capped_ = true;
    cut_ = now_ ? *now_ : events_.back().ts;
  }
}

bool Trace::keep_slice(Time start, Time end) const
{
  // Slices are recorded when they end (a thread's, a round trip's) or when
  // registered (an interrupt's): after the cut, only those already running
  // at it.
  const Time last = capped_ ? std::min(cut_, end_) : end_;
  return end > start && end > start_ && start < last;
}

void Trace::slice(const Cpu& cpu, Time start, Time end, const std::string& thread, Cat cat, const CpuTime& cycles)
{
  if (!keep_slice(start, end))
    return;
  nlohmann::ordered_json args = nlohmann::ordered_json::object();
  for (int c = 0; c < kCats; ++c)
    if (const double v = cycles.cycles[static_cast<std::size_t>(c)]; v > 0)
      args[std::string(to_string(static_cast<Cat>(c))) + "_cycles"] = v;
  push(Event{'X', start, end - start, pid_of(cpu), tid_of(cpu), thread, to_string(cat), std::move(args), 0, 0});
}

void Trace::instant(const Cpu& cpu, Time t, std::string_view name, const std::string& thread)
{
  if (!keep(t))
    return;
  push(Event{'i', t, 0, pid_of(cpu), tid_of(cpu), std::string(name), "kernel", {{"thread", thread}}, 0, 0});
}

void Trace::instant(const Cpu& cpu, Time t, std::string_view name, const std::string& thread, std::string_view arg,
                    double value)
{
  if (!keep(t))
    return;
  push(Event{'i',
             t,
             0,
             pid_of(cpu),
             tid_of(cpu),
             std::string(name),
             "kernel",
             {{"thread", thread}, {std::string(arg), value}},
             0,
             0});
}

void Trace::counter(const std::string& name, const std::string& unit, Time t, double value)
{
  if (t < start_) {
    before_[name] = {unit, value};
    return;
  }
  if (!keep(t))
    return;
  push(Event{'C', t, 0, kQueuesPid, kQueuesTid, name, "queue", {{unit, value}}, 0, 0});
}

void Trace::span(const std::string& track, Time start, Time end, std::string name, std::string cat,
                 nlohmann::ordered_json args)
{
  auto it = std::find(span_tracks_.begin(), span_tracks_.end(), track);
  if (it == span_tracks_.end())
    it = span_tracks_.insert(span_tracks_.end(), track);
  if (!keep_slice(start, end))
    return;
  const int tid = kRoundTripsTid + static_cast<int>(it - span_tracks_.begin());
  push(Event{'X', start, end - start, kRoundTripsPid, tid, std::move(name), std::move(cat), std::move(args), 0, 0});
}

void Trace::wakeup(const Cpu& from, Time t0, const Cpu& to, Time t1, const std::string& woken)
{
  if (!keep(t0) || !keep(t1))
    return;
  const std::uint64_t id = ++flows_;
  // try_to_wake_up: the arrow from the waker's CPU to where the woken runs,
  // between two zero-length slices that carry it (bind_id, flow_out and
  // flow_in: each end bound to its own slice, so viewers never have to
  // guess which slice an arrow belongs to; a waker usually acts just as
  // its step ends, where a flow event would find no enclosing slice).
  push(Event{'s', t0, 0, pid_of(from), tid_of(from), "wake_up", "wakeup", {{"woken", woken}}, id, 0});
  push(Event{'f', t1, 0, pid_of(to), tid_of(to), "wake_up", "wakeup", {{"woken", woken}}, id, 0});
}

nlohmann::ordered_json Trace::to_json(const nlohmann::ordered_json& metadata) const
{
  using json = nlohmann::ordered_json;
  const Time last = capped_ ? std::min(cut_, end_) : end_;
  // Whole nanoseconds, so a slice nested in another ends within it however
  // the microseconds print.
  auto ns = [&](Time t) { return std::llround(t / per_us_ * 1e3); };
  auto us = [&](Time t) { return static_cast<double>(ns(t)) / 1e3; };

  json events = json::array();
  // Process metadata on a track of that process (Perfetto reads tid 0 as
  // the pid, which may be another process's CPU track).
  const char* sides[] = {"guest", "host"};
  for (int pid : {1, 2}) {
    int tid = kQueuesTid + pid; // a side without CPUs
    for (const Track& c : cpus_)
      if (c.pid == pid) {
        tid = c.tid;
        break;
      }
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", sides[pid - 1]}}}});
    events.push_back(
        {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", pid}}}});
  }
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", kQueuesPid},
                    {"tid", kQueuesTid},
                    {"args", {{"name", "rings, queues and credit"}}}});
  events.push_back({{"ph", "M"},
                    {"name", "process_sort_index"},
                    {"pid", kQueuesPid},
                    {"tid", kQueuesTid},
                    {"args", {{"sort_index", kQueuesPid}}}});
  for (const Track& c : cpus_) {
    events.push_back(
        {{"ph", "M"}, {"name", "thread_name"}, {"pid", c.pid}, {"tid", c.tid}, {"args", {{"name", c.name}}}});
    events.push_back({{"ph", "M"},
                      {"name", "thread_sort_index"},
                      {"pid", c.pid},
                      {"tid", c.tid},
                      {"args", {{"sort_index", c.tid}}}});
  }
  events.push_back(
      {{"ph", "M"}, {"name", "thread_name"}, {"pid", kQueuesPid}, {"tid", kQueuesTid}, {"args", {{"name", "levels"}}}});
  if (!span_tracks_.empty()) { // the round trips, above the CPUs
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", kRoundTripsPid},
                      {"tid", kRoundTripsTid},
                      {"args", {{"name", "round trips"}}}});
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", kRoundTripsPid},
                      {"tid", kRoundTripsTid},
                      {"args", {{"sort_index", 0}}}});
    for (std::size_t i = 0; i < span_tracks_.size(); ++i) {
      const int tid = kRoundTripsTid + static_cast<int>(i);
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", kRoundTripsPid},
                        {"tid", tid},
                        {"args", {{"name", span_tracks_[i]}}}});
      events.push_back({{"ph", "M"},
                        {"name", "thread_sort_index"},
                        {"pid", kRoundTripsPid},
                        {"tid", tid},
                        {"args", {{"sort_index", i}}}});
    }
  }

  // Each counter's level as the window opens.
  for (const auto& [name, level] : before_)
    events.push_back({{"ph", "C"},
                      {"name", name},
                      {"cat", "queue"},
                      {"pid", kQueuesPid},
                      {"tid", kQueuesTid},
                      {"ts", us(start_)},
                      {"args", {{level.first, level.second}}}});

  // What starts at or after the window's end once written in whole
  // nanoseconds (the end rounds as they do) is outside it; flows whose end
  // falls past the cut go, with their start.
  auto inside = [&](Time t) { return t < last && ns(t) < ns(last); };
  std::set<std::uint64_t> dropped;
  for (const Event& e : events_)
    if (e.ph == 'f' && !inside(e.ts))
      dropped.insert(e.id);
  std::vector<const Event*> order;
  for (const Event& e : events_)
    if (e.ph == 'X' ? inside(std::max(e.ts, start_)) : (inside(e.ts) && !dropped.count(e.id)))
      order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [&](const Event* a, const Event* b) {
    const Time sa = std::max(a->ts, start_), sb = std::max(b->ts, start_);
    if (sa != sb)
      return sa < sb;
    const Time ea = a->ph == 'X' ? std::min(a->ts + a->dur, last) : sa;
    const Time eb = b->ph == 'X' ? std::min(b->ts + b->dur, last) : sb;
    if (ea != eb)
      return ea > eb; // enclosing slices first
    return a->seq < b->seq;
  });
  for (const Event* e : order) {
    const bool flow = e->ph == 's' || e->ph == 'f';
    json j = {{"ph", flow ? std::string("X") : std::string(1, e->ph)},
              {"name", e->name},
              {"cat", e->cat},
              {"pid", e->pid},
              {"tid", e->tid}};
    if (e->ph == 'X') {
      const Time s = std::max(e->ts, start_), end = std::min(e->ts + e->dur, last);
      j["ts"] = us(s);
      j["dur"] = static_cast<double>(ns(end) - ns(s)) / 1e3;
    } else {
      j["ts"] = us(e->ts);
    }
    if (e->ph == 'i')
      j["s"] = "t";
    if (flow) {
      j["ts"] = us(e->ts);
      j["dur"] = 0.0;
      j["bind_id"] = e->id;
      j[e->ph == 's' ? "flow_out" : "flow_in"] = true;
    }
    j["args"] = e->args;
    events.push_back(std::move(j));
  }

  json meta = metadata;
  meta["window_start_us"] = us(start_);
  meta["window_end_us"] = us(last);
  meta["events"] = events_.size();
  meta["capped"] = capped_;
  if (capped_)
    meta["note"] = "the event cap was reached: the trace stops at window_end_us, before the window asked for";
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}, {"metadata", std::move(meta)}};
}

} // namespace vsim
