// meshsim explain EXPERIMENT: per-device shapes and the collectives of one step, or with
// --kernels one layer's kernels and their times, as text.
#include <iostream>
#include <memory>

#include "sim/cli/commands.h"
#include "sim/cli/exit_codes.h"
#include "sim/config/loader.h"
#include "sim/engine/shape_params.h"
#include "sim/engine/simulation.h"
#include "sim/plan/mesh.h"
#include "sim/report/explain.h"
#include "sim/report/kernel_table.h"
#include "sim/schedule/step_builder.h"

namespace meshsim::cli {

namespace {

// The kernel table of args.layer and args.micro_batch on each rank of rank 0's pipeline
// that runs ops of it (one for a layer; the first and the last stage for -1). The GPU only:
// no host threads.
int KernelTable(const ExplainArgs& args, const Experiment& e, const Mesh& mesh,
                const Program& program) {
  if (args.layer < -1) return ReportBadOption("--layer", "expected -1 or more");
  if (args.micro_batch < 0) return ReportBadOption("--micro-batch", "expected 0 or more");
  Experiment gpu_only = e;
  gpu_only.cluster.host.launch_us = 0;
  const std::unique_ptr<ComputeModel> model = MakeComputeModel(gpu_only);
  std::unique_ptr<ShapeComputeModel> shapes;
  if (e.cluster.efficiency.kernel_model == KernelModelKind::kShapes) {
    shapes = std::make_unique<ShapeComputeModel>(ExperimentShapeParams(e));
  }
  std::string text;
  for (int rank : mesh.Pipeline(0)) {
    const std::vector<KernelLine> lines =
        LayerKernels(program, *model, shapes.get(), rank, args.layer, args.micro_batch);
    if (lines.empty()) continue;
    text += "layer " + std::to_string(args.layer) + ", micro-batch " +
            std::to_string(args.micro_batch) + ", rank " + std::to_string(rank) + ":\n" +
            KernelTableText(lines);
  }
  if (text.empty()) {
    // The layer's fault unless some rank runs it at micro-batch 0.
    bool layer_runs = false;
    for (int rank : mesh.Pipeline(0)) {
      layer_runs =
          layer_runs || !LayerKernels(program, *model, nullptr, rank, args.layer, 0).empty();
    }
    return ReportBadOption(layer_runs ? "--micro-batch" : "--layer",
                           "no compute op of layer " + std::to_string(args.layer) +
                               " and micro-batch " + std::to_string(args.micro_batch) +
                               " in rank 0's pipeline");
  }
  std::cout << "experiment: " << e.name
            << "\neach op and kernel timed by the kernel model alone on the GPU (no "
               "communication, side-stream or host time)\n"
            << text;
  return kOk;
}

}  // namespace

int Explain(const ExplainArgs& args) {
  const Result<Experiment> loaded = LoadExperimentFile(args.experiment, args.sets);
  if (!loaded.ok()) return ReportError(loaded.error());
  const Experiment& e = loaded.value();
  const Mesh mesh(e.plan);
  const Program program =
      BuildStepProgram(e.model, e.plan, e.training, mesh, mesh.Pipeline(0), HostThreads(e));
  if (args.kernels) return KernelTable(args, e, mesh, program);
  std::cout << ExplainText(e, mesh, program);
  return kOk;
}

}  // namespace meshsim::cli
