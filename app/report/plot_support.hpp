// What the figures of a result (plot.cpp) and of a trace's timeline
// (plot_timeline.cpp) share: gnuplot strings, terminals, running gnuplot,
// and reading the JSON they draw.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vsim::app::plotting {

// A gnuplot string in double quotes (which expand `command` as the shell
// would: a backquote becomes a quote too).
std::string quote(std::string s);
// A gnuplot string of free text (titles, labels, as quote): a backslash
// stays one, a newline starts a line.
std::string quote_text(const std::string& text);
// gnuplot's terminal for a figure format ("svg" or "png").
std::string terminal(const std::string& ext);
// Runs gnuplot on a script file; throws when it is missing or fails.
void run_gnuplot(const std::string& script);
// The JSON document at path (`what`: result or trace, for the messages);
// InputError when it cannot be read or is not JSON.
nlohmann::ordered_json read_json(const std::string& path, const char* what);

} // namespace vsim::app::plotting
