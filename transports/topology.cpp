#include "transports/topology.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include <optional>

#include <boost/graph/adjacency_list.hpp>
#include <fmt/format.h>

#include "transports/transport.hpp"

namespace vsim::app {

namespace {

enum class Kind { Machine, Cpu, Thread, Channel };
enum class Rel { Contains, RunsOn, Writes, Reads };

struct Vertex {
  Kind kind = Kind::Machine;
  std::string name;
  bool guest = false;       // Cpu: a guest vCPU
  bool app = false;         // Thread: an application thread (one per connection), not a service thread
  double cycles_per_MB = 0; // Thread: per MB of all payload
  std::string stage, what;
};
struct Edge {
  Rel rel;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Vertex, Edge>;
using V = Graph::vertex_descriptor;

struct Built {
  Graph g;
  std::map<std::string, V> by_name; // CPUs, threads and channels by name
  std::vector<std::string> errors;
};

bool is_app_thread(const ThreadLoad& t)
{
  // A thread of a connection is its application's unless its transport
  // declares it a service (the guest's kworker standing in for send work).
  const ThreadRole* r = thread_role(t.thread);
  return t.connection >= 0 && (!r || r->app);
}

Built build(const PlatformPlan& plan)
{
  Built b;
  Graph& g = b.g;
  auto add = [&](Vertex v) {
    V d = boost::add_vertex(v, g);
    b.by_name.emplace(g[d].name, d);
    return d;
  };
  auto vertex = [](Kind k, std::string name, bool guest = false) {
    Vertex v;
    v.kind = k;
    v.name = std::move(name);
    v.guest = guest;
    return v;
  };
  const V vm = boost::add_vertex(vertex(Kind::Machine, "guest"), g);
  const V host = boost::add_vertex(vertex(Kind::Machine, "host"), g);
  for (int i = 0; i < plan.vcpus; ++i)
    boost::add_edge(vm, add(vertex(Kind::Cpu, fmt::format("vcpu{}", i), true)), Edge{Rel::Contains}, g);
  for (int i = 0; i < plan.host_cpus; ++i)
    boost::add_edge(host, add(vertex(Kind::Cpu, fmt::format("hcpu{}", i))), Edge{Rel::Contains}, g);

  const double conns = std::max(plan.connections, 1);
  for (const ThreadLoad& t : plan.loads) {
    const double share = t.connection >= 0 ? 1.0 / conns : 1.0; // of all the payload
    auto it = b.by_name.find(t.thread);
    if (it == b.by_name.end()) {
      V d = add(Vertex{Kind::Thread, t.thread, false, is_app_thread(t), 0, t.stage, t.what});
      auto cpu = b.by_name.find(t.cpu);
      if (cpu == b.by_name.end() || g[cpu->second].kind != Kind::Cpu)
        b.errors.push_back(fmt::format("thread {} is pinned on CPU {}, which does not exist (CPUs: vcpu0..vcpu{}, "
                                       "hcpu0..hcpu{})",
                                       t.thread, t.cpu, plan.vcpus - 1, plan.host_cpus - 1));
      else
        boost::add_edge(d, cpu->second, Edge{Rel::RunsOn}, g);
      it = b.by_name.find(t.thread);
    } else if (g[it->second].kind != Kind::Thread) {
      b.errors.push_back(fmt::format("thread {} has the name of a CPU or channel", t.thread));
      continue;
    } else {
      // The same thread named again (a kworker serving several connections): it must stay on its CPU.
      auto [e, end] = boost::out_edges(it->second, g);
      for (; e != end; ++e)
        if (g[*e].rel == Rel::RunsOn && g[boost::target(*e, g)].name != t.cpu)
          b.errors.push_back(
              fmt::format("thread {} is pinned on two CPUs: {} and {}", t.thread, g[boost::target(*e, g)].name, t.cpu));
    }
    g[it->second].cycles_per_MB += t.cycles_per_MB * share;
  }

  for (const ChannelLink& l : plan.links) {
    const std::string name = fmt::format("{}#{}", l.name, l.connection);
    V ch = add(vertex(Kind::Channel, name));
    auto end_of = [&](const std::string& thread, const char* side) -> std::optional<V> {
      auto it = b.by_name.find(thread);
      if (thread.empty() || it == b.by_name.end() || b.g[it->second].kind != Kind::Thread) {
        b.errors.push_back(fmt::format("connection {} ({}) has no {} thread{} (allowed: a thread of the plan)",
                                       l.connection, l.name, side, thread.empty() ? "" : " '" + thread + "'"));
        return std::nullopt;
      }
      return it->second;
    };
    if (auto w = end_of(l.writer, "writer"))
      boost::add_edge(*w, ch, Edge{Rel::Writes}, g);
    if (auto r = end_of(l.reader, "reader"))
      boost::add_edge(ch, *r, Edge{Rel::Reads}, g);
  }
  for (int i = 0; i < plan.connections; ++i)
    if (std::none_of(plan.links.begin(), plan.links.end(), [&](const ChannelLink& l) { return l.connection == i; }))
      b.errors.push_back(fmt::format("connection {} has no channel (allowed: one link per connection)", i));

  return b;
}

} // namespace

TopologyLimits limits_for(const PlatformPlan& plan)
{
  auto per_cpu = [&](int cpus) {
    if (plan.one_app_thread) // one thread serves every stream: all of them on one CPU
      return plan.connections;
    return cpus > 0 ? (plan.connections + cpus - 1) / cpus : plan.connections;
  };
  return TopologyLimits{std::max(1, per_cpu(plan.vcpus)), std::max(1, per_cpu(plan.host_cpus))};
}

std::vector<std::string> validate_topology(const PlatformPlan& plan, const TopologyLimits& limits)
{
  Built b = build(plan);
  const Graph& g = b.g;
  // Oversubscription: application threads per CPU (in-edges RunsOn).
  auto [v, vend] = boost::vertices(g);
  for (; v != vend; ++v) {
    if (g[*v].kind != Kind::Cpu)
      continue;
    int apps = 0;
    auto [e, eend] = boost::in_edges(*v, g);
    for (; e != eend; ++e)
      if (g[*e].rel == Rel::RunsOn && g[boost::source(*e, g)].app)
        ++apps;
    const int limit = g[*v].guest ? limits.guest_app_threads_per_cpu : limits.host_app_threads_per_cpu;
    if (apps > limit)
      b.errors.push_back(fmt::format("CPU {} holds {} application threads (allowed: at most {}, from {} connections "
                                     "over {} {})",
                                     g[*v].name, apps, limit, plan.connections,
                                     g[*v].guest ? plan.vcpus : plan.host_cpus, g[*v].guest ? "vCPUs" : "host CPUs"));
  }
  return b.errors;
}

Bound throughput_bound(const PlatformPlan& plan, const TopologyLimits& limits)
{
  const std::vector<std::string> errors = validate_topology(plan, limits);
  if (!errors.empty())
    throw std::invalid_argument("platform graph: " + errors.front());
  Built b = build(plan);
  const Graph& g = b.g;
  Bound out;
  const double hz = plan.clock_ghz * 1e9;
  auto [v, vend] = boost::vertices(g);
  for (; v != vend; ++v) {
    if (g[*v].kind != Kind::Cpu)
      continue;
    CpuLoad load;
    load.cpu = g[*v].name;
    double top = -1;
    auto [e, eend] = boost::in_edges(*v, g);
    for (; e != eend; ++e) {
      const Vertex& t = g[boost::source(*e, g)];
      if (g[*e].rel != Rel::RunsOn)
        continue;
      load.cycles_per_MB += t.cycles_per_MB;
      if (t.cycles_per_MB > top) {
        top = t.cycles_per_MB;
        load.top_thread = t.name;
        load.top_stage = t.stage;
        load.top_what = t.what;
      }
    }
    if (load.cycles_per_MB <= 0)
      continue;
    load.bound_MBps = hz / load.cycles_per_MB;
    out.cpus.push_back(load);
  }
  if (out.cpus.empty())
    throw std::invalid_argument("platform graph: no CPU carries any work");
  out.binding = *std::min_element(out.cpus.begin(), out.cpus.end(),
                                  [](const CpuLoad& a, const CpuLoad& c) { return a.bound_MBps < c.bound_MBps; });
  out.MBps = out.binding.bound_MBps;
  out.per_connection_MBps = out.MBps / std::max(plan.connections, 1);
  return out;
}

} // namespace vsim::app
