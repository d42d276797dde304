// Arithmetic over metric names, numeric experiment keys and numbers
// (+ - * /, parentheses), as the `metric` column of a measurements file
// (app/validation/measurements.hpp) and a search's objectives and
// constraints (docs/search.md) write it:
//   throughput_MBps*0.008                                    Gbit/s
//   throughput_MBps*8/(host_cpu_percent+guest_cpu_percent)   Mbit/s per %CPU
//   writer_sys_seconds*1e10/workload.total_bytes             s per 10 GB
// Evaluated on one iteration's metrics at a point.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/params.hpp"

namespace vsim::app {

class MetricExpr {
public:
  struct Error {
    std::size_t offset; // byte of the text at fault
    std::string what;
  };
  // `check_name` returns "" for a name it accepts, else what is wrong. A
  // name with a '.' is an experiment key. Throws Error.
  static MetricExpr parse(const std::string& text, const std::function<std::string(const std::string&)>& check_name);

  // The metric names and experiment keys it reads, in order of first use.
  const std::vector<std::string>& names() const { return names_; }
  // True when the expression is one metric name and nothing else.
  bool is_name() const { return rpn_.size() == 1 && rpn_[0].op == 'v' && !is_key(names_[0]); }
  static bool is_key(const std::string& name) { return name.find('.') != std::string::npos; }
  // Its value on one iteration's metrics at a point; nullopt when a metric it
  // reads is absent, or a key has no numeric value (then *missing names it).
  std::optional<double> eval(const std::map<std::string, double>& m, const Params& point,
                             std::string* missing = nullptr) const;

private:
  struct Step {
    char op; // 'n' number, 'v' metric or key, '~' negate, or one of + - * /
    double number = 0;
    std::size_t name = 0; // index into names_
  };
  std::vector<Step> rpn_; // reverse Polish: evaluated with a stack
  std::vector<std::string> names_;
  friend class MetricExprParser;
};

// "" when a name in a metric expression is a metric any transport reports
// or a numeric experiment key, else what is wrong and what is allowed.
std::string check_metric_name(const std::string& name, const ParamRegistry& reg);

} // namespace vsim::app
