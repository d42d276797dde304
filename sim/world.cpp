#include "sim/world.hpp"

#include "sim/horizon.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace vsim {

World::World(bool exact) : exact_(exact)
{
  // SimGrid's own messages would go to stderr; results must not depend on
  // them and users should not see them.
  xbt_log_control_set("root.thresh:critical");
  // VSIM_CONTEXTS=thread selects SimGrid's thread contexts (slow; for
  // sanitizer builds, which do not follow raw stack switching). Results are
  // the same with every context factory.
  static std::string name = "vsocksim";
  static std::string factory;
  static std::vector<char*> argv;
  argv = {name.data()};
  if (const char* f = std::getenv("VSIM_CONTEXTS")) {
    factory = std::string("--cfg=contexts/factory:") + f;
    argv.push_back(factory.data());
  }
  static int argc;
  argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  engine_ = std::make_unique<sg4::Engine>(&argc, argv.data());
  zone_ = sg4::create_full_zone("machine");
  // Counts and level changes stamped after the engine's clock may still fall
  // after the end of the run: they are kept apart until then.
  set_horizon([] { return sg4::Engine::get_clock(); });
}

World::~World() { set_horizon(nullptr); }

std::vector<Cpu*> World::add_cpus(Side side, const std::string& prefix, int n)
{
  std::vector<Cpu*> out;
  for (int i = 0; i < n; ++i)
    out.push_back(&add_cpu(side, prefix + std::to_string(i)));
  return out;
}

Cpu& World::add_cpu(Side side, const std::string& name)
{
  // Speed 1 flop per time unit: one flop is one cycle of the platform clock.
  sg4::Host* host = zone_->create_host(name, 1.0);
  cpus_.push_back(std::make_unique<Cpu>(static_cast<int>(cpus_.size()), side, name, host));
  return *cpus_.back();
}

int World::register_thread(SimThread* t)
{
  registered_.push_back(t);
  return static_cast<int>(registered_.size()) - 1;
}

double World::engine_clock() const
{
  return sg4::Engine::get_clock();
}

void World::run()
{
  if (!sealed_) {
    zone_->seal();
    sealed_ = true;
  }
  for (auto& t : threads_)
    t->start();
  engine_->run();
  if (!error_.empty())
    throw std::logic_error(error_);
  // The run ends when its last non-daemon thread does; work that started
  // later (daemons run ahead) is not part of it.
  Time end = 0;
  bool any = false;
  for (const auto& t : threads_)
    if (!t->daemon()) {
      end = std::max(end, t->finished_at());
      any = true;
    }
  if (any)
    for (const auto& t : threads_)
      t->drop_work_from(end);
  end_ = end;
  set_horizon(nullptr);
}

}  // namespace vsim
