// Values between C++ and Python: typed fields out, cells and YAML text in.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <type_traits>
#include <vector>

#include "sim/plan/plan_names.h"
#include "sim/plan/stages.h"

namespace YAML {
class Node;
}

namespace meshsim::python {
namespace py = pybind11;

// A field of a plan or summary as the Python value of its type: int, float, bool, str;
// the plan's choices (schedule, recompute) by their YAML names; plan.stage_layers as
// results.csv writes it ("7/8/8/7"; "" for the default split).
template <typename T>
py::object ToPython(const T& v) {
  if constexpr (std::is_same_v<T, ScheduleKind>) {
    return py::str(NameOf(ScheduleNames(), v));
  } else if constexpr (std::is_same_v<T, Recompute>) {
    return py::str(NameOf(RecomputeNames(), v));
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    return py::str(StageLayersText(v));
  } else {
    return py::cast(v);
  }
}

// A YAML scalar's text as Python reads it: true/false -> bool, a whole number -> int, a
// decimal number -> float, anything else -> the string itself.
py::object ScalarToPython(const std::string& text);

// A YAML tree as dicts, lists and ScalarToPython values (quoted scalars stay strings).
py::object YamlToPython(const YAML::Node& node);

// A Python value as results.csv writes the cell: None and NaN -> "", bool -> true/false,
// int -> decimal, a whole float -> decimal without a point (so that it reads back into an
// integer column, as a float column from pandas would hold it), other floats ->
// shortest round-trip text, str -> itself. Anything else is bad input naming `column`.
std::string CellText(py::handle value, const std::string& column);

}  // namespace meshsim::python
