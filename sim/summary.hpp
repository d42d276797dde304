// The figures every transport reports from the engine's accounting once a
// run is over (the interface's required metrics), and the check that no CPU
// was busy longer than the run lasted.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace vsim {

// CPU cycles the threads spent in the given categories.
double thread_cycles(const std::vector<SimThread*>& threads, std::initializer_list<Cat> cats);
// The interrupt work done on the threads' CPUs while they held them.
double interrupted_cycles(const std::vector<SimThread*>& threads);

// Throws std::logic_error ("invariant violated: CPU ... busy for ...") if a
// CPU was busy longer than the run: until `elapsed` or the last thread's end.
void check_cpu_busy(const World& world, Time elapsed);

// elapsed_seconds, throughput_MBps, writer/reader sys and user seconds (sys
// includes hypervisor time, as `time` reports it), guest/host CPU percent,
// and the engine's own counts (sim_events, sim_simcalls).
void append_run_metrics(std::map<std::string, double>& m, const World& world, Time elapsed, double clock_ghz,
                        std::uint64_t delivered, const std::vector<SimThread*>& writers,
                        const std::vector<SimThread*>& readers);

} // namespace vsim
