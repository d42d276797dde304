// SOCK_SEQPACKET (workload.socket_type) and MSG_ZEROCOPY (workload.zerocopy)
// on virtio-vsock, end to end (each simulation in a child process), and
// what the loader refuses up front. The costs are set here, not taken from
// the profiles, so these checks do not move when a profile is re-fitted.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/experiment/effective.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/run/runner.hpp"
#include "transports/simulate.hpp"
#include "virtio_support.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

// The end-to-end base, whole transfers, with MSG_ZEROCOPY's costs set too.
const std::string kBase = std::string(vsim::testing::kVirtioBase) + R"(  virtio_guest_zcopy_pin_page: 100
  virtio_guest_zcopy_unpin_page: 50
  virtio_guest_zcopy_notify: 800
  virtio_guest_errqueue_recv: 1500
  virtio_host_zcopy_pin_page: 100
  virtio_host_zcopy_unpin_page: 50
  virtio_host_zcopy_notify: 800
  virtio_host_errqueue_recv: 1500
sim:
  run_length: full
)";

PointResult run(const std::vector<std::string>& sets)
{
  Experiment ex = load_experiment_text(kBase, "t.yaml", sets, registry());
  RunOptions opt;
  opt.jobs = 1;
  opt.progress = false;
  auto r = run_points(ex, simulate_iteration, opt);
  REQUIRE(r.size() == 1);
  REQUIRE(r[0].iterations.size() == 1);
  return r[0];
}

double metric(const PointResult& r, const char* name)
{
  return r.iterations.at(0).at(name);
}

// A per-MB metric as a count over the run's `bytes`.
double count(const PointResult& r, const char* name, double bytes)
{
  return metric(r, name) * bytes / 1e6;
}

// CPU time of every thread of both sides per byte delivered (percent of a
// CPU over throughput).
double cpu_per_byte(const PointResult& r)
{
  return (metric(r, "guest_cpu_percent") + metric(r, "host_cpu_percent")) / metric(r, "throughput_MBps");
}

std::string load_error(const std::vector<std::string>& sets)
{
  try {
    load_experiment_text(kBase, "t.yaml", sets, registry());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("seqpacket: messages cut by the credit reach the reader whole, one per recv()", "[virtio][seqpacket]")
{
  // 20 messages of 48 KiB against a 64 KiB window: after the first, every
  // message finds less credit than it needs and waits mid-message.
  // linux-5.4: vhost splits a packet over rx buffers (EOM on the last
  // piece only); mergeable rx: the packet takes its last buffer's EOM.
  const double total = 20 * 48 * 1024;
  for (const char* kernel : {"linux-4.19", "linux-5.4", "mergeable"})
    for (const char* dir : {"guest_to_host", "host_to_guest"}) {
      INFO(kernel << " " << dir);
      const bool mergeable = std::string(kernel) == "mergeable";
      std::vector<std::string> sets = {std::string("virtio_vsock.preset=") + (mergeable ? "linux-5.4" : kernel),
                                       std::string("virtio_vsock.mergeable_rx=") + (mergeable ? "true" : "false"),
                                       std::string("direction=") + dir,
                                       "virtio_vsock.buf_alloc=64KiB",
                                       "workload.message_size=48KiB",
                                       "workload.total_bytes=983040"};
      auto stream = run(sets);
      sets.push_back("workload.socket_type=seqpacket");
      auto seq = run(sets);
      CHECK(count(seq, "messages_per_MB", total) == Approx(20));
      CHECK(count(seq, "credit_stalls_per_MB", total) > 0);
      CHECK(count(stream, "messages_per_MB", total) == 0);
      // Bytes in == bytes out is checked by the run itself; the reader's
      // recv() calls are one per message (its syscalls: 20 recv()s).
      CHECK(metric(seq, "throughput_MBps") > 0);
    }
}

TEST_CASE("seqpacket: the reader sends a credit update after every message, whatever the threshold says",
          "[virtio][seqpacket][credit]")
{
  const double total = 1e6;
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    INFO(dir);
    std::vector<std::string> sets = {"virtio_vsock.preset=linux-5.4", std::string("direction=") + dir,
                                     "workload.message_size=4KiB"};
    auto stream = run(sets);
    sets.push_back("workload.socket_type=seqpacket");
    auto seq = run(sets);
    CHECK(count(seq, "credit_updates_per_MB", total) == count(seq, "messages_per_MB", total));
    CHECK(count(seq, "messages_per_MB", total) == Approx(std::ceil(total / 4096)));
    CHECK(count(stream, "credit_updates_per_MB", total) < count(seq, "credit_updates_per_MB", total) / 10);
  }
}

TEST_CASE("seqpacket: a small packet is never copied into a queued packet that ends a message",
          "[virtio][seqpacket][packets]")
{
  std::vector<std::string> sets = {"direction=host_to_guest", "workload.message_size=32", "workload.total_bytes=64kB",
                                   "virtio_vsock.small_pkt_copy=true"};
  CHECK(metric(run(sets), "small_pkt_copies_per_MB") > 0);
  sets.push_back("workload.socket_type=seqpacket");
  auto seq = run(sets);
  CHECK(metric(seq, "small_pkt_copies_per_MB") == 0);
  CHECK(count(seq, "messages_per_MB", 64000) == Approx(2000));
}

TEST_CASE("seqpacket and zerocopy: what the kernel refuses is refused before the run", "[virtio][seqpacket][zerocopy]")
{
  // virtio_transport_seqpacket_enqueue: -EMSGSIZE above the peer's buffer.
  CHECK(load_error({"workload.socket_type=seqpacket", "workload.message_size=512KiB"})
            .find("virtio_transport_seqpacket_enqueue refuses it with EMSGSIZE") != std::string::npos);
  CHECK(load_error({"workload.socket_type=seqpacket", "workload.message_size=256KiB"}).empty());
  CHECK(load_error({"workload.message_size=512KiB"}).empty()); // a stream has no message bound
  // hv_sock has neither.
  const std::vector<std::string> hv = {"transport=hv_sock", "platform=hyperv-2019"};
  auto with = [&](const char* set) {
    auto s = hv;
    s.push_back(set);
    return load_error(s);
  };
  CHECK(with("workload.socket_type=seqpacket").find("hv_sock has no SOCK_SEQPACKET") != std::string::npos);
  CHECK(with("workload.zerocopy=true").find("hv_sock has no MSG_ZEROCOPY") != std::string::npos);
}

TEST_CASE("zerocopy: the sender pins its pages instead of copying them, and every enqueue call completes once",
          "[virtio][zerocopy]")
{
  const double total = 1e6;
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    INFO(dir);
    std::vector<std::string> sets = {"virtio_vsock.preset=linux-6.6", std::string("direction=") + dir};
    auto copy = run(sets);
    sets.push_back("workload.zerocopy=true");
    auto zc = run(sets);
    const double sends = count(zc, "zerocopy_sends_per_MB", total);
    const double calls = sends + count(zc, "zerocopy_fallbacks_per_MB", total);
    CHECK(sends > 0);
    CHECK(count(copy, "zerocopy_sends_per_MB", total) == 0);
    CHECK(count(copy, "pages_pinned_per_MB", total) == 0);
    // At least one payload copy fewer for every call sent from pinned pages.
    CHECK(count(zc, "copies_per_MB", total) <= count(copy, "copies_per_MB", total) - sends);
    // Every enqueue call (at least one per send()) completes once, in order
    // (the model checks the order), read back in at most as many reads.
    CHECK(calls >= std::ceil(total / 65536));
    CHECK(count(zc, "zerocopy_completions_per_MB", total) == Approx(calls));
    CHECK(count(zc, "errqueue_reads_per_MB", total) > 0);
    CHECK(count(zc, "errqueue_reads_per_MB", total) <= count(zc, "zerocopy_completions_per_MB", total));
  }
}

TEST_CASE("zerocopy: the largest send() can_zcopy lets through is an effective value", "[virtio][zerocopy]")
{
  auto most = [](std::vector<std::string> sets) {
    sets.push_back("virtio_vsock.preset=linux-6.6"); // sk_buff packets, which MSG_ZEROCOPY needs
    const Experiment ex = load_experiment_text(kBase, "t.yaml", sets, registry());
    for (const Effective& e : effective_values(ex.points.at(0).params))
      if (e.name == "zerocopy_max_send_bytes")
        return e.value;
    FAIL("no zerocopy_max_send_bytes");
    return -1.0;
  };
  CHECK(most({"workload.zerocopy=true"}) == 262144);                                  // the credit: buf_alloc
  CHECK(most({"workload.zerocopy=true", "virtio_vsock.queue_size=16"}) == 15 * 4096); // 15 pages + 1 header
  CHECK(most({"workload.zerocopy=true", "virtio_vsock.queue_size=16", "direction=host_to_guest"}) == 262144);
  CHECK(most({}) == 0);
}

TEST_CASE("zerocopy: virtio_transport_can_zcopy falls back to copying when the pages do not fit the guest's tx queue",
          "[virtio][zerocopy]")
{
  // A 64 KiB send() is 16 pages, + 1 for the header: a 16-entry tx queue is
  // too small, a 32-entry one is not; vhost has no such check. 16 whole
  // messages (a shorter last one would fit).
  auto zc = [](const char* dir, const char* queue) {
    return run({std::string("direction=") + dir, std::string("virtio_vsock.queue_size=") + queue,
                "virtio_vsock.preset=linux-6.6", "workload.zerocopy=true", "workload.total_bytes=1MiB"});
  };
  auto small = zc("guest_to_host", "16");
  CHECK(metric(small, "zerocopy_sends_per_MB") == 0);
  CHECK(metric(small, "zerocopy_fallbacks_per_MB") > 0);
  CHECK(metric(small, "pages_pinned_per_MB") == 0);
  CHECK(metric(zc("guest_to_host", "32"), "zerocopy_sends_per_MB") > 0);
  CHECK(metric(zc("host_to_guest", "16"), "zerocopy_sends_per_MB") > 0);
}

TEST_CASE("zerocopy: less CPU per byte for 64 KiB messages and more for 1 KiB ones", "[virtio][zerocopy][cpu]")
{
  // A 1 KiB send() saves a 1 KiB copy and an allocation but pays a pinned
  // page, its notification and its share of the error queue reads; a 64 KiB
  // one saves sixteen pages' copies for the same per-call work. (At 4 KiB,
  // near the "around 10 KB" of Documentation/networking/msg_zerocopy.rst,
  // the sign depends on the copy bandwidth and is not checked.)
  for (const char* dir : {"guest_to_host", "host_to_guest"})
    for (const char* size : {"1KiB", "64KiB", "128KiB"}) {
      INFO(dir << " " << size);
      std::vector<std::string> sets = {"virtio_vsock.preset=linux-6.6", std::string("direction=") + dir,
                                       std::string("workload.message_size=") + size};
      auto copy = run(sets);
      sets.push_back("workload.zerocopy=true");
      auto zc = run(sets);
      if (std::string(size) == "1KiB")
        CHECK(cpu_per_byte(zc) > cpu_per_byte(copy));
      else
        CHECK(cpu_per_byte(zc) < cpu_per_byte(copy));
    }
}
