// Effective values (app/experiment/effective.hpp): what a point's transport actually
// uses, the warnings for swept values it clamps or ignores, and the points
// that are the same run.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/experiment/effective.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/results.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

Experiment load(const std::string& yaml)
{
  return load_experiment_text(yaml, "e.yaml", {}, registry());
}

double value(const std::vector<Effective>& e, const std::string& name)
{
  for (const auto& v : e)
    if (v.name == name)
      return v.value;
  FAIL("no effective value " << name);
  return 0;
}

const Effective& find(const std::vector<Effective>& e, const std::string& name)
{
  for (const auto& v : e)
    if (v.name == name)
      return v;
  throw std::runtime_error("no effective value " + name);
}

} // namespace

TEST_CASE("effective: hv_sock rings from SO_RCVBUF, clamps named, same runs found", "[effective]")
{
  const Experiment ex = load("transport: hv_sock\nworkload: {total_bytes: 2MB}\n"
                             "sweep:\n  grid:\n    hv_sock.rcvbuf: [default, 16KiB, 64KiB, 256KiB, 1MiB, 4MiB]\n");
  REQUIRE(ex.points.size() == 6);
  // hvs_open_connection(): max(sk_rcvbuf, 6 pages), at most 64 pages; the
  // kernel stores twice the SO_RCVBUF value, capped by rmem_max first.
  const std::vector<double> ring = {24576, 32768, 131072, 262144, 262144, 262144};
  for (std::size_t i = 0; i < ring.size(); ++i) {
    INFO("point " << i);
    const auto e = effective_values(ex.points[i].params);
    CHECK(value(e, "ring_bytes_host_to_guest") == ring[i]);
    CHECK(value(e, "ring_bytes_guest_to_host") == 24576);
    CHECK(find(e, "ring_bytes_host_to_guest").note.empty() == (i < 3));
  }
  const auto warnings = effective_warnings(ex);
  REQUIRE(warnings.size() == 3);
  CHECK(warnings[0] == "hv_sock.rcvbuf=262144: capped by hv_sock.sysctl_rmem_max at 212992; the kernel's 425984 "
                       "exceeds the largest ring, 262144 bytes: the ring is 262144 bytes (point 3)");
  CHECK(same_runs(ex) == std::vector<std::vector<std::size_t>>{{3, 4, 5}});
  CHECK(same_run_lines(ex).at(0).rfind("points 3, 4 and 5 are the same run", 0) == 0);
}

TEST_CASE("effective: a value below the default ring, and fixed sizing ignoring SO_SNDBUF", "[effective]")
{
  const Experiment ex = load("transport: hv_sock\nworkload: {total_bytes: 2MB}\nhv_sock: {ring_sizing: fixed}\n"
                             "sweep:\n  grid:\n    hv_sock.sndbuf: [4KiB, 64KiB]\n");
  for (const Point& p : ex.points) {
    const auto e = effective_values(p.params);
    CHECK(value(e, "ring_bytes_guest_to_host") == 24576);
    CHECK(find(e, "ring_bytes_guest_to_host").note.find("is ignored: hv_sock.ring_sizing is fixed") !=
          std::string::npos);
  }
  CHECK(same_runs(ex).size() == 1);
  const Experiment small = load("transport: hv_sock\nworkload: {total_bytes: 2MB}\nhv_sock: {sndbuf: 4KiB}\n");
  CHECK(find(effective_values(small.points[0].params), "ring_bytes_guest_to_host").note ==
        "hv_sock.sndbuf=4096: the kernel's 8192 is below the default ring, 24576 bytes: the ring is 24576 bytes");
  // Not swept but given: warned of all the same (issue 31), from the file or by --set.
  CHECK(effective_warnings(small) ==
        std::vector<std::string>{"hv_sock.sndbuf=4096: the kernel's 8192 is below the default ring, 24576 bytes: "
                                 "the ring is 24576 bytes (point 0)"});
  const Experiment set = load_experiment_text("transport: hv_sock\nworkload: {total_bytes: 2MB}\n", "t.yaml",
                                              {"hv_sock.rcvbuf=4MiB"}, registry());
  REQUIRE(effective_warnings(set).size() == 1);
  CHECK(effective_warnings(set)[0].rfind("hv_sock.rcvbuf=4194304: capped by hv_sock.sysctl_rmem_max", 0) == 0);
  // A default made moot by another choice is not the user's: no warning
  // (4.19 updates credit on every read, so the default threshold is unused).
  const Experiment moot = load("transport: virtio_vsock\nplatform: kvm-2019\nworkload: {total_bytes: 2MB}\n"
                               "virtio_vsock: {preset: linux-4.19}\n");
  CHECK(find(effective_values(moot.points[0].params), "credit_threshold_bytes").note != "");
  CHECK(effective_warnings(moot).empty());
}

TEST_CASE("effective: virtio packet sizes, credit and interrupt vCPU", "[effective]")
{
  const Experiment ex = load("transport: virtio_vsock\nplatform: kvm-2019\nworkload: {total_bytes: 2MB}\n"
                             "virtio_vsock: {preset: linux-4.19, max_pkt_size: 64KiB, rx_buf_size: 4KiB}\n"
                             "sweep:\n  zip:\n    virtio_vsock.mergeable_rx: [false, true]\n"
                             "    virtio_vsock.irq_vcpu: [0, 5]\n");
  const auto e0 = effective_values(ex.points[0].params);
  CHECK(value(e0, "guest_pkt_bytes") == 65536);
  CHECK(value(e0, "host_pkt_bytes") == 4096); // no mergeable rx, no host split: one rx buffer
  CHECK(find(e0, "host_pkt_bytes").note.find("cut to one rx buffer, 4096 bytes") != std::string::npos);
  CHECK(value(e0, "credit_threshold_bytes") == 0); // 4.19: credit update on every read
  const auto e1 = effective_values(ex.points[1].params);
  CHECK(value(e1, "host_pkt_bytes") == 65536);
  CHECK(value(e1, "irq_vcpu") == 1); // 5 mod 2 vCPUs
  const auto w = effective_warnings(ex);
  REQUIRE(w.size() == 2); // max_pkt_size given in the file, cut at point 0; the swept irq_vcpu
  CHECK(w[0].rfind("virtio_vsock.max_pkt_size=65536", 0) == 0);
  CHECK(w[0].find("(point 0)") != std::string::npos);
  CHECK(w[1] == "virtio_vsock.irq_vcpu=5: the guest has 2 vCPUs, the interrupts land on vCPU 1 (point 1)");
  CHECK(same_runs(ex).empty());
  const Experiment t = load("transport: virtio_vsock\nplatform: kvm-2019\nworkload: {total_bytes: 2MB}\n"
                            "virtio_vsock: {preset: linux-5.4}\nsweep:\n  grid:\n"
                            "    virtio_vsock.credit_update: [every_read, threshold]\n"
                            "    virtio_vsock.credit_threshold: [16KiB, 32KiB]\n");
  // every_read ignores the threshold: points 0 and 1 are one run.
  CHECK(same_runs(t) == std::vector<std::vector<std::size_t>>{{0, 1}});
}

TEST_CASE("effective: the notes under the tables show the effective values that differ", "[effective]")
{
  const Experiment ex = load("transport: hv_sock\nworkload: {total_bytes: 2MB}\n"
                             "sweep:\n  grid:\n    hv_sock.rcvbuf: [default, 64KiB, 1MiB]\n");
  const std::string notes = table_notes(ex);
  CHECK(notes.find("point   effective.ring_bytes_host_to_guest\n"
                   "0       24576\n"
                   "1       131072\n"
                   "2       262144\n") != std::string::npos);
  CHECK(notes.find("ring_bytes_guest_to_host") == std::string::npos); // the same at every point
  CHECK(notes.find("MB = 10^6 bytes; CPU percentages sum over CPUs") != std::string::npos);
}

TEST_CASE("effective: one rx buffer is warned of before the run (it hangs, as Linux would)", "[effective]")
{
  const Experiment ex = load("transport: virtio_vsock\nplatform: kvm-2019\nworkload: {total_bytes: 2MB}\n"
                             "virtio_vsock: {preset: linux-4.19, queue_size: 2}\n"
                             "sweep:\n  grid:\n    virtio_vsock.indirect_desc: [true, false]\n");
  CHECK(value(effective_values(ex.points[0].params), "rx_buffers") == 2);
  CHECK(value(effective_values(ex.points[1].params), "rx_buffers") == 1);
  const auto w = effective_warnings(ex);
  REQUIRE(w.size() == 1);
  CHECK(w[0].rfind("virtio_vsock.queue_size=2: the rx queue holds one rx buffer", 0) == 0);
  CHECK(w[0].find("(point 1)") != std::string::npos);
}

TEST_CASE("effective: requests in flight that can fill both windows are warned of before the run", "[effective]")
{
  // 3 requests of 1 MiB and responses of 512 KiB against 256 KiB windows:
  // both applications can end in send() with no credit (the programs'
  // deadlock, reported as a hang). One request in flight, a window that
  // holds the requests in flight (4 MiB), or one that holds the responses in
  // flight (2 MiB: the responder's sends end), cannot.
  const Experiment ex = load("transport: virtio_vsock\nplatform: kvm-2019\n"
                             "workload: {pattern: request_response, request_size: 1MiB, response_size: 512KiB, "
                             "transactions: 2}\n"
                             "sweep:\n  zip:\n    workload.outstanding: [3, 1, 3, 3]\n"
                             "    virtio_vsock.buf_alloc: [256KiB, 256KiB, 4MiB, 2MiB]\n");
  const auto w = effective_warnings(ex);
  REQUIRE(w.size() == 1);
  CHECK(w[0].rfind("virtio_vsock.buf_alloc=262144: 3 requests in flight (workload.outstanding) of 1048576 bytes "
                   "and their responses of 524288 bytes each exceed it",
                   0) == 0);
  CHECK(w[0].find("the run may hang") != std::string::npos);
  CHECK(w[0].find("(point 0)") != std::string::npos);
  // The default window too: the requests in flight are the user's choice.
  const auto d = effective_warnings(load("transport: virtio_vsock\nplatform: kvm-2019\n"
                                         "workload: {pattern: request_response, request_size: 1MiB, "
                                         "response_size: 512KiB, transactions: 2, outstanding: 3}\n"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].rfind("virtio_vsock.buf_alloc=262144: 3 requests in flight", 0) == 0);
}
