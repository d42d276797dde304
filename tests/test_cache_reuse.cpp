// Where another core's data are when copied (models/cache_reuse.hpp): the
// eviction edge of a buffer's lines, hand-worked.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/explain.hpp"
#include "app/report/result_json.hpp"
#include "models/cache_reuse.hpp"
#include "round_trip_support.hpp"
#include "sim/cpu.hpp"
#include "transports/simulate.hpp"
#include "virtio_support.hpp"

using namespace vsim;

TEST_CASE("a buffer's oldest lines leave the writer's L2 first", "[cache_reuse]")
{
  Cpu writer(0, Side::Host, "hcpu0");
  Cpu reader(1, Side::Guest, "vcpu0");
  const double l2 = 256 * 1024;
  // 4096 bytes written while 8192 came in (a zeroed 8 KiB block): 2 per byte.
  const WriteStamp w{&writer, 1000, 1000 + 8192, 4096};

  SECTION("just written: all in the writer's L2")
  {
    CHECK(evicted_bytes(w, 1000 + 8192, 0, 4096, l2) == 0);
    const CopySplit s = split_copy(w, &reader, 1000 + 8192, 0, 4096, l2);
    CHECK(s.hot == 0);
    CHECK(s.l3 == 0);
  }
  SECTION("l2 + 2048 bytes after line 0: the first 1024 bytes are gone")
  {
    const std::uint64_t now = 1000 + 262144 + 2048;
    CHECK(evicted_bytes(w, now, 0, 4096, l2) == 1024);
    CHECK(evicted_bytes(w, now, 512, 4096, l2) == 512); // a read from offset 512
    CHECK(evicted_bytes(w, now, 2048, 2048, l2) == 0);
    CHECK(evicted_bytes(w, now, 0, 100, l2) == 100);
  }
  SECTION("long after: all of it")
  {
    CHECK(evicted_bytes(w, 10'000'000, 0, 4096, l2) == 4096);
    CHECK(split_copy(w, &reader, 10'000'000, 0, 4096, l2).l3 == 4096);
  }
  SECTION("the writer reading its own buffer: hot until evicted")
  {
    const CopySplit s = split_copy(w, &writer, 1000 + 262144 + 2048, 0, 4096, l2);
    CHECK(s.hot == 3072);
    CHECK(s.l3 == 1024);
  }
  SECTION("not modelled, or not stamped: another core's L2")
  {
    const CopySplit off = split_copy(w, &reader, 10'000'000, 0, 4096, 0);
    CHECK(off.hot == 0);
    CHECK(off.l3 == 0);
    const CopySplit unknown = split_copy(WriteStamp{}, &reader, 10'000'000, 0, 4096, l2);
    CHECK(unknown.l3 == 0);
  }
  SECTION("a write that brought nothing in: all or nothing")
  {
    const WriteStamp none{&writer, 5000, 5000, 4096};
    CHECK(evicted_bytes(none, 5000 + 262144, 0, 4096, l2) == 0);
    CHECK(evicted_bytes(none, 5000 + 262145, 0, 4096, l2) == 4096);
  }
}

TEST_CASE("a core's fill count adds what came into its cache", "[cache_reuse]")
{
  Cpu c(0, Side::Guest, "vcpu0");
  CHECK(c.cache_fills() == 0);
  c.fill_cache(4096);
  c.fill_cache(8192.0);
  CHECK(c.cache_fills() == 12288);
}

// End to end on virtio-vsock (each simulation in a child process), every
// cost set (tests/virtio_support.hpp): copies out of the L3 happen where
// a stream leaves hundreds of KiB between a line's write and its read, not
// in a ping-pong, and with the L3 faster than another core's L2 they make
// the stream cheaper.
namespace {

vsim::app::Experiment load_l2(const std::vector<std::string>& sets, bool stream = true)
{
  using namespace vsim::app;
  std::string text = std::string(vsim::testing::kVirtioBase) + "  virtio_l3_copy_bytes_per_cycle: 16\n";
  if (!stream) // round trips count transactions, not bytes
    text.replace(text.find("  total_bytes: 1MB\n"), 19, "");
  return load_experiment_text(text, "t.yaml", sets, registry());
}

vsim::app::PointResult run_l2(const std::vector<std::string>& sets, bool stream = true)
{
  const auto r = vsim::test::run_all(load_l2(sets, stream));
  REQUIRE(r.size() == 1);
  REQUIRE(r[0].iterations.size() == 1);
  return r[0];
}

using vsim::test::figure;

} // namespace

TEST_CASE("a stream copies out of the L3, a ping-pong out of its peer's L2", "[cache_reuse][virtio_vsock]")
{
  for (const char* dir : {"guest_to_host", "host_to_guest"}) {
    INFO(dir);
    const std::string d = std::string("direction=") + dir;
    const auto off = run_l2({d, "costs.virtio_l2_bytes=0", "workload.total_bytes=4MB"});
    const auto on = run_l2({d, "costs.virtio_l2_bytes=65536", "workload.total_bytes=4MB"});
    CHECK(figure(off, "l3_copy_bytes_per_MB") == 0);
    // Two copies of every byte whose source another core wrote (vhost's
    // and the reader's), a good part of them evicted with a 64 KiB L2.
    CHECK(figure(on, "l3_copy_bytes_per_MB") > 2e5);
    CHECK(figure(on, "l3_copy_bytes_per_MB") <= 2e6 + 1);
    const double cpu_off =
        (figure(off, "guest_cpu_percent") + figure(off, "host_cpu_percent")) / figure(off, "throughput_MBps");
    const double cpu_on =
        (figure(on, "guest_cpu_percent") + figure(on, "host_cpu_percent")) / figure(on, "throughput_MBps");
    CHECK(cpu_on < cpu_off);
  }
  const auto pp = run_l2({"costs.virtio_l2_bytes=262144", "workload.pattern=ping_pong", "workload.message_size=4KiB",
                          "workload.transactions=200"},
                         false);
  CHECK(figure(pp, "l3_copy_bytes_per_MB") == 0);
}

TEST_CASE("explain says how much was copied out of the L3", "[cache_reuse][explain]")
{
  using namespace vsim::app;
  auto text_of = [](const std::string& l2) {
    const Experiment ex = load_l2({"costs.virtio_l2_bytes=" + l2, "workload.total_bytes=4MB"});
    const auto r = vsim::test::run_all(ex);
    const nlohmann::json doc = nlohmann::json::parse(to_json(ex, r, make_manifest(ex, "test")).dump());
    return explain_point(doc["points"][0], 0);
  };
  CHECK(text_of("65536").find("copies out of the L3: ") != std::string::npos);
  CHECK(text_of("0").find("copies out of the L3") == std::string::npos);
}
