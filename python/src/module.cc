// meshsim._meshsim: the compiled half of the Python package. The public API, with its
// docstrings, is meshsim/__init__.py; these are its building blocks (api.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "api.h"
#include "errors.h"
#include "sim/report/step_summary.h"
#include "sim/sweep/result_row.h"

namespace py = pybind11;
using namespace meshsim;
using namespace meshsim::python;

namespace {

void BindExperiment(py::module_& m) {
  py::class_<Experiment>(m, "Experiment", "A resolved experiment (model, cluster, plan).")
      .def_property_readonly("name", [](const Experiment& e) { return e.name; })
      .def_property_readonly("gpus", [](const Experiment& e) { return e.plan.Ranks(); })
      .def_property_readonly("model_name", [](const Experiment& e) { return e.model.name; })
      .def_property_readonly("cluster_name", [](const Experiment& e) { return e.cluster.name; })
      .def_property_readonly("gpu_kind", [](const Experiment& e) { return e.cluster.gpu.kind; })
      .def_property_readonly("plan", &PlanDict);
  m.def("load_experiment_file", &LoadExperimentFromFile, py::arg("path"), py::arg("sets"));
  m.def("load_experiment_text", &LoadExperimentFromText, py::arg("text"), py::arg("path"),
        py::arg("sets"));
}

void BindRun(py::module_& m) {
  py::class_<RunOptions>(m, "RunOptions")
      .def(py::init<>())
      .def_readwrite("trace", &RunOptions::trace)
      .def_readwrite("all_ranks", &RunOptions::all_ranks)
      .def_readwrite("trace_ranks", &RunOptions::trace_ranks)
      .def_readwrite("full_replay", &RunOptions::full_replay)
      .def_readwrite("reproducible", &RunOptions::reproducible);
  m.def("run", &RunExperiment, py::arg("experiment"), py::arg("options"));
}

void BindSweep(py::module_& m) {
  py::class_<Sweep>(m, "Sweep", "A loaded sweep and its configurations.")
      .def_property_readonly("name", [](const Sweep& s) { return s.spec.name; })
      .def_property_readonly("size", [](const Sweep& s) { return s.configs.size(); })
      .def_property_readonly("axis_keys", [](const Sweep& s) { return NonPlanAxisKeys(s.spec); });
  m.def("load_sweep_file", &LoadSweepFromFile, py::arg("path"), py::arg("base_sets"));
  m.def("load_sweep_text", &LoadSweepFromText, py::arg("text"), py::arg("path"),
        py::arg("base_sets"));
  m.def("evaluate_sweep", &EvaluateSweep, py::arg("sweep"), py::arg("threads"));
  m.def("rank_rows", &RankRows, py::arg("columns"), py::arg("records"), py::arg("front"));
  m.def("result_columns", &ResultColumns, py::arg("axis_keys"));
}

void BindPlanner(py::module_& m) {
  py::class_<PlannerOptions>(m, "PlannerOptions")
      .def(py::init<>())
      .def_readwrite("gpus", &PlannerOptions::gpus)
      .def_readwrite("budget_gib", &PlannerOptions::budget_gib)
      .def_readwrite("headroom_gib", &PlannerOptions::headroom_gib)
      .def_readwrite("global_batch", &PlannerOptions::global_batch)
      .def_readwrite("micro_batch", &PlannerOptions::micro_batch)
      .def_readwrite("jax", &PlannerOptions::jax);
  m.def("plan", &RunPlan, py::arg("model"), py::arg("model_is_yaml"), py::arg("cluster"),
        py::arg("options"), py::arg("sets"), py::arg("threads"), py::arg("include_invalid"));
}

}  // namespace

PYBIND11_MODULE(_meshsim, m) {
  m.doc() = "meshsim's C++ library; use the meshsim package's functions.";
  m.attr("version") = kMeshsimVersion;
  RegisterErrors();
  BindExperiment(m);
  BindRun(m);
  BindSweep(m);
  BindPlanner(m);
  m.def("import_hf", &ImportHf, py::arg("json_text"), py::arg("source"), py::arg("name"),
        py::arg("seq_len"));
  m.def("parse_yaml", &ParseYaml, py::arg("text"));
}
