// The committed parameter reference is the one the declarations generate.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "app/describe.hpp"
#include "app/registry.hpp"

TEST_CASE("docs/parameters.md matches the parameter declarations", "[docs]")
{
  std::ifstream f(std::string(VSIM_SOURCE_DIR) + "/docs/parameters.md");
  REQUIRE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  INFO("regenerate with: build/vsocksim describe --markdown > docs/parameters.md");
  CHECK(ss.str() == vsim::app::describe_markdown(vsim::app::registry()));
}
