// The one entry point the run driver calls: simulate one iteration of one
// point, whichever transport the point names; and the declaration of every
// metric a simulation reports (name, unit, meaning).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/params.hpp"

namespace vsim {

std::map<std::string, double> simulate_iteration(const Params& params, std::uint32_t iteration);

struct MetricDoc {
  std::string name;
  std::string unit;
  std::string doc;
};
// Every metric any transport reports, in documentation order.
const std::vector<MetricDoc>& metric_docs();
const MetricDoc* find_metric(const std::string& name);

}  // namespace vsim
