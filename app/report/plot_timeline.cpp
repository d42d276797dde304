// `vsocksim plot --timeline TRACE.json`: the trace of `run --trace` drawn
// with gnuplot (app/report/plot.hpp, docs/trace.md).
#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/report/plot.hpp"
#include "app/report/plot_support.hpp"
#include "app/run/output_dir.hpp"

namespace fs = std::filesystem;

using json = nlohmann::ordered_json;

namespace vsim::app {

namespace {

constexpr long long kRoundTripsPid = 4; // the round trips' tracks (sim/trace.cpp)

using namespace plotting;

// The trace of `run --trace`, parsed: its CPU tracks in order, and what the
// picture needs of its events. InputError when it is not such a trace.
struct Timeline {
  double start = 0, end = 0;                                                 // the window, us
  std::vector<std::pair<std::pair<long long, long long>, std::string>> rows; // (pid, tid) -> "guest vcpu0"
  struct Slice {
    double ts, dur;
    long long row;
    std::string thread, cat; // a round trip's: its name ("round trip", or the stage's) and round_trip or stage
    bool round_trip;         // on a round trips' track (sim/round_trips.hpp), not a CPU's
  };
  std::vector<Slice> slices;
  std::vector<std::pair<double, long long>> instants; // (ts, row)
  // Wake-up arrows by bind_id: (ts, row) of the waker's end, then the woken's.
  std::map<long long, std::array<std::pair<double, long long>, 2>> wakeups;
  std::map<std::string, std::vector<std::pair<double, double>>> counters;
  std::string title;
};

Timeline read_timeline(const std::string& path)
{
  const json t = read_json(path, "trace");
  const json meta = t.is_object() ? t.value("metadata", json::object()) : json::object();
  if (!t.is_object() || !t.contains("traceEvents") || !t["traceEvents"].is_array() ||
      !meta.contains("window_start_us") || !meta.contains("window_end_us"))
    throw InputError(fmt::format("{}: error: not a trace of `vsocksim run --trace` (traceEvents and the window in "
                                 "its metadata)",
                                 path));
  Timeline tl;
  tl.start = meta["window_start_us"].get<double>();
  tl.end = meta["window_end_us"].get<double>();
  std::string label;
  const json labels = meta.value("label", json::object()); // items() must not outlive it
  std::size_t line = 0;                                    // the swept values, in lines of about 110 characters
  for (const auto& [k, v] : labels.items()) {
    const std::string item = k + "=" + v.get<std::string>();
    if (line > 0 && line + item.size() > 110) {
      label += ",\\n";
      line = 0;
    } else if (line > 0) {
      label += ", ";
    }
    label += item;
    line += item.size() + 2;
  }
  tl.title = fmt::format("{} point {} iteration {}{}: {} {}, {:.1f} to {:.1f} us of simulated time\\n{}",
                         meta.value("experiment", ""), meta.value("point", 0), meta.value("iteration", 0),
                         meta.value("capped", false) ? " [capped]" : "", meta.value("transport", ""),
                         meta.value("direction", ""), tl.start, tl.end, label);
  std::map<long long, std::string> processes;
  std::map<std::pair<long long, long long>, long long> row_of;
  try {
    for (const json& e : t["traceEvents"])
      if (e.at("ph") == "M" && e.at("name") == "process_name")
        processes[e.at("pid").get<long long>()] = e.at("args").at("name").get<std::string>();
    // The CPUs of each side, and the round trips' tracks (named after
    // their initiator), on top.
    for (const json& e : t["traceEvents"])
      if (e.at("ph") == "M" && e.at("name") == "thread_name" &&
          (e.at("pid") == 1 || e.at("pid") == 2 || e.at("pid") == kRoundTripsPid)) {
        const auto key = std::make_pair(e.at("pid").get<long long>(), e.at("tid").get<long long>());
        row_of[key] = -1;
        const std::string name = e.at("args").at("name").get<std::string>();
        // "linux_app0 round trips" in two lines: the margin is a CPU name's.
        const std::size_t cut = name.rfind(" round trips");
        tl.rows.emplace_back(key, key.first != kRoundTripsPid ? processes[key.first] + " " + name
                                  : cut == std::string::npos  ? name
                                                              : name.substr(0, cut) + "\n" + name.substr(cut + 1));
      }
    // CPUs with nothing in the window are left out.
    std::set<std::pair<long long, long long>> busy;
    for (const json& e : t["traceEvents"])
      if (e.at("ph") == "X" || e.at("ph") == "i")
        busy.insert({e.at("pid").get<long long>(), e.at("tid").get<long long>()});
    std::erase_if(tl.rows, [&](const auto& r) { return !busy.count(r.first); });
    std::sort(tl.rows.begin(), tl.rows.end(), [](const auto& a, const auto& b) {
      auto order = [](const auto& r) {
        return std::make_pair(r.first.first == kRoundTripsPid ? 0 : r.first.first, r.first.second);
      };
      return order(a) < order(b);
    });
    for (std::size_t i = 0; i < tl.rows.size(); ++i) // guest on top
      row_of[tl.rows[i].first] = static_cast<long long>(tl.rows.size() - 1 - i);
    for (const json& e : t["traceEvents"]) {
      const std::string ph = e.at("ph");
      if (ph == "C") { // a series per argument, "<name> <key>" as Perfetto names it
        for (const auto& [k, v] : e.at("args").items())
          tl.counters[e.at("name").get<std::string>() + " " + k].emplace_back(e.at("ts").get<double>(),
                                                                              v.get<double>());
        continue;
      }
      if (ph != "X" && ph != "i")
        continue;
      auto row = row_of.find({e.at("pid").get<long long>(), e.at("tid").get<long long>()});
      if (row == row_of.end() || row->second < 0)
        throw InputError(fmt::format("{}: error: an event on a track no thread_name names: {}", path, e.dump()));
      if (ph == "X" && e.contains("bind_id"))
        tl.wakeups[e.at("bind_id").get<long long>()][e.value("flow_out", false) ? 0 : 1] = {e.at("ts").get<double>(),
                                                                                            row->second};
      else if (ph == "X")
        tl.slices.push_back({e.at("ts").get<double>(), e.at("dur").get<double>(), row->second,
                             e.at("name").get<std::string>(), e.at("cat").get<std::string>(),
                             e.at("pid") == kRoundTripsPid});
      else
        tl.instants.emplace_back(e.at("ts").get<double>(), row->second);
    }
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: error: malformed trace event: {}", path, e.what()));
  }
  if (tl.rows.empty())
    throw InputError(fmt::format("{}: error: no CPU ran anything in the trace's window", path));
  return tl;
}

// The figure(s) `plot --timeline` writes: OUT.png or OUT.svg, that figure;
// otherwise OUT is the stem of both. InputError when OUT's directory does
// not exist.
struct TimelineOutput {
  std::string stem;
  std::vector<std::string> exts = {"svg", "png"};
};
TimelineOutput timeline_output(const std::string& out)
{
  TimelineOutput o{out};
  for (const char* ext : {".svg", ".png"})
    if (out.ends_with(ext)) {
      o.stem = out.substr(0, out.size() - 4);
      o.exts = {ext + 1};
    }
  const fs::path dir = fs::absolute(o.stem).parent_path();
  if (!fs::is_directory(dir))
    throw InputError(fmt::format("--output '{}': error: directory '{}' does not exist", out, dir.string()));
  return o;
}

// The round trips' stages (Tableau 10).
const std::array<std::string, 10> kStageColours = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
const std::array<std::string, 4> kTimelineCats = {"user", "sys", "irq", "hypervisor"};
const std::array<std::string, 4> kTimelineCatColours = {"#c8c8c8", "#555555", "#d62728", "#000000"};
const std::array<std::string, 8> kTimelineColours = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1",
                                                     "#edc948", "#76b7b2", "#ff9da7", "#9c755f"};

// The data file of a timeline: one block per thread, category, the instants
// and each counter (only non-empty ones: gnuplot's `index` does not count
// empty blocks).
struct TimelineData {
  std::string path, text;
  int blocks = 0;
  // Adds a block; its index, or -1 when `lines` is empty.
  int block(const std::string& comment, const std::string& lines)
  {
    if (lines.empty())
      return -1;
    text += "# " + comment + "\n" + lines + "\n\n";
    return blocks++;
  }
};

// Threads in order of appearance, interrupt contexts (irq_like) last: drawn
// over the work they preempt.
std::vector<std::string> thread_order(const Timeline& tl, std::set<std::string>& irq_like)
{
  std::vector<std::string> threads;
  for (const auto& s : tl.slices) {
    if (s.round_trip)
      continue;
    if (std::find(threads.begin(), threads.end(), s.thread) == threads.end())
      threads.push_back(s.thread);
    if (s.cat == "irq" || s.cat == "hypervisor")
      irq_like.insert(s.thread);
  }
  std::stable_partition(threads.begin(), threads.end(), [&](const std::string& t) { return !irq_like.count(t); });
  return threads;
}

// The round trips' rows: each round trip's span outlined, its stages
// inside it, a colour per stage (in order of appearance: the path's).
std::string round_trip_boxes(const Timeline& tl, TimelineData& data)
{
  std::string out, lines;
  std::vector<std::string> stages;
  for (const auto& s : tl.slices)
    if (s.round_trip && s.cat == "round_trip")
      lines += fmt::format("{}\t{}\t{}\t{}\n", s.ts + s.dur / 2, s.row, s.dur / 2, 0.4);
    else if (s.round_trip && std::find(stages.begin(), stages.end(), s.thread) == stages.end())
      stages.push_back(s.thread);
  for (std::size_t i = 0; i < stages.size(); ++i) {
    std::string boxes;
    for (const auto& s : tl.slices)
      if (s.round_trip && s.cat != "round_trip" && s.thread == stages[i])
        boxes += fmt::format("{}\t{}\t{}\t{}\n", s.ts + s.dur / 2, s.row, s.dur / 2, 0.28);
    const int b = data.block("round-trip stage " + stages[i] + ": x centre, row, half width, half height", boxes);
    out += fmt::format("{} index {} using 1:2:3:4 with boxxyerror fs solid 0.85 noborder lc rgb '{}' title {}, ",
                       quote(data.path), b, kStageColours[i % kStageColours.size()], quote("stage: " + stages[i]));
  }
  if (const int b = data.block("round trips (request send() to response recv()): x centre, row, half width, half "
                               "height",
                               lines);
      b >= 0)
    out += fmt::format(
        "{} index {} using 1:2:3:4 with boxxyerror fs empty border lc rgb '#000000' lw 1.5 lc rgb '#000000' title "
        "'round trip (send() to recv())', ",
        quote(data.path), b);
  return out;
}

// The top plot, one row per CPU (and per round trips' track): a box per
// slice coloured by thread, a strip per category, the round trips and their
// stages, the instants and the wake-up arrows.
std::string cpu_rows_plot(const Timeline& tl, TimelineData& data)
{
  std::set<std::string> irq_like;
  const std::vector<std::string> threads = thread_order(tl, irq_like);
  const std::string& data_path = data.path;
  std::string top;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    std::string lines;
    for (const auto& s : tl.slices)
      if (s.thread == threads[i] && !s.round_trip)
        lines += fmt::format("{}\t{}\t{}\t{}\n", s.ts + s.dur / 2, s.row, s.dur / 2,
                             irq_like.count(threads[i]) ? 0.22 : 0.3);
    const int b = data.block("slices of " + threads[i] + ": x centre, row, half width, half height", lines);
    top += fmt::format("{} index {} using 1:2:3:4 with boxxyerror fs solid 0.85 noborder lc rgb '{}' title {}, ",
                       quote(data_path), b, kTimelineColours[i % kTimelineColours.size()], quote(threads[i]));
  }
  for (std::size_t c = 0; c < kTimelineCats.size(); ++c) {
    std::string lines;
    for (const auto& s : tl.slices)
      if (s.cat == kTimelineCats[c])
        lines += fmt::format("{}\t{}\t{}\t{}\n", s.ts + s.dur / 2, s.row - 0.38, s.dur / 2, 0.05);
    if (const int b = data.block("category " + kTimelineCats[c] + ": a strip under each row", lines); b >= 0)
      top += fmt::format("{} index {} using 1:2:3:4 with boxxyerror fs solid 1 noborder lc rgb '{}' title {}, ",
                         quote(data_path), b, kTimelineCatColours[c], quote("category: " + kTimelineCats[c]));
  }
  top += round_trip_boxes(tl, data);
  std::string lines;
  for (const auto& [ts, row] : tl.instants)
    lines += fmt::format("{}\t{}\n", ts, row + 0.36);
  if (const int b = data.block("kernel functions marked (instants): x, row", lines); b >= 0)
    top += fmt::format("{} index {} using 1:2 with points pt 11 ps 0.5 lc rgb '#444444' title 'kernel function "
                       "(instant)', ",
                       quote(data_path), b);
  lines.clear();
  for (const auto& [id, ends] : tl.wakeups) {
    // From the edge of the waker's row facing the woken's to the facing edge
    // of the woken's (above the boxes when both are on one CPU).
    const double from = static_cast<double>(ends[0].second), to = static_cast<double>(ends[1].second);
    const double y0 = to < from ? from - 0.3 : from + 0.3, y1 = to > from ? to - 0.3 : to + 0.3;
    lines += fmt::format("{}\t{}\t{}\t{}\n", ends[0].first, y0, ends[1].first - ends[0].first, y1 - y0);
  }
  if (const int b = data.block("wake-ups: x, row of the waker; dx, drow to the woken", lines); b >= 0)
    top += fmt::format("{} index {} using 1:2:3:4 with vectors head size 0.6,20 lw 0.6 lc rgb '#888888' title "
                       "'wake-up (waker to woken)', ",
                       quote(data_path), b);
  return "plot " + top.substr(0, top.size() - 2) + "\n";
}

// The bottom plot: each counter's level over time (chains on the right
// axis: y2 says whether any is).
std::string counters_plot(const Timeline& tl, TimelineData& data, bool& y2)
{
  std::string bottom;
  y2 = false;
  std::size_t n = 0;
  for (const auto& [name, points] : tl.counters) {
    std::string lines;
    for (const auto& [ts, v] : points)
      lines += fmt::format("{}\t{}\n", ts, v);
    lines += fmt::format("{}\t{}\n", tl.end, points.back().second);
    const int b = data.block("counter " + name + ": x, level (held until the next)", lines);
    const bool chains = name.ends_with(" chains");
    y2 = y2 || chains;
    bottom += fmt::format("{}{} index {} using 1:2 with steps lw 1.5 lc rgb '{}' axes {} title {}", n ? ", " : "plot ",
                          quote(data.path), b, kTimelineColours[(n + 4) % kTimelineColours.size()],
                          chains ? "x1y2" : "x1y1", quote(name + (chains ? " (right axis)" : "")));
    ++n;
  }
  return bottom.empty() ? "plot NaN notitle" : bottom;
}

} // namespace

std::vector<std::string> plot_timeline(const std::string& trace_path, const std::string& out)
{
  const Timeline tl = read_timeline(trace_path);
  const TimelineOutput o = timeline_output(out);
  const std::string& stem = o.stem;
  TimelineData data{stem + ".dat", ""};
  const std::string script = stem + ".gp";
  const std::string top = cpu_rows_plot(tl, data);
  bool y2 = false;
  const std::string bottom = counters_plot(tl, data, y2);
  write_file_atomic(data.path, data.text);
  std::string ytics;
  for (std::size_t i = 0; i < tl.rows.size(); ++i)
    ytics += fmt::format("{}{} {}", i ? ", " : "", quote_text(tl.rows[i].second), tl.rows.size() - 1 - i);

  std::string gp = fmt::format("# Generated by `vsocksim plot --timeline {}`; rerun with: gnuplot {}\n"
                               "set datafile separator '\\t'\n",
                               trace_path, script);
  std::vector<std::string> written;
  for (const std::string& ext : o.exts) {
    const std::string file = stem + "." + ext;
    gp += (ext == "svg" ? "set terminal svg size 1200,720 dynamic noenhanced font 'sans,10'\n"
                        : "set terminal pngcairo size 1200,720 noenhanced font 'sans,9'\n");
    gp += fmt::format(
        "set output {}\nset multiplot\n"
        "set lmargin at screen 0.11\nset rmargin at screen 0.74\nset xrange [{}:{}]\n"
        "set key outside right top vertical font ',8'\nset grid x\n"
        // Top: one row per CPU.
        "set tmargin at screen 0.9\nset bmargin at screen 0.36\nset title {}\n"
        "set yrange [-0.6:{}]\nset ytics ({})\nunset y2tics\nset format x ''\nunset xlabel\nunset ylabel\n{}"
        // Bottom: the counters.
        "set tmargin at screen 0.33\nset bmargin at screen 0.08\nunset title\nset yrange [*:*]\n"
        "set ytics autofreq\nset format x '%g'\nset xlabel 'simulated time (us)'\nset ylabel 'bytes'\n{}{}\n"
        "unset multiplot\nunset output\nunset y2tics\nunset y2label\n",
        quote(file), tl.start, tl.end, quote(tl.title), static_cast<double>(tl.rows.size()) - 0.4, ytics, top,
        y2 ? "set y2range [0:*]\nset y2tics\nset y2label 'chains'\n" : "", bottom);
    written.push_back(file);
  }
  write_file_atomic(script, gp);
  run_gnuplot(script);
  return written;
}

} // namespace vsim::app
