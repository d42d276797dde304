// vsocksim --version.
#include "cli_support.hpp"

#include <string>

using namespace cli_test;

TEST_CASE("cli: --version prints the version, the git commit and SimGrid's version", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"--version"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::StartsWith("vsocksim 0.") && Catch::Contains(" (git ") && Catch::Contains("), SimGrid 3."));
}
