#include "app/experiment/metric_expr.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "transports/simulate.hpp"

namespace vsim::app {

std::string check_metric_name(const std::string& name, const ParamRegistry& reg)
{
  if (!MetricExpr::is_key(name))
    return find_metric(name) != nullptr
               ? ""
               : fmt::format("unknown metric '{}' (allowed: {}; or a numeric experiment key such as "
                             "workload.total_bytes)",
                             name, known_metrics_list());
  const ParamSpec* spec = reg.find(name);
  if (spec == nullptr)
    return fmt::format("unknown experiment key '{}' (allowed: metric names, numeric experiment keys)", name);
  if (spec->kind != ParamKind::Integer && spec->kind != ParamKind::Size && spec->kind != ParamKind::Number)
    return fmt::format("experiment key '{}' is not a number (it is a {}; allowed: integer, size and number keys)", name,
                       to_string(spec->kind));
  return "";
}

// Recursive descent over
//   expr := term (('+' | '-') term)*     term := factor (('*' | '/') factor)*
//   factor := NUMBER | NAME | '(' expr ')' | '-' factor
// emitting reverse Polish.
class MetricExprParser {
public:
  MetricExprParser(const std::string& text, const std::function<std::string(const std::string&)>& check)
      : text_(text), check_(check)
  {
  }

  MetricExpr parse()
  {
    skip_blanks();
    if (pos_ == text_.size())
      fail("expected a metric name or an expression over metric names");
    expr();
    if (pos_ != text_.size())
      fail(fmt::format("unexpected '{}' (allowed: metric names, numbers, + - * /, parentheses)", text_[pos_]));
    return std::move(out_);
  }

private:
  [[noreturn]] void fail(const std::string& what) const { throw MetricExpr::Error{pos_, what}; }

  void skip_blanks()
  {
    while (pos_ < text_.size() && text_[pos_] == ' ')
      ++pos_;
  }
  bool take(char c)
  {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      skip_blanks();
      return true;
    }
    return false;
  }
  void emit(char op) { out_.rpn_.push_back(MetricExpr::Step{op}); }

  void expr()
  {
    term();
    for (;;) {
      if (take('+')) {
        term();
        emit('+');
      } else if (take('-')) {
        term();
        emit('-');
      } else
        return;
    }
  }
  void term()
  {
    factor();
    for (;;) {
      if (take('*')) {
        factor();
        emit('*');
      } else if (take('/')) {
        factor();
        emit('/');
      } else
        return;
    }
  }
  void factor()
  {
    if (take('-')) {
      factor();
      emit('~');
      return;
    }
    if (take('(')) {
      expr();
      if (!take(')'))
        fail("expected ')'");
      return;
    }
    const std::size_t start = pos_;
    if (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      const char* begin = text_.c_str() + pos_;
      char* end = nullptr;
      const double d = std::strtod(begin, &end);
      if (end == begin || !std::isfinite(d))
        fail("expected a number");
      pos_ += static_cast<std::size_t>(end - begin);
      out_.rpn_.push_back(MetricExpr::Step{'n', d});
      skip_blanks();
      return;
    }
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
    if (pos_ == start)
      fail(pos_ == text_.size()
               ? "expected a metric name, a number or '(' at the end"
               : fmt::format("unexpected '{}' (allowed: metric names, numbers, + - * /, parentheses)", text_[pos_]));
    const std::string name = text_.substr(start, pos_ - start);
    if (std::string why = check_(name); !why.empty()) {
      pos_ = start;
      fail(why);
    }
    auto at = std::find(out_.names_.begin(), out_.names_.end(), name);
    if (at == out_.names_.end())
      at = out_.names_.insert(out_.names_.end(), name);
    out_.rpn_.push_back(MetricExpr::Step{'v', 0, static_cast<std::size_t>(at - out_.names_.begin())});
    skip_blanks();
  }

  const std::string& text_;
  const std::function<std::string(const std::string&)>& check_;
  std::size_t pos_ = 0;
  MetricExpr out_;
};

MetricExpr MetricExpr::parse(const std::string& text, const std::function<std::string(const std::string&)>& check_name)
{
  return MetricExprParser(text, check_name).parse();
}

std::optional<double> MetricExpr::eval(const std::map<std::string, double>& m, const Params& point,
                                       std::string* missing) const
{
  std::vector<double> stack;
  for (const Step& s : rpn_) {
    if (s.op == 'n') {
      stack.push_back(s.number);
    } else if (s.op == 'v') {
      const std::string& name = names_[s.name];
      std::optional<double> v;
      if (!is_key(name)) {
        if (auto f = m.find(name); f != m.end())
          v = f->second;
      } else if (point.has(name)) {
        const Value& value = point.get(name);
        if (const auto* i = std::get_if<std::int64_t>(&value))
          v = static_cast<double>(*i);
        else if (const auto* d = std::get_if<double>(&value))
          v = *d;
      }
      if (!v) {
        if (missing != nullptr)
          *missing = name;
        return std::nullopt;
      }
      stack.push_back(*v);
    } else if (s.op == '~') {
      stack.back() = -stack.back();
    } else {
      const double b = stack.back();
      stack.pop_back();
      double& a = stack.back();
      a = s.op == '+' ? a + b : s.op == '-' ? a - b : s.op == '*' ? a * b : a / b;
    }
  }
  return stack.at(0);
}

} // namespace vsim::app
