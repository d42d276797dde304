// The metric declarations in documentation order: the list metric_docs()
// assembles from the shared declarations (transports/simulate.cpp) and each
// transport's own (its figures and its counter table). Error messages,
// `show --metrics all`, describe and the docs list metrics in this order.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "transports/simulate.hpp"
#include "transports/transport.hpp"

using namespace vsim;

namespace {

struct Pinned {
  std::string name, unit;
  Scaling scaling;
};

// FNV-1a over every declaration's fields, to pin the doc texts too.
std::uint64_t fingerprint(const std::vector<MetricDoc>& docs)
{
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s + '\n') {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  for (const MetricDoc& d : docs) {
    mix(d.name);
    mix(d.unit);
    mix(std::to_string(static_cast<int>(d.scaling)));
    mix(d.doc);
  }
  return h;
}

} // namespace

TEST_CASE("metric declarations: the full list in documentation order", "[metrics]")
{
  // Generated from the list as it was declared in one table before each
  // transport declared its own metrics.
  const std::vector<Pinned> expected = {
      {"throughput_MBps", "MB/s", Scaling::BytesOver},
      {"elapsed_seconds", "s", Scaling::Total},
      {"writer_sys_seconds", "s", Scaling::Total},
      {"writer_user_seconds", "s", Scaling::Total},
      {"reader_sys_seconds", "s", Scaling::Total},
      {"reader_user_seconds", "s", Scaling::Total},
      {"guest_cpu_percent", "%", Scaling::PerTime},
      {"host_cpu_percent", "%", Scaling::PerTime},
      {"rtt_mean_us", "us", Scaling::AsIs},
      {"rtt_p1_us", "us", Scaling::AsIs},
      {"rtt_p50_us", "us", Scaling::AsIs},
      {"rtt_p90_us", "us", Scaling::AsIs},
      {"rtt_p99_us", "us", Scaling::AsIs},
      {"rtt_p999_us", "us", Scaling::AsIs},
      {"transactions_per_second", "1/s", Scaling::BytesOver},
      {"guest_cpu_us_per_transaction", "us", Scaling::PerByte},
      {"host_cpu_us_per_transaction", "us", Scaling::PerByte},
      {"throughput_guest_to_host_Gbps", "Gbit/s", Scaling::BytesOver},
      {"throughput_host_to_guest_Gbps", "Gbit/s", Scaling::BytesOver},
      {"throughput_Gbps", "Gbit/s", Scaling::BytesOver},
      {"efficiency", "Mbit/s per %CPU", Scaling::BytesOver},
      {"app_cpu_percent_host", "%", Scaling::PerTime},
      {"app_cpu_percent_guest", "%", Scaling::PerTime},
      {"guest_kworker_seconds", "s", Scaling::Total},
      {"socket_lock_waits_per_MB", "1/MB", Scaling::PerByte},
      {"cpu_vcpus_total_percent", "%", Scaling::PerTime},
      {"cpu_vmm_thread_percent", "%", Scaling::PerTime},
      {"throughput_Mibps", "Mibit/s", Scaling::BytesOver},
      {"syscalls_per_MB", "1/MB", Scaling::PerByte},
      {"space_checks_per_MB", "1/MB", Scaling::PerByte},
      {"pending_send_sz_writes_per_MB", "1/MB", Scaling::PerByte},
      {"allocations_per_MB", "1/MB", Scaling::PerByte},
      {"copies_per_MB", "1/MB", Scaling::PerByte},
      {"signals_to_host_per_MB", "1/MB", Scaling::PerByte},
      {"interrupts_to_guest_per_MB", "1/MB", Scaling::PerByte},
      {"ring_full_stalls_per_MB", "1/MB", Scaling::PerByte},
      {"reader_sleeps_per_MB", "1/MB", Scaling::PerByte},
      {"host_dpc_runs_per_MB", "1/MB", Scaling::PerByte},
      {"packets_per_MB", "1/MB", Scaling::PerByte},
      {"kicks_per_MB", "1/MB", Scaling::PerByte},
      {"vm_exits_per_MB", "1/MB", Scaling::PerByte},
      {"guest_wake_ipis_per_MB", "1/MB", Scaling::PerByte},
      {"host_wake_ipis_per_MB", "1/MB", Scaling::PerByte},
      {"credit_updates_per_MB", "1/MB", Scaling::PerByte},
      {"worker_wakeups_per_MB", "1/MB", Scaling::PerByte},
      {"worker_runs_per_MB", "1/MB", Scaling::PerByte},
      {"rx_buffers_per_MB", "1/MB", Scaling::PerByte},
      {"credit_stalls_per_MB", "1/MB", Scaling::PerByte},
      {"l3_copy_bytes_per_MB", "1/MB", Scaling::PerByte},
      {"small_pkt_copies_per_MB", "1/MB", Scaling::PerByte},
      {"rx_buffer_stalls_per_MB", "1/MB", Scaling::PerByte},
      {"polls_per_MB", "1/MB", Scaling::PerByte},
      {"eagain_writes_per_MB", "1/MB", Scaling::PerByte},
      {"guest_work_runs_per_MB", "1/MB", Scaling::PerByte},
      {"messages_per_MB", "1/MB", Scaling::PerByte},
      {"zerocopy_sends_per_MB", "1/MB", Scaling::PerByte},
      {"zerocopy_fallbacks_per_MB", "1/MB", Scaling::PerByte},
      {"zerocopy_completions_per_MB", "1/MB", Scaling::PerByte},
      {"errqueue_reads_per_MB", "1/MB", Scaling::PerByte},
      {"pages_pinned_per_MB", "1/MB", Scaling::PerByte},
      {"page_allocations_per_MB", "1/MB", Scaling::PerByte},
      {"tx_fast_path_sends_per_MB", "1/MB", Scaling::PerByte},
      {"tx_fast_path_fallbacks_per_MB", "1/MB", Scaling::PerByte},
      {"halt_poll_wakeups_per_MB", "1/MB", Scaling::PerByte},
      {"halted_vcpu_wakeups_per_MB", "1/MB", Scaling::PerByte},
      {"tx_lock_contended_per_MB", "1/MB", Scaling::PerByte},
      {"kworker_handoffs_per_MB", "1/MB", Scaling::PerByte},
      {"interrupts_merged_per_MB", "1/MB", Scaling::PerByte},
      {"txbuf_pushes_per_MB", "1/MB", Scaling::PerByte},
      {"irqfd_writes_per_MB", "1/MB", Scaling::PerByte},
      {"irqfd_injections_per_MB", "1/MB", Scaling::PerByte},
      {"interrupts_both_queues_per_MB", "1/MB", Scaling::PerByte},
      {"memory_bytes_per_connection", "B", Scaling::AsIs},
      {"ring_bytes_guest_to_host", "B", Scaling::AsIs},
      {"ring_bytes_host_to_guest", "B", Scaling::AsIs},
      {"sim_events", "", Scaling::AsIs},
      {"sim_simcalls", "", Scaling::AsIs},
      {"cpu.<cpu>.{user|sys|irq|hypervisor|busy}_percent", "%", Scaling::PerTime},
      {"thread.<thread>.{user|sys|irq|hypervisor|busy}_percent", "%", Scaling::PerTime},
      {"queue.<queue>.mean", "B or chains", Scaling::PerTime},
      {"queue.<queue>.mean_percent", "%", Scaling::PerTime},
      {"queue.<queue>.max_percent", "%", Scaling::AsIs},
      {"queue.<queue>.empty_time_percent", "%", Scaling::PerTime},
      {"queue.<queue>.time_{0_10|10_20|20_30|30_40|40_50|50_60|60_70|70_80|80_90|90_100}_percent", "%",
       Scaling::PerTime},
  };
  const std::vector<MetricDoc>& docs = metric_docs();
  REQUIRE(docs.size() == expected.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    INFO(i << ": " << docs[i].name);
    CHECK(docs[i].name == expected[i].name);
    CHECK(docs[i].unit == expected[i].unit);
    CHECK(docs[i].scaling == expected[i].scaling);
    CHECK_FALSE(docs[i].doc.empty());
  }
  // With the 6.x counts, MSG_ZEROCOPY's, the round trips', the kworker handoffs, the MSI-X vector's and halt
  // polling's, Firecracker's (issue 52), its irqfd writes and injections.
  CHECK(fingerprint(docs) == 0x5a6f6bc1debe0b7bull);
  std::string list;
  for (const Pinned& p : expected)
    list += (list.empty() ? "" : ", ") + p.name;
  CHECK(known_metrics_list() == list);
}

TEST_CASE("metric declarations: each name once", "[metrics]")
{
  std::set<std::string> seen;
  for (const MetricDoc& d : metric_docs())
    CHECK(seen.insert(d.name).second);
}
