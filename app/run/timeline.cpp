#include "app/run/timeline.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/experiment/units.hpp"
#include "app/run/output_dir.hpp"
#include "sim/trace.hpp"
#include "transports/simulate.hpp"

namespace fs = std::filesystem;

namespace vsim::app {

namespace {

const Point& point_of(const Experiment& ex, long long k)
{
  for (const Point& p : ex.points)
    if (static_cast<long long>(p.index) == k)
      return p;
  throw InputError(
      fmt::format("--point {}: error: no such point (allowed: 0 .. {}, the indices `run --list` prints{})", k,
                  ex.points.empty() ? 0 : ex.points.back().index,
                  ex.points.size() > 0 && ex.points.back().index + 1 != ex.points.size() ? ", of this shard" : ""));
}

// The wire format of a traced run: u64 length of the encoded metrics, the
// metrics, then the trace's JSON text.
std::string pack(const Metrics& m, const std::string& json)
{
  const std::string enc = encode_metrics(m);
  const std::uint64_t n = enc.size();
  std::string out(sizeof n, '\0');
  std::memcpy(out.data(), &n, sizeof n);
  return out + enc + json;
}

TracedRun unpack(const std::string& data)
{
  TracedRun r;
  std::uint64_t n = 0;
  if (data.size() < sizeof n)
    throw std::runtime_error("traced run: no result");
  std::memcpy(&n, data.data(), sizeof n);
  if (data.size() - sizeof n < n || !decode_metrics(data.substr(sizeof n, n), r.metrics))
    throw std::runtime_error("traced run: malformed result");
  r.json = data.substr(sizeof n + n);
  return r;
}

} // namespace

TraceWindow parse_trace_window(const std::string& text)
{
  const std::size_t colon = text.find(':');
  auto bad = [&](const std::string& why) {
    return InputError(fmt::format("--trace-window '{}': error: {} (allowed: START:LENGTH in simulated time, e.g. "
                                  "500us:200us, 1ms:50us, or :LENGTH for the default start; no unit: us)",
                                  text, why));
  };
  if (colon == std::string::npos)
    throw bad("expected START:LENGTH");
  TraceWindow w;
  std::string why;
  if (const std::string start = text.substr(0, colon); !start.empty()) {
    w.start_us = parse_duration_us(start, &why);
    if (!w.start_us)
      throw bad("START " + why);
  }
  const std::optional<double> length = parse_duration_us(text.substr(colon + 1), &why);
  if (!length)
    throw bad("LENGTH " + why);
  if (!(*length > 0))
    throw bad("LENGTH must be above 0");
  w.length_us = *length;
  return w;
}

void check_trace_options(const TraceOptions& opt, const Experiment& ex)
{
  if (!opt.window.empty())
    parse_trace_window(opt.window);
  if (opt.max_events < 1)
    throw InputError(fmt::format("--trace-max-events {}: error: must be at least 1", opt.max_events));
  const Point& p = point_of(ex, opt.point);
  const long long n = p.params.integer("iterations");
  if (opt.iteration < 0 || opt.iteration >= n)
    throw InputError(fmt::format("--iteration {}: error: point {} has {} iteration(s) (allowed: 0 .. {})",
                                 opt.iteration, p.index, n, n - 1));
  // The file is written (atomically, through a temporary beside it) at the
  // end: its directory must exist and be writable now.
  if (opt.path.empty())
    throw InputError("--trace '': error: needs a file path");
  std::error_code ec;
  if (fs::is_directory(opt.path, ec))
    throw InputError(fmt::format("--trace '{}': error: is a directory (allowed: a file path)", opt.path));
  const fs::path dir = fs::absolute(opt.path, ec).parent_path();
  if (!fs::is_directory(dir, ec))
    throw InputError(fmt::format("--trace '{}': error: directory '{}' does not exist", opt.path, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw InputError(fmt::format("--trace '{}': error: directory '{}' is not writable", opt.path, dir.string()));
}

double default_trace_start_us(const Metrics& metrics, const Metrics& run_length, double total_bytes)
{
  const double elapsed_us = metrics.at("elapsed_seconds") * 1e6;
  auto warmup = run_length.find("warmup_bytes");
  if (warmup != run_length.end() && total_bytes > 0)
    return elapsed_us * warmup->second / total_bytes;
  // No warm-up found (sim.run_length: full, or a run too short to judge):
  // a tenth of the simulated time, past the connections' start.
  auto simulated = run_length.find("simulated_bytes");
  const double share = simulated != run_length.end() && total_bytes > 0 ? simulated->second / total_bytes : 1.0;
  return 0.1 * elapsed_us * share;
}

TracedRun trace_iteration(const TraceOptions& opt, const Experiment& ex, double start_us, const std::string& rule)
{
  const Point& p = point_of(ex, opt.point);
  const TraceWindow w = opt.window.empty() ? TraceWindow{} : parse_trace_window(opt.window);
  const double per_us = p.params.number("costs.clock_ghz") * 1e3;
  const Time start = std::round(start_us * per_us), end = start + std::max(1.0, std::round(w.length_us * per_us));
  const auto iteration = static_cast<std::uint32_t>(opt.iteration);

  nlohmann::ordered_json meta = {
      {"generator", "vsocksim run --trace"}, {"experiment", ex.name}, {"file", ex.file}, {"point", p.index}};
  nlohmann::ordered_json label = nlohmann::ordered_json::object();
  for (const auto& [key, value] : p.label)
    label[key] = value;
  meta["label"] = label;
  meta["iteration"] = opt.iteration;
  meta["transport"] = p.params.text("transport");
  meta["direction"] = p.params.text("direction");
  meta["clock_ghz"] = p.params.number("costs.clock_ghz");
  meta["window_rule"] = rule;
  meta["max_events"] = opt.max_events;

  const std::string data = run_in_child([&] {
    Trace trace(start, end, per_us, static_cast<std::size_t>(opt.max_events));
    const Metrics m = simulate_traced(p.params, iteration, trace);
    if (trace.run_end() <= start)
      throw InputError(fmt::format("--trace-window '{}': error: starts at {} us, at or after the end of the run: point "
                                   "{} iteration {} ends at {:.3f} us of simulated time (allowed: START below that)",
                                   opt.window.empty() ? "(default)" : opt.window, start_us, p.index, iteration,
                                   trace.run_end() / per_us));
    nlohmann::ordered_json info = meta;
    info["run_end_us"] = trace.run_end() / per_us;
    const std::string json = trace.to_json(info).dump() + "\n";
    if (trace.capped())
      std::fprintf(stderr,
                   "vsocksim: warning: --trace: the event cap (%lld, --trace-max-events) was reached: %s "
                   "ends before the window asked for (the trace's metadata says where)\n",
                   opt.max_events, opt.path.c_str());
    return pack(m, json);
  });
  return unpack(data);
}

void finish_trace(const TraceOptions& opt, const TracedRun& run, const Metrics* untraced, const Metrics* run_length,
                  const Metrics* rtt_histogram, const Metrics* rtt_stages)
{
  if (!untraced) {
    write_file_atomic(opt.path, run.json);
    return;
  }
  Metrics expected = *untraced;
  for (const auto& [name, value] : *run_length)
    expected["run_length." + name] = value;
  if (rtt_histogram) // moved out of the figures by the run driver (runner.cpp)
    for (const auto& [name, value] : *rtt_histogram)
      expected[kRttHistogramPrefix + name] = value;
  if (rtt_stages)
    for (const auto& [name, value] : *rtt_stages)
      expected[kRttStagePrefix + name] = value;
  for (const auto& [name, value] : expected) {
    auto it = run.metrics.find(name);
    // Bit-exact: the same doubles (NaN never occurs in results).
    if (it == run.metrics.end() || std::memcmp(&it->second, &value, sizeof value) != 0)
      throw std::logic_error(fmt::format("invariant violated: the traced run differs from the normal one in {} ({} "
                                         "traced, {} not)",
                                         name, it == run.metrics.end() ? "missing" : fmt::format("{}", it->second),
                                         value));
  }
  if (run.metrics.size() != expected.size())
    throw std::logic_error("invariant violated: the traced run reports other figures than the normal one");
  write_file_atomic(opt.path, run.json);
}

} // namespace vsim::app
