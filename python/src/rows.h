// Sweep and planner rows between C++ and Python.
//
// A row goes to Python as a tuple of typed values under ResultColumns(axis_keys), the
// columns of results.csv in its order: config (int), status (str), the non-plan axes (as
// written, read as YAML scalars: 8 -> int, true -> bool, bf16 -> str), the plan columns
// (int, bool, or the choice's name), the memory bound and budget (float; the bound None
// where the plan is invalid), the summary's deterministic scalars (their C++ types; None
// unless simulated) and message (str). The Python side zips them into dicts or a
// DataFrame; a row comes back (for pareto) as cells parsed by results.csv's own reader.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace meshsim::python {
namespace py = pybind11;

// One row's values, in ResultColumns' order.
py::tuple RowValues(const ResultRow& row);

// (columns, [tuple per row]) for `rows` of `table`, in that order.
py::tuple RowsToPython(const ResultTable& table, const std::vector<size_t>& rows);

// The rows `records` (sequences of values under `columns`, which must be a results.csv's
// columns) as typed rows; bad input names the row and column.
ResultTable RowsFromPython(const std::vector<std::string>& columns, const py::list& records);

}  // namespace meshsim::python
