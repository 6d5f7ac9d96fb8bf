#include "convert.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "errors.h"

namespace meshsim::python {

namespace {

// The whole of `text` as a number, or false.
template <typename T>
bool ParseNumber(const std::string& text, T* out) {
  if (text.empty() || text.find_first_of("0123456789") == std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    *out = std::strtod(text.c_str(), &end);
  } else {
    *out = std::strtoll(text.c_str(), &end, 10);
  }
  return errno == 0 && *end == '\0';
}

}  // namespace

py::object ScalarToPython(const std::string& text) {
  if (text == "true" || text == "false") return py::bool_(text == "true");
  long long whole = 0;
  if (ParseNumber(text, &whole)) return py::int_(whole);
  double number = 0;
  if (ParseNumber(text, &number)) return py::float_(number);
  return py::str(text);
}

py::object YamlToPython(const YAML::Node& node) {
  if (node.IsMap()) {
    py::dict d;
    for (const auto& kv : node) d[py::str(kv.first.Scalar())] = YamlToPython(kv.second);
    return d;
  }
  if (node.IsSequence()) {
    py::list l;
    for (const auto& item : node) l.append(YamlToPython(item));
    return l;
  }
  if (node.IsNull()) return py::none();
  // A quoted scalar has the non-specific tag "!": it is a string whatever it looks like.
  if (node.Tag() == "!") return py::str(node.Scalar());
  return ScalarToPython(node.Scalar());
}

std::string CellText(py::handle value, const std::string& column) {
  if (value.is_none()) return "";
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(value)) return std::to_string(value.cast<long long>());
  if (py::isinstance<py::float_>(value)) {
    const double v = value.cast<double>();
    if (std::isnan(v)) return "";
    if (v == std::trunc(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
    return fmt::format("{}", v);
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  Raise(ArgumentError(column, "expected None, a bool, a number or a string, found " +
                                  py::repr(value).cast<std::string>()));
}

}  // namespace meshsim::python
