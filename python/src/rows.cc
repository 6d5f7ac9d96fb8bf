#include "rows.h"

#include <algorithm>

#include "convert.h"
#include "errors.h"

namespace meshsim::python {

py::tuple RowValues(const ResultRow& row) {
  py::list v;
  v.append(py::int_(row.config));
  v.append(py::str(ConfigStatusName(row.status)));
  for (const std::string& axis : row.axes) v.append(ScalarToPython(axis));
  VisitPlanFields(row.plan,
                  [&v](std::string_view, const auto& field) { v.append(ToPython(field)); });
  const MemoryEstimateGib no_estimate;
  double budget = row.budget_gib;
  VisitEstimateFields(row.estimate ? *row.estimate : no_estimate, budget,
                      [&](std::string_view name, const double& field) {
                        const bool shown = row.estimate || name == "budget_gib";
                        v.append(shown ? py::object(py::float_(field)) : py::none());
                      });
  auto summary_field = [&v, &row](std::string_view, const auto& field, FieldKind kind) {
    if (kind != FieldKind::kStep) return;
    v.append(row.summary ? ToPython(field) : py::none());
  };
  const StepSummary none;
  VisitScalarFields(row.summary ? *row.summary : none, summary_field);
  VisitSimFields(row.summary ? *row.summary : none, summary_field);
  v.append(py::str(row.message));
  return py::tuple(v);
}

py::tuple RowsToPython(const ResultTable& table, const std::vector<size_t>& rows) {
  py::list out;
  for (size_t r : rows) out.append(RowValues(table.rows[r]));
  return py::make_tuple(ResultColumns(table.axis_keys), out);
}

ResultTable RowsFromPython(const std::vector<std::string>& columns, const py::list& records) {
  const auto first_plan = std::find(columns.begin(), columns.end(), "plan.tp");
  ResultTable table;
  if (columns.size() > 2 && first_plan != columns.end()) {
    table.axis_keys.assign(columns.begin() + 2, first_plan);
  }
  if (ResultColumns(table.axis_keys) != columns) {
    Raise(ArgumentError("rows", "expected the columns of a sweep's rows (results.csv's), found " +
                                    std::to_string(columns.size()) + " other columns"));
  }
  for (size_t r = 0; r < records.size(); ++r) {
    const py::sequence values = records[r].cast<py::sequence>();
    CsvRecord cells;
    for (size_t c = 0; c < columns.size() && c < values.size(); ++c) {
      cells.push_back(CellText(values[c], columns[c]));
    }
    table.rows.push_back(Unwrap(ParseRow(cells, columns, "row " + std::to_string(r))));
  }
  return table;
}

}  // namespace meshsim::python
