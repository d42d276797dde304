// vsocksim describe: the parameters, a topic, the platforms, Markdown.
#include "cli_support.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace cli_test;

TEST_CASE("cli: describe lists every parameter with type, unit and default, the platforms and Markdown", "[cli]")
{
  TempDir dir;
  SECTION("all parameters")
  {
    const Run r = run_cli(dir, {"describe"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const std::vector<std::string> lines = lines_of(r.out);
    auto it = std::find(lines.begin(), lines.end(), "hv_sock.sndbuf");
    REQUIRE(it != lines.end());
    REQUIRE(lines.end() - it >= 5);
    CHECK(it[1] == "  type:    size (bytes)");
    CHECK(it[2] == "  default: default");
    CHECK_THAT(it[3], Catch::StartsWith("  allowed: ") && Catch::Contains("default"));
    for (const char* key :
         {"workload.message_size", "workload.total_bytes", "costs.clock_ghz", "seed", "iterations", "platform",
          "transport", "direction", "hv_sock.rcvbuf", "hv_sock.send_loop", "hv_sock.pending_send_size"})
      CHECK(std::count(lines.begin(), lines.end(), key) == 1);
    CHECK_THAT(r.out, Catch::Contains("hyperv-2019"));
  }
  SECTION("one topic")
  {
    const Run r = run_cli(dir, {"describe", "hv_sock"});
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::StartsWith("hv_sock.") && Catch::Contains("hv_sock.sndbuf\n  type:"));
    CHECK_THAT(r.out, !Catch::Contains("workload.message_size"));
  }
  SECTION("platforms")
  {
    const Run r = run_cli(dir, {"describe", "platforms"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const std::vector<std::string> lines = lines_of(r.out);
    CHECK(std::count(lines.begin(), lines.end(), "hyperv-2019") == 1);
    CHECK_THAT(r.out, Catch::Contains("transport: hv_sock") && Catch::Contains("costs.clock_ghz"));
  }
  SECTION("--markdown")
  {
    const Run r = run_cli(dir, {"describe", "--markdown"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::StartsWith("# "));
    CHECK_THAT(r.out, Catch::Contains("| `hv_sock.sndbuf` |") && Catch::Contains("hyperv-2019"));
  }
}
