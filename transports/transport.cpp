#include "transports/transport.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "transports/hv_sock/bound.hpp"
#include "transports/hv_sock/costs.hpp"
#include "transports/hv_sock/hv_sock.hpp"
#include "transports/hv_sock/params.hpp"
#include "transports/virtio_vsock/bound.hpp"
#include "transports/virtio_vsock/costs.hpp"
#include "transports/virtio_vsock/params.hpp"
#include "transports/virtio_vsock/virtio_vsock.hpp"

namespace vsim {

namespace {
// A transport whose costs another's table declares (scoped to both).
std::vector<CostDecl> no_costs()
{
  return {};
}
// Round trips run one way: the initiator is the writing side of `direction`.
std::pair<std::string, std::string> bidirectional_streams_only(const Params& p)
{
  if (p.text("direction") == "bidirectional" && p.text("workload.pattern") != "stream")
    return {"direction", "bidirectional round trips are not modelled (allowed with workload.pattern " +
                             p.text("workload.pattern") + ": guest_to_host, host_to_guest)"};
  return {"", ""};
}
} // namespace

const std::vector<Transport>& transports()
{
  static const std::vector<Transport> all = {
      {"hv_sock",
       hv_sock::declare_params,
       hv_sock::simulate,
       hv_sock::platform_plan,
       hv_sock::Costs::decls,
       hv_sock::metrics,
       {{"linux_writer", 0, true, true, ""},
        {"host_writer", 2, true, true, ""},
        {"vmbus_isr", 4, false, false, ""},
        {"host_reader", 7, false, true, ""},
        {"linux_reader", 8, false, true, ""},
        {"linux_app", 0, true, true, ""},
        {"host_app", 2, true, true, ""}},
       0.5e6,
       2.5e9,
       hv_sock::effective,
       {"hv_sock.sndbuf", "hv_sock.rcvbuf", "hv_sock.sysctl_wmem_max", "hv_sock.sysctl_rmem_max", "hv_sock.ring_sizing",
        "hv_sock.host_packet_size"},
       hv_sock::memory,
       hv_sock::round_trip_path,
       nullptr,
       bidirectional_streams_only},
      {"virtio_vsock",
       virtio_vsock::declare_params,
       virtio_vsock::simulate,
       virtio_vsock::platform_plan,
       virtio_vsock::detail::Costs::decls,
       virtio_vsock::metrics,
       {{"guest_writer", 1, true, true, ""},
        {"host_writer", 2, true, true, ""},
        {"kworker_", 3, false, false, ""},
        {"virtio_irq", 5, false, false, ""},
        {"vhost", 6, false, false,
         "the vhost worker (one kernel thread for the device) is the bottleneck: its per-packet work "
         "(vhost_vsock_handle_tx_kick / vhost_transport_do_send_pkt: allocation, copy, used entry) saturates its "
         "CPU"},
        {"host_reader", 7, false, true, ""},
        {"guest_reader", 9, false, true, ""},
        {"guest_app", 1, true, true, ""},
        {"host_app", 2, true, true, ""}},
       35e3,
       2e9,
       virtio_vsock::effective,
       {"virtio_vsock.max_pkt_size", "virtio_vsock.rx_buf_size", "virtio_vsock.queue_size", "virtio_vsock.buf_alloc",
        "virtio_vsock.credit_threshold", "virtio_vsock.irq_vcpu"},
       virtio_vsock::memory,
       nullptr,
       virtio_vsock::detail::Costs::ties,
       bidirectional_streams_only},
      // The guest's virtio-vsock driver with Firecracker's device: its costs
      // and keys are declared with virtio_vsock's (scoped to both where the
      // guest runs them), its own keys are firecracker_vsock.*.
      {"firecracker_vsock",
       virtio_vsock::declare_firecracker_params,
       virtio_vsock::simulate,
       virtio_vsock::firecracker_plan,
       no_costs,
       virtio_vsock::firecracker_metrics,
       {{"fc_vmm", 6, false, false,
         "the VMM thread (Firecracker's one event loop for the device) is the bottleneck: its per-packet work "
         "(the queue handlers, a write() or read() on the host's AF_UNIX stream per packet, an interrupt per "
         "handler call) saturates its CPU"}},
       30e3,
       2e9,
       virtio_vsock::effective,
       {"virtio_vsock.max_pkt_size", "virtio_vsock.rx_buf_size", "virtio_vsock.buf_alloc",
        "virtio_vsock.credit_threshold", "virtio_vsock.irq_vcpu"},
       virtio_vsock::memory,
       nullptr,
       virtio_vsock::detail::Costs::firecracker_ties,
       virtio_vsock::firecracker_refusal,
       {{"virtio_vsock.preset", "linux-5.10"}}},
  };
  return all;
}

const Transport* find_transport(const std::string& name)
{
  for (const Transport& t : transports())
    if (t.name == name)
      return &t;
  return nullptr;
}

std::vector<std::string> transport_names()
{
  std::vector<std::string> names;
  for (const Transport& t : transports())
    names.push_back(t.name);
  return names;
}

std::vector<CostDecl> all_cost_decls()
{
  std::vector<CostDecl> out;
  for (const auto& f : shared_costs())
    out.push_back(f.decl());
  for (const Transport& t : transports())
    for (const CostDecl& d : t.costs())
      out.push_back(d);
  return out;
}

std::vector<CostTie> cost_ties(const std::string& transport)
{
  const Transport* t = find_transport(transport);
  return t != nullptr && t->ties != nullptr ? t->ties() : std::vector<CostTie>{};
}

const CostTie* tie_of(const std::string& cost, const std::string& transport)
{
  const Transport* t = find_transport(transport);
  if (t == nullptr || t->ties == nullptr)
    return nullptr;
  for (const CostTie& tie : t->ties())
    if (std::find(tie.members.begin(), tie.members.end(), cost) != tie.members.end())
      return &tie;
  return nullptr;
}

std::vector<TieState> tie_states(const std::string& transport, const std::map<std::string, double>& values)
{
  std::vector<TieState> out;
  const Transport* t = find_transport(transport);
  if (t == nullptr || t->ties == nullptr)
    return out;
  for (const CostTie& tie : t->ties()) {
    TieState st{&tie, true, ""};
    std::vector<std::string> listed, outside;
    double first = 0;
    bool differ = false;
    for (std::size_t i = 0; i < tie.members.size(); ++i) {
      const auto it = values.find(tie.members[i]);
      if (it == values.end()) {
        st.kept = false;
        st.why = fmt::format("{} has no value", tie.members[i]);
        break;
      }
      if (i == 0)
        first = it->second;
      else if (it->second != first)
        differ = true;
      listed.push_back(fmt::format("{} {}", tie.members[i], it->second));
      if (it->second < tie.plausible.min || it->second > tie.plausible.max)
        outside.push_back(tie.members[i]);
    }
    if (st.why.empty() && differ) {
      st.kept = false;
      st.why = fmt::format("values differ: {}", fmt::join(listed, ", "));
      // A member outside the situation's range is a second fault a refit
      // must mend (kvm-2018's vhost copying guest memory at 1.37 bytes/cycle).
      if (!outside.empty())
        st.why += fmt::format("; {} outside the situation's range {} .. {}", fmt::join(outside, ", "),
                              tie.plausible.min, tie.plausible.max);
    } else if (st.why.empty() && !outside.empty()) {
      st.kept = false;
      st.why = fmt::format("{} {} outside the situation's range {} .. {}", listed.front(),
                           tie.members.size() > 1 ? "(all members) is" : "is", tie.plausible.min, tie.plausible.max);
    }
    out.push_back(st);
  }
  return out;
}

const ThreadRole* thread_role(const std::string& thread)
{
  for (const Transport& t : transports())
    for (const ThreadRole& r : t.threads)
      if (thread.rfind(r.prefix, 0) == 0)
        return &r;
  return nullptr;
}

} // namespace vsim
