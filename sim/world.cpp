#include "sim/world.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <stdexcept>

namespace sg4 = simgrid::s4u;

namespace vsim {

World::World(bool exact) : exact_(exact)
{
  // SimGrid's own messages would go to stderr; results must not depend on
  // them and users should not see them.
  xbt_log_control_set("root.thresh:critical");
  static int argc = 1;
  static char name[] = "vsocksim";
  static char* argv[] = {name, nullptr};
  engine_ = std::make_unique<sg4::Engine>(&argc, argv);
  zone_ = sg4::create_full_zone("machine");
}

World::~World() = default;

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
}

}  // namespace vsim
