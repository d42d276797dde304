// The Param builder (sim/params): each named field lands in the ParamSpec,
// the others keep their defaults, and the registry rejects declarations that
// name no kind or a range or words their kind does not take.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/params.hpp"

using vsim::Param;
using vsim::ParamError;
using vsim::ParamKind;
using vsim::ParamRegistry;

TEST_CASE("params: the builder fills the named fields", "[params]")
{
  ParamRegistry reg;
  reg.declare(Param("t.size")
                  .size()
                  .unit("bytes")
                  .def("default")
                  .range(1, 1ll << 30)
                  .words({"default"})
                  .doc("a size")
                  .kernel("net/x.c: f")
                  .derives_from({"t.preset"})
                  .scope("hv_sock")
                  .plausible(2, 3)
                  .basis("b")
                  .sources("[R1]")
                  .check([](const std::string& t) { return t == "7" ? "no 7" : ""; }));
  reg.declare(Param("t.flag").boolean());
  const auto* s = reg.find("t.size");
  REQUIRE(s != nullptr);
  CHECK(s->kind == ParamKind::Size);
  CHECK(s->unit == "bytes");
  CHECK(s->default_text == "default");
  CHECK(s->min == 1);
  CHECK(s->max == static_cast<double>(1ll << 30));
  CHECK(s->choices == std::vector<std::string>{"default"});
  CHECK(s->doc == "a size");
  CHECK(s->kernel_source == "net/x.c: f");
  CHECK(s->derives_from == std::vector<std::string>{"t.preset"});
  CHECK(s->scope == "hv_sock");
  CHECK(s->plausible_min == 2);
  CHECK(s->plausible_max == 3);
  CHECK(s->plausible_basis == "b");
  CHECK(s->plausible_sources == "[R1]");
  CHECK(s->check("7") == "no 7");
  const auto* f = reg.find("t.flag");
  REQUIRE(f != nullptr);
  CHECK(f->kind == ParamKind::Boolean);
  CHECK(f->default_text.empty());
  CHECK(std::isinf(f->min));
  CHECK(std::isinf(f->max));
  CHECK(std::isnan(f->plausible_min));
  CHECK(!f->check);
  CHECK(reg.all().size() == 2);
  CHECK(reg.all()[0].path == "t.size");
}

TEST_CASE("params: declarations the registry rejects", "[params]")
{
  ParamRegistry reg;
  CHECK_THROWS_AS(reg.declare(Param("t.nokind").doc("x")), ParamError);
  CHECK_THROWS_AS(reg.declare(Param("t.b").boolean().range(0, 1)), ParamError);
  CHECK_THROWS_AS(reg.declare(Param("t.i").integer().words({"w"})), ParamError);
  CHECK_THROWS_AS(Param("t.twice").integer().number(), ParamError);
  reg.declare(Param("t.c").choice().words({"a", "b"}));
  CHECK_THROWS_WITH(reg.declare(Param("t.c").text()), "parameter 't.c' declared twice");
  CHECK(reg.all().size() == 1);
}
