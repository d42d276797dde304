// Looking at results after the run, without simulating:
// `vsocksim show RESULT` re-prints a result with other metrics or formats,
// `vsocksim compare A B` (or one result and two of its points) prints each
// metric side by side with the relative change and whether the change is
// larger than the spread over the iterations.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/report/result_file.hpp" // ResultFile, read_result
#include "app/run/runner.hpp"

namespace vsim::app {

// metrics: names to show (empty: the run's report.metrics); format: table,
// json or csv; stat: what a table cell shows (empty: the run's report.stat).
// Asked for more than kGroupedAbove metrics (or all), the table format
// groups them (to_grouped_table), at most `width` columns wide.
inline constexpr std::size_t kGroupedAbove = 3;
std::string show_result(const std::string& path, const std::vector<std::string>& metrics, const std::string& format,
                        const std::string& stat = "", std::size_t width = 100);

// The width tables are fitted to: COLUMNS when it is a positive number,
// else the terminal's on a terminal, else 100.
std::size_t terminal_columns();

// Two results point by point (points paired by their swept values, or the
// only point of each), or, with `points`, two points of result a.
std::string compare_results(const std::string& a, const std::string& b,
                            std::optional<std::pair<std::size_t, std::size_t>> points,
                            const std::vector<std::string>& metrics);

} // namespace vsim::app
