// The CSV (one row per point and metric) and the human tables (one cell per
// point holding min/max/avg/median) of a run.
#pragma once

#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

// Header `index,<swept keys...>,metric,unit,min,max,mean,median` (zip keys,
// then grid keys), one row per point per metric; numbers in the shortest form
// that reads back exactly; RFC 4180 quoting where needed; "\n" line ends. A
// failed point has one row: metric `failed`, the other cells empty.
std::string to_csv(const Experiment& ex, const std::vector<PointResult>& results);

// The human tables: per metric of `metrics` (all metrics found when empty), one
// table per combination of the outer sweep axes; cells "min/max/avg/median"
// ("failed" for a failed point, "hangs" for one whose simulated system hangs
// as its kernel would; a line after the tables names them).
std::string to_table(const Experiment& ex, const std::vector<PointResult>& results,
                     const std::vector<std::string>& metrics);

// Many metrics at once (`show --metrics all`): one table per group of
// metrics (throughput; times; CPU percentages; per CPU; per thread; counts
// per MB; queue levels; queue occupancy; ring sizes; simulator facts; any
// other), a row per point (its index and swept values) and a column per
// metric, the cells as to_table's. The column headers leave out what every
// metric of the group shares (`thread.` and `_percent`: the title says so).
// No line is wider than `width` columns unless one metric column alone is:
// a wider group is split into several tables, each repeating the point
// column. The notes on failed and extrapolated points end it, as to_table's.
// With no metrics named: every metric, but the CPUs' and threads' (cpu.*,
// thread.*) that are 0 in every iteration of every point, which one line
// under the title names (issue 51, item 9).
std::string to_grouped_table(const Experiment& ex, const std::vector<PointResult>& results,
                             const std::vector<std::string>& metrics, std::size_t width);

// What follows the tables of `run` and `show`: the effective values that
// differ between points (what the transport actually used), and what the
// units mean.
// effective: each point's effective values (empty: computed from the
// points' parameters).
std::string table_notes(const Experiment& ex, std::vector<std::vector<Effective>> effective = {});

} // namespace vsim::app
