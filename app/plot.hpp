// `vsocksim plot RESULT`: figures of a result (JSON of `run`) rendered with
// gnuplot to SVG and PNG: throughput against message size (log x), one line
// per design choice; CPU cost per GB (guest and host) as bars; predicted
// against measured when the result carries published figures. The data
// files and the gnuplot script are kept beside the figures.
#pragma once

#include <string>
#include <vector>

namespace vsim::app {

// Returns the files written. Throws InputError for an unreadable result,
// std::runtime_error when gnuplot is missing or fails.
std::vector<std::string> plot_result(const std::string& result_path, const std::string& out_dir);

}  // namespace vsim::app
