// The committed parameter reference is the one the declarations generate.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/experiment/describe.hpp"
#include "app/experiment/registry.hpp"

TEST_CASE("docs/parameters.md matches the parameter declarations", "[docs]")
{
  std::ifstream f(std::string(VSIM_SOURCE_DIR) + "/docs/parameters.md");
  REQUIRE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  INFO("regenerate with: build/vsocksim describe --markdown > docs/parameters.md");
  CHECK(ss.str() == vsim::app::describe_markdown(vsim::app::registry()));
}

// CTest splits a discovered test's name at ';': such a test would run no
// assertion and still be reported as passed.
TEST_CASE("no test case name contains a semicolon", "[docs]")
{
  for (const auto& entry : std::filesystem::directory_iterator(std::string(VSIM_SOURCE_DIR) + "/tests")) {
    if (entry.path().extension() != ".cpp")
      continue;
    std::ifstream f(entry.path());
    std::string line;
    for (int n = 1; std::getline(f, line); ++n) {
      auto at = line.find("TEST_CASE(\"");
      if (at == std::string::npos)
        continue;
      std::string name = line.substr(at + 11, line.find('"', at + 11) - (at + 11));
      INFO(entry.path().filename().string() << ":" << n << ": " << name);
      CHECK(name.find(';') == std::string::npos);
    }
  }
}
