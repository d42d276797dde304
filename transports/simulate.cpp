#include "transports/simulate.hpp"

#include <stdexcept>

#include "transports/hv_sock/hv_sock.hpp"

namespace vsim {

std::map<std::string, double> simulate_iteration(const Params& params, std::uint32_t iteration)
{
  const std::string& transport = params.text("transport");
  if (transport == "hv_sock")
    return hv_sock::simulate(params, iteration);
  throw std::logic_error("transport '" + transport + "' is not implemented");
}

const std::vector<MetricDoc>& metric_docs()
{
  static const std::vector<MetricDoc> docs = {
      {"throughput_MBps", "MB/s", "payload bytes delivered to readers / elapsed time, all connections (MB = 10^6 B)"},
      {"elapsed_seconds", "s", "simulated time from the first send() until the last byte is received"},
      {"writer_sys_seconds", "s", "kernel (and hypercall) CPU time of the writer threads, as `time` reports it"},
      {"writer_user_seconds", "s", "user CPU time of the writer threads"},
      {"reader_sys_seconds", "s", "kernel (and hypercall) CPU time of the reader threads"},
      {"reader_user_seconds", "s", "user CPU time of the reader threads"},
      {"guest_cpu_percent", "%", "busy time of all guest vCPUs / elapsed x 100, as `top` sums it"},
      {"host_cpu_percent", "%", "busy time of all host CPUs / elapsed x 100"},
      {"syscalls_per_MB", "1/MB", "send()/recv() calls on the Linux side per MB of payload"},
      {"space_checks_per_MB", "1/MB", "hvs_channel_writable_bytes evaluations per MB"},
      {"pending_send_sz_writes_per_MB", "1/MB", "pending_send_sz set/clear by the Linux writer per MB"},
      {"allocations_per_MB", "1/MB", "4 KiB send-buffer allocations per MB"},
      {"copies_per_MB", "1/MB", "guest kernel copies (user<->buffer, buffer->ring, ring->user) per MB"},
      {"signals_to_host_per_MB", "1/MB", "guest signals to the host (HvSignalEvent) per MB"},
      {"interrupts_to_guest_per_MB", "1/MB", "host signals delivered as guest interrupts per MB"},
      {"ring_full_stalls_per_MB", "1/MB", "times the writer found no room and slept, per MB"},
      {"reader_sleeps_per_MB", "1/MB", "times the Linux reader found no data and slept, per MB"},
      {"host_dpc_runs_per_MB", "1/MB", "host DPC runs draining the guest-to-host ring per MB"},
      {"packets_per_MB", "1/MB", "VMBus packets carrying payload per MB"},
      {"ring_bytes_guest_to_host", "B", "size of the guest-to-host ring (header page included)"},
      {"ring_bytes_host_to_guest", "B", "size of the host-to-guest ring (header page included)"},
      {"sim_simcalls", "", "SimGrid simcalls the run made (a cost of the simulator, not of the system)"},
      {"sim_sleeps", "", "engine synchronisations (sleep_until / yield)"},
      {"sim_waits", "", "blocking waits on wake-ups"},
      {"sim_observes", "", "observations of shared state"},
  };
  return docs;
}

const MetricDoc* find_metric(const std::string& name)
{
  for (const auto& d : metric_docs())
    if (d.name == name)
      return &d;
  return nullptr;
}

}  // namespace vsim
