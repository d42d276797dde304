// Size parsing and formatting (app/units).
#include <catch2/catch.hpp>

#include "app/experiment/units.hpp"

using vsim::app::format_size;
using vsim::app::parse_size;

namespace {

// The error text parse_size gives for TEXT ("(ok)" when it parses).
std::string why_not(const std::string& text)
{
  std::string why;
  return parse_size(text, &why) ? std::string("(ok)") : why;
}

} // namespace

TEST_CASE("sizes: every unit", "[units]")
{
  CHECK(parse_size("7") == 7);
  CHECK(parse_size("0") == 0);
  CHECK(parse_size("7B") == 7);
  CHECK(parse_size("2KiB") == 2048);
  CHECK(parse_size("3MiB") == 3 * 1048576);
  CHECK(parse_size("1GiB") == 1073741824);
  CHECK(parse_size("2kB") == 2000);
  CHECK(parse_size("3MB") == 3000000);
  CHECK(parse_size("4GB") == 4000000000);
}

TEST_CASE("sizes: a space between number and unit, surrounding blanks", "[units]")
{
  CHECK(parse_size("64 KiB") == 65536);
  CHECK(parse_size(" 64KiB ") == 65536);
  CHECK(parse_size("64\tKiB") == 65536);
}

TEST_CASE("sizes: decimals that make whole bytes", "[units]")
{
  CHECK(parse_size("1.5KiB") == 1536);
  CHECK(parse_size("0.5MB") == 500000);
  CHECK(parse_size("2.000B") == 2);
  CHECK(parse_size(".25KiB") == 256);
  CHECK(parse_size("1.0000000000000000000000000000000000000000000KiB") == 1024);
  CHECK(why_not("1.5B") == "'1.5B' is not a whole number of bytes");
  CHECK(why_not("0.1KiB") == "'0.1KiB' is not a whole number of bytes");
  CHECK(why_not("0.00000000000000000000000000000000000000000001GB") ==
        "'0.00000000000000000000000000000000000000000001GB' is not a whole number of bytes");
}

TEST_CASE("sizes: unit names are exact", "[units]")
{
  CHECK(why_not("12 KB") == "unknown unit 'KB' in '12 KB' (allowed: B, KiB, MiB, GiB, kB, MB, GB)");
  CHECK(why_not("1kib") == "unknown unit 'kib' in '1kib' (allowed: B, KiB, MiB, GiB, kB, MB, GB)");
  CHECK(why_not("1TB") == "unknown unit 'TB' in '1TB' (allowed: B, KiB, MiB, GiB, kB, MB, GB)");
  CHECK(why_not("1e3") == "unknown unit 'e3' in '1e3' (allowed: B, KiB, MiB, GiB, kB, MB, GB)");
  CHECK(why_not("4 KiB B") == "unknown unit 'KiB B' in '4 KiB B' (allowed: B, KiB, MiB, GiB, kB, MB, GB)");
}

TEST_CASE("sizes: not a number, negative, empty", "[units]")
{
  const std::string allowed =
      "(allowed: a whole number of bytes, or <number><unit> with unit B, KiB, MiB, GiB, kB, MB, GB)";
  CHECK(why_not("KiB") == "'KiB' is not a size " + allowed);
  CHECK(why_not("default") == "'default' is not a size " + allowed);
  CHECK(why_not("-4KiB") == "'-4KiB' is negative " + allowed);
  CHECK(why_not("") == "empty size " + allowed);
  CHECK(why_not(".") == "'.' is not a size " + allowed);
}

TEST_CASE("sizes: overflow is an error, the largest value is not", "[units]")
{
  CHECK(parse_size("9223372036854775807") == INT64_MAX);
  CHECK(parse_size("8589934591GiB") == 8589934591ll << 30);
  CHECK(why_not("9223372036854775808") ==
        "'9223372036854775808' is too large (allowed: at most 9223372036854775807 bytes)");
  CHECK(why_not("8589934592GiB") == "'8589934592GiB' is too large (allowed: at most 9223372036854775807 bytes)");
  CHECK(why_not("99999999999999999999999999999999999999999GB") ==
        "'99999999999999999999999999999999999999999GB' is too large (allowed: at most 9223372036854775807 bytes)");
}

TEST_CASE("sizes: formatting picks the shortest exact unit", "[units]")
{
  CHECK(format_size(0) == "0B");
  CHECK(format_size(7) == "7B");
  CHECK(format_size(65536) == "64KiB");
  CHECK(format_size(1536) == "1536B");
  CHECK(format_size(1ll << 30) == "1GiB");
  CHECK(format_size(1000) == "1kB");
  CHECK(format_size(1000000) == "1MB");
  CHECK(format_size(1000000000000ll) == "1000GB");
  CHECK(format_size(212992) == "208KiB");
  for (std::int64_t v : {1ll, 1000ll, 4096ll, 123456789ll, 1ll << 40, 3000000000ll})
    CHECK(parse_size(format_size(v)) == v);
}
